"""``evaluate``'s queries in partitions, each scored as a task on a Dask cluster: the same numbers, bit for bit.

A built-in metric's value for a query depends only on that query's ranking and judgments, and the
evaluated queries are numbered in one order (:func:`~rankscope.evaluation.ranking.evaluated_queries`).
So that order is cut into contiguous partitions; a task judges and scores one partition's rows of
the qrels and of the run (:func:`~rankscope.evaluation.engine.score_queries`, what one process
runs on all of them). Stacked in partition order, the values are one process's rows in one
process's order, so the means taken over them are the same floats, whatever the number of
partitions or workers. Run rows of queries that are not evaluated never travel (one process drops
them too). Each task's inputs are in the task graph, so a lost worker's partition is scored again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.scheduler import worker_count
from rankscope.evaluation.engine import Columns, score_queries
from rankscope.evaluation.metrics import Metric
from rankscope.evaluation.ranking import evaluated_queries


def partitioned_scores(
    columns: Columns,
    metrics: Sequence[Metric],
    *,
    relevance_level: int,
    judged_only: bool,
    client: Any,
    partitions: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~rankscope.evaluation.engine.score_queries` on ``client``'s cluster, in ``partitions``
    (default: one per worker) that change where the work runs, never a number.

    A measure added with :func:`~rankscope.evaluation.metrics.define` exists in this process only,
    not on the workers: it is refused in one line.
    """
    refuse_defined(metrics)
    query_ids = evaluated_queries(columns.qrels_query, pd.unique(columns.run_query), judged_only)
    cuts = np.array_split(np.arange(len(query_ids)), min(partitions or worker_count(client), len(query_ids)))
    part_of = np.repeat(np.arange(len(cuts)), [len(cut) for cut in cuts])
    index = pd.Index(query_ids)
    qrels_part = _partition_of(index.get_indexer(columns.qrels_query), part_of)
    run_part = _partition_of(index.get_indexer(columns.run_query), part_of)
    options = {"relevance_level": relevance_level, "judged_only": judged_only}
    futures = []
    for part in range(len(cuts)):
        q, r = qrels_part == part, run_part == part
        inputs = Columns(*(column[q] for column in columns[:3]), *(column[r] for column in columns[3:]))
        futures.append(client.submit(score_queries, inputs, metrics, pure=False, **options))
    scored = client.gather(futures)
    return tuple(np.concatenate([part[i] for part in scored]) for i in range(3))  # type: ignore[return-value]


def refuse_defined(metrics: Sequence[Metric]) -> None:
    """A measure added with :func:`~rankscope.evaluation.metrics.define` cannot run on a scheduler's workers."""
    defined = [metric.name for metric in metrics if not metric.built_in]
    if defined:
        raise RankscopeError(
            f"metric {defined[0]!r} was defined in this process (define), so the scheduler's workers do not "
            "know it; evaluate it without a scheduler"
        )


def _partition_of(codes: np.ndarray, part_of: np.ndarray) -> np.ndarray:
    """Each row's partition from its query's number (-1: a query that is not evaluated)."""
    return np.where(codes >= 0, part_of[np.maximum(codes, 0)], -1)
