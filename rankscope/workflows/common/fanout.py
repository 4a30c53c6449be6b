"""Work as tasks: ``tune``'s grid points and ``compare``'s systems, in this process or on a Dask cluster.

:func:`score_points` is the one computation (index once, then for each point ``set_params`` and
score every query); :func:`grid_scores` runs it in this process, or splits the points into one
chunk per worker, each a task that indexes its own copy and scores its points. A point's scores
depend only on its parameters (weights are re-derived from the same counts), so the columns are the
same floats wherever and in whatever chunks they were computed; a lost worker's chunk is computed again.
:func:`run_tasks` runs any list of calls as tasks the same way: ``compare``'s runs (:func:`produce_runs`)
and ``rag``'s chunking x retriever systems.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from rankscope.core.forked import forked_map, pool_size
from rankscope.core.phases import phase
from rankscope.corpora.schema import validate
from rankscope.corpora.trec import CodedTable, coded_table
from rankscope.workflows.common.systems import System, SystemRun, produce_run

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset

T = TypeVar("T")


class Tunable(Protocol):
    """What a grid point is scored with: a Retriever, or a framework retriever's
    :class:`~rankscope.workflows.tune.framework_params.FrameworkParams`."""

    def index(self, corpus: pd.DataFrame) -> Any: ...
    def search(self, queries: pd.DataFrame, k: int = ...) -> pd.DataFrame: ...
    def set_params(self, **params: Any) -> Any: ...


Point = Mapping[str, object] | None
"""Parameters to set, or None for the retriever's defaults."""


@dataclasses.dataclass(frozen=True)
class Timing:
    """Seconds spent: indexing (once per process that scored points: a task indexes its own copy) and
    each grid point (``set_params``, which re-weights the stored counts, then searching and scoring every query)."""

    index_s: tuple[float, ...]
    point_s: tuple[float, ...]

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.index_s + other.index_s, self.point_s + other.point_s)

    def to_dict(self) -> dict[str, object]:
        points = np.asarray(self.point_s)
        per_point = {"mean": points.mean(), "min": points.min(), "max": points.max()} if len(points) else {}
        return {"index_seconds": list(self.index_s), "grid_points": len(points), "grid_point_seconds": per_point}

    def line(self) -> str:
        """``time: indexing 12.3 s, a grid point 0.84 s (min 0.80, max 0.91; ...)``, printed under the result."""
        index = " + ".join(f"{s:.1f}" for s in self.index_s)
        tasks = f" ({len(self.index_s)} tasks, each indexing its own copy)" if len(self.index_s) > 1 else ""
        text = f"time: indexing {index} s{tasks}"
        if self.point_s:
            points = np.asarray(self.point_s)
            text += (
                f", a grid point {points.mean():.2f} s on average (min {points.min():.2f}, max {points.max():.2f}; "
                f"set_params, then search and score every query; {len(points)} points)"
            )
        return text


def score_points(
    system: Tunable,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    qrels: pd.DataFrame,
    metric: str,
    depth: int,
    points: Sequence[Point],
    tick: Callable[[], object] | None = None,
) -> tuple[list[pd.Series], Timing]:
    """Index ``system`` (modified in place) and, for each point, its per-query ``metric`` at ``depth``;
    the seconds spent (the points' only for those that set parameters, not the defaults)."""
    qrels = coded_qrels(qrels)  # checked and coded once, not at every point
    started = time.perf_counter()
    with phase("index"):
        system.index(corpus)
    index_s = time.perf_counter() - started
    scored, seconds = [], []
    for point in points:
        started = time.perf_counter()
        if point is not None:
            with phase("index"):  # re-weighting the stored counts
                system.set_params(**point)
        scored.append(per_query_score(system, queries, qrels, metric, depth))
        if point is not None:
            seconds.append(time.perf_counter() - started)
            if tick is not None:
                tick()
    return scored, Timing((index_s,), tuple(seconds))


def per_query_score(
    system: Tunable, queries: pd.DataFrame, qrels: pd.DataFrame | CodedTable, metric: str, depth: int
) -> pd.Series:
    """The indexed ``system``'s per-query ``metric`` (index ``query_id``), searching every query to
    ``depth``. A retriever with ``search_coded`` (BM25, TF-IDF) hands evaluation its run as integer
    codes: the same numbers without a table of ids per grid point."""
    from rankscope.evaluation import evaluate

    search = getattr(system, "search_coded", system.search)
    with phase("search"):
        run = search(queries, k=depth)
    rows = evaluate(qrels, run, [metric]).per_query  # one metric: one row per query, in the wide order
    return pd.Series(rows["value"].to_numpy(), index=pd.Index(rows["query_id"], name="query_id"), name=metric)


def coded_qrels(qrels: pd.DataFrame | CodedTable) -> CodedTable:
    """The qrels checked and coded once, for scoring many runs against them."""
    if isinstance(qrels, CodedTable):
        return qrels
    return coded_table(validate(qrels, "qrels", "qrels"), "qrels")


def grid_scores(
    system: Tunable,
    data: Any,
    metric: str,
    depth: int,
    points: Sequence[Mapping[str, object]],
    client: Any = None,
    tick: Callable[[], object] | None = None,
    workers: int = 1,
) -> tuple[pd.Series, list[pd.Series], Timing]:
    """The per-query scores at the defaults and at each point, and the time taken: on ``client``'s
    cluster when given, else in this process (``workers`` 1) or on that many forked ones (:func:`_forked_scores`)."""
    everything: list[Point] = [None, *points]
    inputs = (data.corpus, data.queries, data.qrels, metric, depth)
    if client is None and len(points) > 1 and pool_size(workers) > 1:
        return _forked_scores(system, inputs, points, workers, tick)
    if client is None:
        (at_defaults, *scored), timing = score_points(system, *inputs, everything, tick)
        return at_defaults, scored, timing
    from rankscope.core.scheduler import worker_count

    chunks = [list(c) for c in np.array_split(np.arange(len(everything)), min(worker_count(client), len(everything)))]
    futures = [client.submit(score_points, system, *inputs, [everything[i] for i in chunk]) for chunk in chunks]
    found: list[pd.Series] = []
    timing = Timing((), ())
    for chunk, future in zip(chunks, futures):
        scores, spent = future.result()
        found += scores
        timing += spent
        for _ in range(sum(i > 0 for i in chunk)):
            if tick is not None:
                tick()
    return found[0], found[1:], timing


CHUNKS_PER_WORKER = 8
"""Pieces of the grid per forked worker: small enough that the two finish together and the bar moves,
large enough that sending a piece costs nothing next to scoring it."""

_held: tuple[Any, ...] = ()
"""What a forked worker scores points with (set by :func:`_hold` when it starts, inherited, not sent)."""


def _hold(system: Tunable, queries: pd.DataFrame, qrels: CodedTable, metric: str, depth: int) -> None:
    global _held
    from rankscope.core.progress import set_quiet

    set_quiet(True)  # the parent's bar counts the points; a worker's search bars would only cross it
    _held = (system, queries, qrels, metric, depth)


def _score_piece(points: Sequence[Mapping[str, object]]) -> tuple[list[pd.Series], tuple[float, ...]]:
    """A forked worker's part: each point set on its copy of the indexed system, then scored."""
    system, queries, qrels, metric, depth = _held
    scored, seconds = [], []
    for point in points:
        started = time.perf_counter()
        system.set_params(**point)
        scored.append(per_query_score(system, queries, qrels, metric, depth))
        seconds.append(time.perf_counter() - started)
    return scored, tuple(seconds)


def _forked_scores(
    system: Tunable,
    inputs: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, str, int],
    points: Sequence[Mapping[str, object]],
    workers: int,
    tick: Callable[[], object] | None,
) -> tuple[pd.Series, list[pd.Series], Timing]:
    """The system indexed (and scored at its defaults) here once, then the points scored in pieces on
    ``workers`` processes forked from this one, each holding the index without copying it. A point's
    scores depend only on its parameters (the weights are re-derived from the same counts), so they are
    the same floats as in one process; the pieces come back in grid order."""
    corpus, queries, table, metric, depth = inputs
    qrels = coded_qrels(table)
    (at_defaults,), timing = score_points(system, corpus, queries, qrels, metric, depth, [None])
    size = max(1, -(-len(points) // (workers * CHUNKS_PER_WORKER)))
    pieces = [points[start : start + size] for start in range(0, len(points), size)]
    held = (system, queries, qrels, metric, depth)
    scored: list[pd.Series] = []
    seconds: list[float] = []
    for found, spent in forked_map(workers, _hold, held, _score_piece, pieces, "scoring the grid's points"):
        scored += found
        seconds += spent
        for _ in found:
            if tick is not None:
                tick()
    return at_defaults, scored, timing + Timing((), tuple(seconds))


def run_tasks(task: Callable[..., T], calls: Sequence[tuple[Any, ...]], scheduler: Any = None) -> Iterator[T]:
    """``task(*args)`` for each ``args`` of ``calls``, in order: one after another in this process, or with
    ``scheduler`` (``local:N``, an address or a connected client) all submitted as tasks at once, then
    yielded in order (the inputs are in the task graph: a lost worker's tasks are computed again). The
    warnings a task gives on a worker are given here, each text once, as if it had run here (a worker's
    own would go to its log, once per worker; on a worker of several threads one may still go there)."""
    if scheduler is None:
        for args in calls:
            yield task(*args)
        return
    from rankscope.core.scheduler import using

    with using(scheduler) as client:
        made = client.gather([client.submit(_warnings_kept, task, *args, pure=False) for args in calls])
    said: set[str] = set()
    for result, caught in made:
        for category, text in caught:
            if text not in said:
                said.add(text)
                warnings.warn(text, category, stacklevel=2)
        yield result


def _warnings_kept(task: Callable[..., T], *args: Any) -> tuple[T, list[tuple[type[Warning], str]]]:
    """On a worker: ``task(*args)`` and the warnings it gave (those its filters let through), for
    :func:`run_tasks` to give in the process that asked."""
    with warnings.catch_warnings(record=True) as caught:
        result = task(*args)
    return result, [(found.category, str(found.message)) for found in caught]


def produce_runs(
    systems: Mapping[str, System], data: Dataset, depth: int | None, scheduler: str | None = None
) -> Iterator[tuple[str, SystemRun]]:
    """Each system's run (:func:`produce_run`), in order; with ``scheduler``, all made as tasks on that
    cluster first (the retriever stays on the worker: the results carry ``retriever=None``)."""
    task = produce_run if scheduler is None else _run_without_retriever
    yield from zip(systems, run_tasks(task, [(system, data, depth) for system in systems.values()], scheduler))


def _run_without_retriever(system: System, data: Dataset, depth: int | None) -> SystemRun:
    """A task: the system's run, without the fitted retriever (which need not travel back)."""
    return dataclasses.replace(produce_run(system, data, depth), retriever=None)
