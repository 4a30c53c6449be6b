"""Tune any parameters of a retriever on a grid, and report the gain a user can expect on new queries.

The corpus is indexed once; each grid point only calls ``set_params`` (BM25
re-weights its stored counts, feedback re-expands from them, a hybrid re-fuses
its sub-retrievers' cached runs). Per-query metric values of every point are
kept, so k-fold cross-validation over queries can choose parameters on the
training folds and score them on the held-out fold: the best in-sample gain is
printed next to that cross-validated gain, which is the honest one, with a paired
bootstrap interval and randomization test of it (:mod:`rankscope.workflows.tune.gain`).
Without ``params``, ``tune`` does what it always did: BM25's k1 and b.

``search="optuna"`` searches the same space with optuna's TPE instead of scoring every
point, one study per training fold so the cross-validated gain stays honest
(:mod:`rankscope.workflows.tune.model_search`). What the result shows, and how: :mod:`.result`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.core.progress import progress
from rankscope.core.scheduler import connect
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.workflows.common.fanout import Timing, Tunable, coded_qrels, grid_scores, per_query_score
from rankscope.workflows.common.frameworks import Adapted, adapt, framework_of
from rankscope.workflows.common.runs import DatasetSource, check_specs, resolve_dataset
from rankscope.workflows.options import Execution, Output, Search
from rankscope.workflows.tune.crossval import (
    RepeatedCrossValidation,
    assign_folds,
    fold_seeds,
    repeated_cross_validate,
)
from rankscope.workflows.tune.framework_params import FrameworkParams
from rankscope.workflows.tune.gain import gain_test
from rankscope.workflows.tune.grid import DEFAULT_B, DEFAULT_K1, MAX_POINTS, SHORTHANDS, parse_values, plain
from rankscope.workflows.tune.model_search import optuna_search, point_values
from rankscope.workflows.tune.result import TuneResult

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset
    from rankscope.retrieval.base import Retriever

FULL_DEPTH = 1000


def search_depth(metric: str) -> int:
    """Documents to retrieve per query: the metric's cutoff (``ndcg@10`` needs 10), else 1000."""
    from rankscope.evaluation.metrics import parse_metric

    k = parse_metric(metric).k
    return FULL_DEPTH if k is None else k


def tune(
    dataset: DatasetSource = "cranfield",
    retriever: str | Retriever | Sequence[str] | object = "bm25",
    *,
    params: Mapping[str, str | Sequence[object]] | None = None,
    metric: str = "ndcg@10",
    folds: int = 5,
    out: str | Path | Output | None = None,
    search: Search | str = Search(),
    execution: Execution = Execution(),
) -> TuneResult:
    """Search parameters of ``retriever``, cross-validate the choice, write files to ``out`` (a folder,
    or an :class:`~rankscope.workflows.options.Output` with the figures' formats).

    One entry point, three paths: one retriever on a grid (a spec, or a Retriever object, never
    modified: a fresh one with its parameters is indexed); a list of specs, which makes the system
    itself a choice (the grid is every retriever, each with the given parameters it has, at its
    defaults otherwise; the first at its defaults is the baseline; each fold picks retriever and
    parameters); and ``search=Search("optuna", trials)`` (or ``"optuna"``), optuna's TPE per study
    instead of the whole grid.

    ``params`` maps parameter names to ``start:stop:step``, one value, a comma list, or a list of
    values (:func:`rankscope.workflows.tune.grid.parse_values`, typed by the retriever's parameter
    table); without it, BM25's k1 and b take the default ranges. ``execution`` gives the seed (folds,
    the gain's test) and a scheduler (``local:N`` or a Dask scheduler's address) that scores the grid
    points there, in chunks (:mod:`rankscope.workflows.common.fanout`); the result is the same, bit for
    bit.

    >>> import rankscope as rs
    >>> result = rs.tune("cranfield", "bm25", params={"k1": "0.9:1.2:0.3", "b": "0.4:0.8:0.4"}, folds=2)
    >>> result.best_spec()
    'bm25:k1=1.2,b=0.8'
    """
    search = (Search(search) if isinstance(search, str) else search).check()
    choice = isinstance(retriever, (list, tuple))
    _check_execution(search, execution, choice)
    if choice:
        check_specs(list(cast("Sequence[str]", retriever)))
    depth = search_depth(metric)
    every_point = search.method == "grid"
    systems = cast("Sequence[str | Retriever]", retriever if choice else [retriever])
    plans = [_plan(system, params, choice, every_point) for system in systems]
    asked = any(isinstance(plan.system, FrameworkParams) for plan in plans)
    if asked and (execution.scheduler is not None or execution.workers > 1):
        raise RankscopeError(
            "a framework retriever is asked in this process; a scheduler and workers are for rankscope's retrievers"
        )
    described = {plan.spec: plan.system.spec() for plan in plans}  # every parameter, before any is tuned
    grids = {plan.spec: {n: [plain(v) for v in values] for n, values in plan.space.items()} for plan in plans}
    out_path, figures = Output.of(out).checked()  # before any computing
    data = resolve_dataset(dataset)
    for plan in plans:
        if isinstance(plan.system, FrameworkParams):
            plan.system = plan.system.bound(data)
    seed = execution.seed
    record = provenance.record(
        "tune",
        data,
        described,
        metric=metric,
        folds=folds,
        seed=seed,
        repeats=search.repeats,
        depth=depth,
        search=search.method,
        grid=grids,
    )
    task = _Task(data, metric, depth, folds, seed, record, fold_seeds(seed, search.repeats))
    if search.method == "optuna":
        result = _tune_by_search(task, plans[0], search.trials)
    elif choice:
        result = _tune_choice(task, plans, execution)
    else:
        result = _tune_grid(task, plans[0], execution)
    return finish(result, out_path, figures)


@dataclass(frozen=True)
class _Task:
    """What every path of :func:`tune` scores against and records."""

    data: Dataset
    metric: str
    depth: int
    folds: int
    seed: int
    record: Provenance
    seeds: tuple[int, ...]
    """The fold seeds of repeated cross-validation, ``seed`` first."""

    def judged(self, repeated: RepeatedCrossValidation, at_defaults: pd.Series) -> dict[str, object]:
        """The cross-validations and the gain test of the held-out values against the defaults."""
        default = float(at_defaults.mean())
        gains = [mean - default for mean in repeated.means]
        gain = gain_test(repeated.held_out, at_defaults, self.seed, seed_gains=gains)
        return {"cv": repeated.runs[0], "repeated": repeated, "gain": gain}

    def result(self, retriever: str, grid: pd.DataFrame, per_query: pd.DataFrame, **fields: object) -> TuneResult:
        """The TuneResult of a scored grid (``fields``: the defaults, cross-validation and the rest)."""
        return TuneResult(
            dataset=self.data.name,
            retriever=retriever,
            metric=self.metric,
            grid=grid,
            per_query=per_query,
            seed=self.seed,
            **fields,  # type: ignore[arg-type]
        )


def _tune_grid(task: _Task, plan: _Plan, execution: Execution) -> TuneResult:
    """One retriever: every point of its grid."""
    grid, per_query, timing = _score_grids(task, [plan], execution, nested=False)
    default = {n: plain(plan.defaults[n]) if n in plan.defaults else None for n in grid.columns if n != "mean"}
    return _cross_validated(task, plan, plan.spec, grid, per_query, default, timing)


def _tune_choice(task: _Task, plans: Sequence[_Plan], execution: Execution) -> TuneResult:
    """Several retrievers: one grid of every retriever's points, the first at its defaults the baseline."""
    grid, per_query, timing = _score_grids(task, plans, execution, nested=True)
    base = plans[0]
    names = [n for n in grid.columns if n not in ("retriever", "mean")]
    default = {"retriever": base.spec, **{n: plain(base.defaults[n]) if n in base.defaults else None for n in names}}
    retriever = " | ".join(plan.spec for plan in plans)
    return _cross_validated(task, base, retriever, grid, per_query, default, timing)


def _score_grids(
    task: _Task, plans: Sequence[_Plan], execution: Execution, nested: bool
) -> tuple[pd.DataFrame, pd.DataFrame, Timing]:
    """Every plan's points scored (per query), in grid order; each plan's ``at_defaults`` set."""
    rows: list[dict[str, object]] = []
    columns: dict[int, pd.Series] = {}
    timing = Timing((), ())
    bar = progress(range(sum(len(plan.points) for plan in plans)), desc="grid", unit="point")
    ticks = iter(bar)
    with contextlib.ExitStack() as stack:
        scheduler = execution.scheduler
        client = None if scheduler is None else stack.enter_context(connect(scheduler))
        for plan in plans:
            points = [dict(zip(plan.names, (plain(v) for v in values))) for values in plan.points]
            plan.at_defaults, scored, spent = grid_scores(
                plan.system,
                task.data,
                task.metric,
                task.depth,
                points,
                client,
                lambda: next(ticks, None),
                execution.workers,
            )
            timing += spent
            for point, column in zip(points, scored):
                columns[len(rows)] = column
                rows.append({"retriever": plan.spec, **point} if nested else point)
            del plan.system  # its index is no longer needed
    names = list(dict.fromkeys(name for row in rows for name in row))
    grid = pd.DataFrame(rows, columns=names).rename_axis("point")
    if nested:  # a parameter one retriever lacks is missing (<NA>) in its rows; ints stay ints
        grid = grid.convert_dtypes()
    per_query = pd.DataFrame(columns)
    grid["mean"] = per_query.mean(axis=0).to_numpy()
    return grid, per_query, timing


def _cross_validated(
    task: _Task,
    base: _Plan,
    retriever: str,
    grid: pd.DataFrame,
    per_query: pd.DataFrame,
    default: dict[str, object],
    timing: Timing,
) -> TuneResult:
    assert base.at_defaults is not None  # set when its grid was scored
    repeated = repeated_cross_validate(per_query, task.folds, task.seeds)
    return task.result(
        retriever,
        grid,
        per_query,
        default={**default, "score": float(base.at_defaults.mean())},
        **task.judged(repeated, base.at_defaults),
        provenance=task.record,
        timing=timing,
    )


def _check_execution(search: Search, execution: Execution, choice: bool) -> None:
    """Refuse optuna with a choice of retrievers, a scheduler or workers (the studies propose points one
    after another, in this process), a scheduler with workers, and a significance test tune does not
    use, before any work."""
    if execution.test != Execution().test:
        raise RankscopeError(
            f"tune tests its gain with the paired randomization test and a bootstrap interval; "
            f"test={execution.test!r} is for compare and rag"
        )
    if search.method == "optuna":
        if choice:
            raise RankscopeError("--search optuna tunes one retriever; with --retrievers use the grid")
        if execution.scheduler is not None or execution.workers > 1:
            raise RankscopeError(
                "--search optuna runs its studies in this process; --scheduler and --workers are for the grid"
            )
    if execution.scheduler is not None and execution.workers > 1:
        raise RankscopeError("--scheduler and --workers both place the grid's points: give one")


def _tune_by_search(task: _Task, plan: _Plan, trials: int) -> TuneResult:
    """One retriever, optuna's TPE proposing the points (one study per fold, one on all queries)."""
    data, folds, seed = task.data, task.folds, task.seed

    qrels = coded_qrels(data.qrels)

    def score(system: Tunable) -> pd.Series:
        return per_query_score(system, data.queries, qrels, task.metric, task.depth)

    system = plan.system
    started = time.perf_counter()
    with phase("index"):
        system.index(data.corpus)
    index_s = time.perf_counter() - started
    at_defaults = score(system)
    # before the search: it must not see held-out folds
    fold_of = [assign_folds(list(at_defaults.index), folds, fold_seed) for fold_seed in task.seeds]
    seconds: list[float] = []

    def score_point(point: tuple[int, ...]) -> pd.Series:
        started = time.perf_counter()
        system.set_params(**point_values(plan.space, point))
        scores = score(system)
        seconds.append(time.perf_counter() - started)
        return scores

    ticks = iter(progress(range((folds * len(task.seeds) + 1) * trials), desc="trials", unit="trial"))
    outcome = optuna_search(plan.space, score_point, fold_of, trials, seed, tick=lambda: next(ticks, None))
    del plan.system
    points = list(outcome.values)  # in grid order, so ties go to the first in grid order as on a grid
    column = {point: i for i, point in enumerate(points)}
    per_query = pd.DataFrame({i: outcome.values[p] for i, p in enumerate(points)})
    grid = pd.DataFrame([point_values(plan.space, p) for p in points]).rename_axis("point")
    grid["mean"] = per_query.mean(axis=0).to_numpy()
    chosen = [{f: column[p] for f, p in choices.items()} for choices in outcome.chosen]
    repeated = repeated_cross_validate(per_query, folds, task.seeds, chosen)
    return task.result(
        plan.spec,
        grid,
        per_query,
        default={**{n: plain(plan.defaults[n]) for n in plan.names}, "score": float(at_defaults.mean())},
        **task.judged(repeated, at_defaults),
        provenance=replace(task.record, settings={**task.record.settings, "trials": trials}),
        search="optuna",
        trials=trials,
        space={n: list(v) for n, v in plan.space.items()},
        timing=Timing((index_s,), tuple(seconds)),
    )


@dataclass
class _Plan:
    """One retriever's part of the grid, checked before any loading."""

    spec: str
    system: Retriever | FrameworkParams
    defaults: dict[str, object]
    space: dict[str, list[object]]
    at_defaults: pd.Series | None = None

    @property
    def names(self) -> list[str]:
        return list(self.space)

    @property
    def points(self) -> list[tuple[object, ...]]:
        """Every point of the grid, first parameter outermost."""
        return list(itertools.product(*self.space.values()))


def _plan(
    given: str | Retriever | object,
    params: Mapping[str, str | Sequence[object]] | None,
    nested: bool,
    every_point: bool = True,
) -> _Plan:
    """The retriever, its grid and its defaults; with ``nested``, only the given parameters it has.

    ``given`` is a spec or a Retriever object; an object is never modified (a fresh one with its
    parameters is indexed, as compare does), and its full spec names it in the results. A framework
    retriever's parameters are paths from it (:mod:`.framework_params`), put back after each point. Every
    grid point is checked (``every_point``), or, for a search that scores only some of them,
    every value of each parameter with the others as they are.
    """
    from rankscope.workflows.common.systems import resolve_system

    if framework_of(given) is not None:
        plan = _framework_plan(given, params)
    else:
        name = given if isinstance(given, str) else "retriever"
        system = resolve_system(name, given).fresh_retriever()
        spec = given if isinstance(given, str) else system.spec()
        defaults = system.effective_params()
        if nested:  # each retriever takes the parameters it has in effect (not None: fb_terms without prf is not)
            params = {name: values for name, values in (params or {}).items() if defaults.get(name) is not None}
            if not params:
                return _Plan(spec, system, defaults, {})
        kinds = {p.name: p.kind for p in system.parameters}
        plan = _Plan(spec, system, defaults, _space(spec, defaults, kinds, params))
    size = math.prod(len(values) for values in plan.space.values())
    if every_point and size > MAX_POINTS:
        raise RankscopeError(
            f"the grid of {' x '.join(str(len(v)) for v in plan.space.values())} = {size:,} points is more than "
            f"the {MAX_POINTS:,} tune scores; use larger steps or --search optuna"
        )
    if isinstance(plan.system, FrameworkParams):  # each value set once and put back: a refused one fails now
        for name, grid_values in plan.space.items():
            for value in grid_values:
                plan.system.check({name: value})
        return plan
    current = plan.system.get_params()
    checked = plan.points if every_point else [{n: v} for n, values in plan.space.items() for v in values]
    for values in checked:  # a grid value the retriever refuses fails before any indexing
        point = dict(zip(plan.names, values)) if every_point else cast("dict[str, object]", values)
        type(plan.system).check_params({**current, **{n: plain(v) for n, v in point.items()}})
    return plan


def _framework_plan(given: object, params: Mapping[str, str | Sequence[object]] | None) -> _Plan:
    """A framework retriever's plan: ``params`` name paths from the object (:mod:`.framework_params`; no
    defaults: a framework's parameters are its own), its values now their defaults."""
    adapted = given if isinstance(given, Adapted) else adapt(given)
    if not params:
        raise RankscopeError(
            f"tuning a {adapted.label} {type(adapted.retriever).__name__} needs params naming its own parameters, "
            "e.g. params={'k': [10, 100]} or {'search_kwargs.k': ...}: attributes of the object, dotted through "
            "attributes and dictionary keys"
        )
    system = FrameworkParams.of("retriever", adapted, list(params))
    spec = system.spec()
    kinds = {p.name: p.kind for p in system.parameters}
    return _Plan(spec, system, system.defaults, _space(spec, system.defaults, kinds, params))


def _space(
    retriever: str,
    defaults: Mapping[str, object],
    kinds: Mapping[str, type],
    params: Mapping[str, str | Sequence[object]] | None,
) -> dict[str, list[object]]:
    """Grid values per parameter (BM25's k1 and b over their default ranges when none is given),
    checked against the retriever's parameters before any indexing."""
    params = params or {"k1": DEFAULT_K1, "b": DEFAULT_B}
    given = [(name, values, name if name in SHORTHANDS else f"param {name}") for name, values in params.items()]
    names = [name for name, _, _ in given]
    missing = [name for name in names if name not in defaults]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise RankscopeError(
            f"retriever {retriever!r} has no {' and '.join(missing)} parameter{plural} to tune "
            f"(it has {sorted(defaults)})"
        )
    return {
        name: cast("list[object]", parse_values(values, kinds[name], flag))
        if isinstance(values, str)
        else [plain(v) for v in np.asarray(values).tolist()]
        for name, values, flag in given
    }
