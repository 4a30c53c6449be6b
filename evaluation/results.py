"""What :func:`evaluation.evaluate` returns: per-query values, their means, and how they were counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rankscope.corpora.schema import as_strings, natural_order


@dataclass(frozen=True)
class EvaluationResult:
    """Per-query values (long form ``query_id, metric, value``) and their means.

    ``mean`` keeps the requested metric order. ``n_unjudged`` counts the evaluated
    queries with no relevant judgment (they score 0 unless ``exclude_unjudged`` was
    set, in which case they are left out of both ``per_query`` and ``mean``).
    """

    per_query: pd.DataFrame
    mean: dict[str, float]
    n_unjudged: int

    @classmethod
    def from_matrix(
        cls, query_ids: np.ndarray, metrics: tuple[str, ...], values: np.ndarray, n_unjudged: int
    ) -> EvaluationResult:
        """Build from a (query x metric) matrix; rows are ordered by query (natural order: 2 before 10),
        then metric. Means are taken before the reordering, so they do not depend on it."""
        n_q, n_m = values.shape
        means = values.mean(axis=0) if n_q else np.full(n_m, np.nan)
        order = natural_order(query_ids)
        query_ids, values = np.asarray(query_ids, dtype=object)[order], values[order]
        long = pd.DataFrame(
            {
                "query_id": as_strings(np.repeat(np.asarray(query_ids, dtype=object), n_m)),
                "metric": as_strings(np.tile(np.asarray(metrics, dtype=object), n_q)),
                "value": values.reshape(-1).astype(np.float64),
            }
        )
        return cls(long, {m: float(v) for m, v in zip(metrics, means)}, int(n_unjudged))

    def __repr__(self) -> str:
        """One line: the means and the counts, not the per-query table (a notebook cell, a log line)."""
        means = ", ".join(f"{metric} {value:.4f}" for metric, value in self.mean.items())
        return f"EvaluationResult({self.n_queries} queries, {self.n_unjudged} without relevant judgments: {means})"

    @property
    def metrics(self) -> list[str]:
        return list(self.mean)

    @property
    def n_queries(self) -> int:
        """Queries that count in the means."""
        return int(self.per_query["query_id"].nunique())

    def wide(self) -> pd.DataFrame:
        """One row per query (index ``query_id``), one column per metric in request order."""
        return wide_table(self.per_query, self.metrics)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """JSON-ready: ``{"mean": {...}, "n_queries": n, "n_unjudged": n}`` plus ``per_query`` if asked."""
        out: dict[str, Any] = {"mean": dict(self.mean), "n_queries": self.n_queries, "n_unjudged": self.n_unjudged}
        if per_query:
            wide = self.wide()
            out["per_query"] = {
                str(qid): dict(zip(self.metrics, map(float, row))) for qid, row in zip(wide.index, wide.to_numpy())
            }
        return out


def wide_table(long: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Long ``query_id, metric, value`` rows as one row per query, in the order the queries first
    appear (pivot alone would sort them), and one column per metric in ``metrics`` order."""
    table = long.pivot(index="query_id", columns="metric", values="value")
    return table.reindex(index=pd.unique(long["query_id"]), columns=list(metrics))
