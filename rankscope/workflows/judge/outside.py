"""``rankscope judge --outside-pool K``: how many relevant documents nobody judged, by a judged sample outside them.

Every pair the dataset's qrels or the pool's judge labelled is judged; per query, ``K`` of the other
documents are drawn in strata by the first system's ranks (:mod:`rankscope.evaluation.outside_pool`:
ranks 1-100, 101-1000, the rest of the corpus), the judge labels them through the same cache, and
:func:`rankscope.evaluation.recall_estimate.estimate_recall` gives each query's R and each system's
Recall@100 with intervals (docs/recall.md). A pair the judge could not label (invalid or failed) counts
as not drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rankscope.corpora.dataset import Dataset
from rankscope.evaluation.outside_pool import DEFAULT_CUTS, draw_outside, outside_strata
from rankscope.evaluation.recall_estimate import RecallEstimate, estimate_recall
from rankscope.judging.base import OK, Judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.pairs import judge_pairs
from rankscope.reporting.tables import text_table, wrap_paragraph
from rankscope.workflows.judge.pool import pairs_to_judge

CUTOFF = 100
"""The Recall@K reported."""

DEPTH = DEFAULT_CUTS[-1]
"""How deep the first system ranks for the strata (its last cut)."""

CAPTION = (
    "R = relevant documents per query: judged ones plus the Horvitz-Thompson estimate of those outside "
    "everything judged, from the judge's labels on a sample drawn there; 95% intervals (docs/recall.md). "
    "mean = of the per-query values: its interval is too narrow with a few dozen labels a query (it held "
    "the truth in 15-50% of Cranfield's simulations); pooled = relevant documents found over relevant "
    "documents, summed over the queries: its interval held it in 92-98%"
)


@dataclass(frozen=True)
class Outside:
    """The sample (``query_id, doc_id, stratum, inclusion_probability, relevance``: the judge's label,
    NA where it gave none; a relevant one is a document the pool and the qrels missed) and the estimate
    (:class:`~rankscope.evaluation.recall_estimate.RecallEstimate`)."""

    pairs: int
    sample: pd.DataFrame
    estimate: RecallEstimate

    @property
    def drawn(self) -> int:
        return len(self.sample)

    @property
    def labelled(self) -> int:
        return int(self.sample["relevance"].notna().sum())

    def table(self) -> pd.DataFrame:
        """Per system and metric: the mean and pooled value over queries, with intervals."""
        return self.estimate.summary

    def to_text(self) -> str:
        queries = self.estimate.queries
        r = f"R over {len(queries)} queries: judged {queries['judged_relevant'].sum()}, estimated {queries['r_hat'].sum():.1f}"
        share = (queries["r_hat"] - queries["judged_relevant"]).sum() / max(queries["r_hat"].sum(), 1e-12)
        return "\n".join(
            [
                f"outside the judged pairs: {self.drawn} drawn ({self.pairs} a query), {self.labelled} labelled; "
                f"{r} ({share:.1%} outside everything judged)",
                text_table(self.table(), index=False),
                wrap_paragraph(CAPTION),
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs_per_query": self.pairs,
            "drawn": self.drawn,
            "labelled": self.labelled,
            "summary": self.estimate.summary.to_dict("records"),
        }


def outside_pool(
    data: Dataset,
    runs: Mapping[str, pd.DataFrame],
    judged: pd.DataFrame,
    judge: Judge,
    cache: JudgmentCache,
    pairs: int,
    seed: int,
) -> Outside:
    """Draw ``pairs`` unjudged documents per query of ``judged`` (that has a text), judge them, estimate."""
    judged = judged[judged["query_id"].isin(data.queries["query_id"])]
    strata = outside_strata(judged, next(iter(runs.values())), data.corpus["doc_id"])
    sample = draw_outside(strata, pairs=pairs, seed=seed)
    outcome = judge_pairs(judge, pairs_to_judge(sample.pairs, data), cache)
    given = [judgment.label if judgment.status == OK else None for judgment in outcome.judgments]
    drawn = sample.pairs.assign(relevance=pd.array(given, dtype="Int64"))
    labels = drawn[drawn["relevance"].notna()].astype({"relevance": "int64"})
    return Outside(pairs, drawn, estimate_recall(sample, judged, labels, runs, cutoffs=(CUTOFF,), seed=seed))
