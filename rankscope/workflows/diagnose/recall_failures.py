"""Why recall failed: for each relevant document not within the depth, vocabulary mismatch or outscored.

A recall loss calls for one of two fixes, and the query's terms tell them apart.
The query and the missed document are analysed as the retriever analyses them
(its own :class:`~rankscope.retrieval.analysis.Analyzer` when it has one, else
the default analyzer), and the query's distinct terms found in the document are
counted:

- *vocabulary mismatch*: the document holds fewer than :data:`MISMATCH_SHARE` of
  the query's terms (often none): a term-matching retriever can barely score it;
  query expansion or dense retrieval helps;
- *outscored*: the document shares terms with the query but was not ranked within
  the top D: term weighting, length normalisation or tuning helps;
- *not in the corpus*: the judgment names a document the corpus lacks; no
  retriever can find it.

With a second system, each loss also gets its rank there (NaN = not within its
top D either): the losses it recovers are the case for fusing the two.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rankscope.retrieval.analysis import Analyzer
from rankscope.workflows.diagnose.analysed import Analysed

MISMATCH_SHARE = 0.25
"""A recall loss sharing fewer than this share of the query's distinct terms is a vocabulary mismatch."""
MISMATCH = "vocabulary mismatch"
OUTSCORED = "outscored"
NOT_IN_CORPUS = "not in the corpus"
REASONS = (MISMATCH, OUTSCORED, NOT_IN_CORPUS)


def analyzer_of(retriever: object | None) -> Analyzer:
    """The analyzer a fitted retriever used (its ``analyzer_``), else the default :class:`Analyzer`."""
    analyzer = getattr(retriever, "analyzer_", None)
    return analyzer if isinstance(analyzer, Analyzer) else Analyzer()


def recall_failures(
    ranks: pd.DataFrame,
    queries: pd.DataFrame,
    corpus: pd.DataFrame,
    analyzer: Analyzer,
    others: Mapping[str, pd.DataFrame] | None = None,
    *,
    analysed: Analysed | None = None,
) -> pd.DataFrame:
    """One row per recall loss of ``ranks`` (:func:`rankscope.workflows.diagnose.misses.relevant_ranks` output).

    Columns ``query_id, doc_id, relevance, query_terms, shared_terms, shared_share, reason``
    and, for each of ``others`` (name -> that system's relevant_ranks at the same depth),
    ``rank_<name>``: where it ranks the document (NaN = not within its depth either). ``analysed``: the
    texts' terms kept from another system's diagnosis (analysed here when not given).
    """
    losses = ranks.loc[ranks["rank"].isna(), ["query_id", "doc_id", "relevance"]].reset_index(drop=True)
    analysed = analysed or Analysed(corpus, queries)
    query_terms = analysed.query_terms(losses["query_id"], analyzer)
    doc_terms = analysed.document_terms(losses["doc_id"], analyzer)
    n_terms = np.array([len(query_terms[q]) for q in losses["query_id"]], dtype=np.int64)
    shared = np.array(
        [len(query_terms[q] & doc_terms.get(d, set())) for q, d in zip(losses["query_id"], losses["doc_id"])],
        dtype=np.int64,
    )
    share = np.divide(shared, n_terms, out=np.zeros(len(shared)), where=n_terms > 0)
    in_corpus = losses["doc_id"].isin(doc_terms).to_numpy()
    reason = np.where(~in_corpus, NOT_IN_CORPUS, np.where(share < MISMATCH_SHARE, MISMATCH, OUTSCORED))
    table = losses.assign(query_terms=n_terms, shared_terms=shared, shared_share=share, reason=reason)
    for name, other in (others or {}).items():
        found = other[["query_id", "doc_id", "rank"]].rename(columns={"rank": f"rank_{name}"})
        table = table.merge(found, on=["query_id", "doc_id"], how="left")
    return table


def failure_summary(failures: pd.DataFrame) -> pd.DataFrame:
    """Recall losses per reason (index: reason, in :data:`REASONS` order) with their share of all losses,
    how many share no query term at all and, per other system (``rank_<name>`` columns), how many of them it retrieves within its depth."""
    counts = failures.groupby("reason").size().reindex(list(REASONS), fill_value=0)
    none = (failures["shared_terms"] == 0).groupby(failures["reason"]).sum().reindex(list(REASONS), fill_value=0)
    summary = pd.DataFrame(
        {"losses": counts, "share": counts / max(len(failures), 1), "no_shared_term": none.astype(np.int64)}
    )
    for column in [c for c in failures.columns if c.startswith("rank_")]:
        recovered = failures[column].notna().groupby(failures["reason"]).sum()
        summary[f"recovered_by_{column[len('rank_') :]}"] = recovered.reindex(summary.index, fill_value=0).astype(
            np.int64
        )
    summary.index.name = "reason"
    return summary
