"""Put a run in trec_eval's order and attach the judgments, for all queries at once.

Every metric in rankscope depends only on where the *judged* documents sit in each
ranking, plus a few per-query counts. So this module does the expensive part once,
vectorised over the whole run (ids factorised once, one sort, no per-query Python
loop) and hands the metrics a compact :class:`Judged` table:

- the rank of every retrieved document that has a judgment for its query;
- per query: documents retrieved, relevant, judged non-relevant, and the ideal
  ordering of the graded labels (for nDCG).

Ordering is trec_eval's: score descending, ties by doc_id descending in byte order
(Python compares ``str`` by code point, which is the UTF-8 byte order); the run's
``rank`` column is ignored. Scores are compared as float64 (trec_eval 9.0.8 reads
them into a float32 first, so runs whose scores differ only beyond float32
precision can tie there and not here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.errors import RankscopeError, SchemaError


@dataclass(frozen=True)
class Judged:
    """What the metrics read: judged retrieved documents in rank order, and per-query counts.

    Queries are numbered ``0..n_queries-1`` in the order of :attr:`query_ids`. Rows of
    ``q``/``pos``/``label``/``score`` are the retrieved documents that have a judgment
    for their query, sorted by query then rank (``pos`` is the 0-based rank).
    """

    query_ids: np.ndarray
    relevance_level: int
    num_ret: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    q: np.ndarray
    pos: np.ndarray
    label: np.ndarray
    score: np.ndarray
    ideal_q: np.ndarray
    ideal_pos: np.ndarray
    ideal_label: np.ndarray
    run_q: np.ndarray
    run_score: np.ndarray

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def relevant(self) -> np.ndarray:
        """Mask of judged rows whose label reaches the relevance level."""
        return self.label >= self.relevance_level

    def per_query_sum(self, weights: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` (bool or float, one per judged row unless ``q`` given) per query."""
        codes = self.q if q is None else q
        return np.bincount(codes, weights=weights.astype(np.float64), minlength=self.n_queries)


def judge_run(
    qrels_query: np.ndarray,
    qrels_doc: np.ndarray,
    qrels_label: np.ndarray,
    run_query: np.ndarray,
    run_doc: np.ndarray,
    run_score: np.ndarray,
    *,
    relevance_level: int,
    judged_only: bool,
) -> Judged:
    """Rank the run per query (trec_eval order) and join it with the qrels.

    Queries evaluated are those of the qrels (trec_eval ``-c``), or only those also
    in the run when ``judged_only``. Run-only queries are dropped. Inputs are
    1-d arrays (ids as ``str`` objects) and are not modified.
    """
    query_ids = np.unique(qrels_query)  # sorted: code point order == UTF-8 byte order
    run_codes, run_uniques = _factorize(run_query)
    if judged_only:
        query_ids = query_ids[pd.Index(query_ids).isin(run_uniques)]
        if len(query_ids) == 0:
            raise RankscopeError("judged_only: no query appears in both the qrels and the run")
    qmap = pd.Index(query_ids).get_indexer(run_uniques)
    row_q = qmap[run_codes]
    keep = row_q >= 0
    if not keep.all():  # run-only queries are ignored, as trec_eval does
        row_q, run_doc, run_score = row_q[keep], run_doc[keep], run_score[keep]

    doc_codes, doc_uniques = _factorize(np.concatenate([run_doc, qrels_doc]))
    n_docs = len(doc_uniques)
    run_dc, qrels_dc = doc_codes[: len(run_doc)], doc_codes[len(run_doc) :]

    # sort: query ascending, score descending, doc_id descending
    doc_rank = np.empty(n_docs, dtype=np.int64)
    doc_rank[np.argsort(doc_uniques, kind="stable")] = np.arange(n_docs)
    order = np.lexsort((-doc_rank[run_dc], -run_score, row_q))
    row_q, run_dc, run_score = row_q[order], run_dc[order], run_score[order]
    run_key = row_q * np.int64(n_docs) + run_dc
    _refuse_duplicates("run lists", run_key, row_q, run_dc, query_ids, doc_uniques)

    n_queries = len(query_ids)
    num_ret = np.bincount(row_q, minlength=n_queries)
    starts = np.concatenate([[0], np.cumsum(num_ret)[:-1]])
    pos = np.arange(len(row_q), dtype=np.int64) - starts[row_q]

    # qrels restricted to evaluated queries; keys sorted for the join
    qrels_q = pd.Index(query_ids).get_indexer(qrels_query)
    in_eval = qrels_q >= 0
    qrels_q, qrels_dc, qrels_label = qrels_q[in_eval], qrels_dc[in_eval], qrels_label[in_eval]
    qrels_key = qrels_q * np.int64(n_docs) + qrels_dc
    _refuse_duplicates("qrels judge", qrels_key, qrels_q, qrels_dc, query_ids, doc_uniques)
    by_key = np.argsort(qrels_key, kind="stable")
    sorted_keys = qrels_key[by_key]
    at = np.searchsorted(sorted_keys, run_key)
    at_clipped = np.minimum(at, max(len(sorted_keys) - 1, 0))
    found = (at < len(sorted_keys)) & (sorted_keys[at_clipped] == run_key) if len(sorted_keys) else np.zeros(len(run_key), bool)
    label = qrels_label[by_key][at_clipped[found]]

    # trec_eval counts judgments with label >= 0 only; negative labels are "in pool but unjudged"
    num_rel = np.bincount(qrels_q[qrels_label >= relevance_level], minlength=n_queries)
    nonrel = (qrels_label >= 0) & (qrels_label < relevance_level)
    num_nonrel = np.bincount(qrels_q[nonrel], minlength=n_queries)

    positive = qrels_label > 0
    ideal_q, ideal_label = qrels_q[positive], qrels_label[positive]
    ideal_order = np.lexsort((-ideal_label, ideal_q))
    ideal_q, ideal_label = ideal_q[ideal_order], ideal_label[ideal_order]
    ideal_counts = np.bincount(ideal_q, minlength=n_queries)
    ideal_starts = np.concatenate([[0], np.cumsum(ideal_counts)[:-1]])
    ideal_pos = np.arange(len(ideal_q), dtype=np.int64) - ideal_starts[ideal_q]

    return Judged(
        query_ids=query_ids,
        relevance_level=relevance_level,
        num_ret=num_ret,
        num_rel=num_rel,
        num_nonrel=num_nonrel,
        q=row_q[found],
        pos=pos[found],
        label=label,
        score=run_score[found],
        ideal_q=ideal_q,
        ideal_pos=ideal_pos,
        ideal_label=ideal_label,
        run_q=row_q,
        run_score=run_score,
    )


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


def _refuse_duplicates(
    what: str, keys: np.ndarray, q: np.ndarray, dc: np.ndarray, query_ids: np.ndarray, doc_uniques: np.ndarray
) -> None:
    """trec_eval refuses a run or qrels naming one document twice for a query; so do we."""
    dup = pd.Index(keys).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise SchemaError(f"{what} document {doc_uniques[dc[i]]!r} more than once for query {query_ids[q[i]]!r}")
