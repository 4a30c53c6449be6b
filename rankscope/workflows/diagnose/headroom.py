"""Headroom in metric points: the value now, with a perfect reranker over the top D, and the ideal.

Three runs are scored by the same :func:`rankscope.evaluation.evaluate`, so the
metric definitions have one source:

- *actual*: the run's top D (tie rule: score descending, doc_id descending);
- *oracle*: the same top D reordered by relevance grade (unjudged documents count
  as grade 0; equal grades keep the run's order), what a perfect reranker over the
  candidates would return: oracle - actual is the *ranking headroom*;
- *ideal*: every relevant document, by grade: ideal - oracle is the *recall
  headroom*, which only a better first stage can win.

Only measures of a ranking have headroom: set measures over the whole retrieved
list (``precision``, ``recall``, ``f1`` without ``@k``) and score thresholds do not
change when the list is reordered, so they are refused, as is a cutoff beyond D
(it would look past the candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED

SET_FAMILIES = ("precision", "recall", "f1")
RANKED_FAMILIES = (*SET_FAMILIES, "hit", "mrr", "map", "ndcg", "ndcg_exp", "rprec", "bpref")
"""Measures of how relevant documents are ranked, which a reordering by grade maximises; any other
family (say one counting judged documents) is refused rather than given a meaningless oracle."""


def default_metrics(depth: int) -> tuple[str, ...]:
    """nDCG, MRR and Recall at 10 (at the depth when it is below 10), and MAP over the top D."""
    k = min(10, depth)
    return (f"ndcg@{k}", f"mrr@{k}", f"recall@{k}", "map")


def check_metrics(metrics: Sequence[str], depth: int) -> list[str]:
    """The metrics' names as :func:`~rankscope.evaluation.evaluate` labels them, refused (with the reason)
    when reordering cannot change them or they look past ``depth``."""
    from rankscope.evaluation.metrics import parse_metric

    if not list(metrics):
        raise RankscopeError("no metrics given")
    names = []
    for name in metrics:
        metric = parse_metric(name)
        if metric.family not in RANKED_FAMILIES:
            raise RankscopeError(
                f"metric {name!r} does not measure how relevant documents are ranked, so it has no headroom; "
                f"use one of {', '.join(RANKED_FAMILIES)}"
            )
        if metric.threshold is not None or (metric.k is None and metric.family in SET_FAMILIES):
            raise RankscopeError(
                f"metric {name!r} scores the retrieved set, not its order, so it has no ranking headroom; "
                f"use a cutoff, e.g. {metric.family}@10"
            )
        if metric.k is not None and metric.k > depth:
            raise RankscopeError(
                f"metric {name!r} looks beyond the depth {depth}; raise --depth to at least {metric.k} or lower the K"
            )
        names.append(metric.name)  # the name evaluate labels its results with
    return names


def top_of_run(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The run's top ``depth`` documents per query in tie-rule order, ranks recomputed."""
    ordered = sort_run(validate(run, "run", "run"))
    return ordered.loc[ordered["rank"] <= depth].reset_index(drop=True)


def oracle_run(run: pd.DataFrame, qrels: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The top ``depth`` of ``run`` reordered by relevance grade: a perfect reranker over the same candidates."""
    return _reordered(top_of_run(run, depth), qrels)


def _reordered(top: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """:func:`oracle_run` of a run's top (:func:`top_of_run`)."""
    grades = validate(qrels, "qrels", "qrels")
    grade = top.merge(grades, on=["query_id", "doc_id"], how="left")["relevance"].fillna(0).to_numpy()
    order = np.lexsort((top["rank"].to_numpy(), -grade, pd.factorize(top["query_id"])[0]))
    return _ranked(top["query_id"].to_numpy()[order], top["doc_id"].to_numpy()[order])


def ideal_run(qrels: pd.DataFrame, relevance_level: int = 1) -> pd.DataFrame:
    """Every relevant document of every query, highest grade first (ties by doc_id, which no metric sees)."""
    grades = validate(qrels, "qrels", "qrels")
    relevant = grades.loc[grades["relevance"] >= relevance_level]
    relevant = relevant.sort_values(["query_id", "relevance", "doc_id"], ascending=[True, False, True])
    return _ranked(relevant["query_id"].to_numpy(), relevant["doc_id"].to_numpy())


def _ranked(query_ids: np.ndarray, doc_ids: np.ndarray) -> pd.DataFrame:
    """A run listing the documents in the given order within each (contiguous) query: strictly falling scores."""
    codes = pd.factorize(query_ids)[0]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.empty(0, dtype=np.int64)
    rank = np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)])) + 1
    return pd.DataFrame({"query_id": query_ids, "doc_id": doc_ids, "score": -rank.astype(np.float64), "rank": rank})


@dataclass(frozen=True)
class Headroom:
    """``per_query``: long frame ``query_id, metric, actual, oracle, ideal``; ``summary``: means per metric."""

    per_query: pd.DataFrame
    summary: pd.DataFrame

    def lost(self, metric: str) -> pd.DataFrame:
        """Per query, the points of ``metric`` lost to ranking (oracle - actual) and to recall (ideal - oracle)."""
        rows = self.per_query.loc[self.per_query["metric"] == metric].set_index("query_id")
        return pd.DataFrame(
            {
                "actual": rows["actual"],
                "oracle": rows["oracle"],
                "ideal": rows["ideal"],
                "lost": rows["ideal"] - rows["actual"],
                "ranking_lost": rows["oracle"] - rows["actual"],
                "recall_lost": rows["ideal"] - rows["oracle"],
            }
        )


def headroom(
    qrels: pd.DataFrame, run: pd.DataFrame, metrics: Sequence[str], depth: int, *, ideal: pd.Series | None = None
) -> Headroom:
    """Actual, oracle and ideal values of each metric over the judged queries (see the module doc); ``ideal``:
    :func:`ideal_values` of the same qrels and metrics, when another run's headroom computed them already."""
    names = check_metrics(metrics, depth)
    top = top_of_run(run, depth)
    values = {
        "actual": _values(qrels, top, names),
        "oracle": _values(qrels, _reordered(top, qrels), names),
        "ideal": ideal_values(qrels, names) if ideal is None else ideal,
    }
    per_query = pd.DataFrame(values).reset_index()
    summary = per_query.groupby("metric", sort=False)[list(values)].mean()
    summary["ranking_headroom"] = summary["oracle"] - summary["actual"]
    summary["recall_headroom"] = summary["ideal"] - summary["oracle"]
    return Headroom(per_query, summary)


def ideal_values(qrels: pd.DataFrame, metrics: Sequence[str]) -> pd.Series:
    """Each judged query's ideal value of each metric (index ``query_id, metric``): the same for every run."""
    return _values(qrels, ideal_run(qrels), metrics)


def _values(qrels: pd.DataFrame, run: pd.DataFrame, metrics: Sequence[str]) -> pd.Series:
    from rankscope.evaluation import evaluate

    return evaluate(qrels, run, metrics, exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED).per_query.set_index(
        ["query_id", "metric"]
    )["value"]
