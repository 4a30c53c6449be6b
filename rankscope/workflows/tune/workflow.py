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
(:mod:`rankscope.workflows.tune.model_search`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.core.progress import progress
from rankscope.core.scheduler import connect
from rankscope.reporting import plots, provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, write_csv
from rankscope.reporting.tables import records, terminal_width, text_table
from rankscope.workflows.common.fanout import Timing, Tunable, coded_qrels, grid_scores, per_query_score
from rankscope.workflows.common.frameworks import Adapted, adapt, framework_of
from rankscope.workflows.common.runs import DatasetSource, check_specs, resolve_dataset
from rankscope.workflows.options import Execution, Output, Search, accepts_old_calls, moved, moved_figures
from rankscope.workflows.tune.crossval import (
    CrossValidation,
    RepeatedCrossValidation,
    assign_folds,
    best_column,
    fold_seeds,
    repeated_cross_validate,
)
from rankscope.workflows.tune.framework_params import FrameworkParams
from rankscope.workflows.tune.gain import GainTest, gain_test
from rankscope.workflows.tune.grid import MAX_POINTS, parse_values
from rankscope.workflows.tune.model_search import optuna_search, point_values

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset
    from rankscope.retrieval.base import Retriever

DEFAULT_K1 = "0.2:2.0:0.1"
DEFAULT_B = "0.0:1.0:0.05"
FULL_DEPTH = 1000
SHORTHANDS = ("k1", "b")
"""Parameters with an option of their own (``--k1``, ``--b``), named so in messages."""


@dataclass(frozen=True)
class TuneResult:
    """A tuning run. ``grid``: one row per point (the tuned parameters, then ``mean``) in grid
    order (first parameter outermost); ``per_query``: index query_id, one column per point;
    ``default``: the parameters in effect before tuning and their ``score``; ``cv``: the
    cross-validation under the first fold seed (``seed``), ``repeated``: under every fold seed;
    ``gain``: the cross-validated per-query gain over the defaults (held-out values averaged over the
    fold seeds), with its interval, test and spread over the seeds. With
    ``search="optuna"``, ``grid`` holds the points the studies scored (in grid order), ``space``
    every parameter's values and ``trials`` the trials of each study."""

    dataset: str
    retriever: str
    metric: str
    grid: pd.DataFrame
    per_query: pd.DataFrame
    default: dict[str, object]
    cv: CrossValidation
    repeated: RepeatedCrossValidation
    seed: int
    gain: GainTest
    provenance: Provenance
    search: str = "grid"
    trials: int | None = None
    space: dict[str, list[object]] = field(default_factory=dict)
    timing: Timing | None = None
    files: tuple[Path, ...] = field(default=())

    def __repr__(self) -> str:
        """Counts, not the tables (a notebook cell shows one line)."""
        return (
            f"TuneResult({self.retriever!r} on {self.dataset!r}: {len(self.grid)} grid points, {self.metric}, "
            f"{len(self.cv.choices)} folds)"
        )

    @property
    def params(self) -> list[str]:
        """The tuned parameters, in grid order."""
        return [c for c in self.grid.columns if c != "mean"]

    @property
    def best(self) -> dict[str, object]:
        """The point with the best mean on all queries (ties: first in grid order)."""
        row = self.grid.loc[best_column(self.per_query)]
        return {**{p: _plain(row[p]) for p in self.params}, "score": float(row["mean"])}

    @property
    def in_sample_gain(self) -> float:
        return cast(float, self.best["score"]) - cast(float, self.default["score"])

    @property
    def cv_gain(self) -> float:
        """The cross-validated gain: the mean over the fold seeds of each seed's gain."""
        return self.repeated.mean - cast(float, self.default["score"])

    def repeats_table(self) -> pd.DataFrame:
        """Per fold seed: the cross-validated score and gain (index seed)."""
        means = self.repeated.means
        return pd.DataFrame({"score": means, "gain": means - cast(float, self.default["score"])})

    def fold_table(self) -> pd.DataFrame:
        """Per fold: the parameters chosen on the other folds, its training and held-out means."""
        points = self.grid.loc[self.cv.choices["point"]]
        table = self.cv.choices.assign(**{p: points[p].to_numpy() for p in self.params})
        return table[["fold", *self.params, "train_mean", "test_mean", "n_test"]].set_index("fold")

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        best, folds = self.best, len(self.cv.choices)
        cross_validated = {
            "folds": folds,
            "seed": self.seed,
            "fold_seeds": list(self.repeated.seeds),
            "score": self.repeated.mean,
            "gain": self.cv_gain,
            "gain_sd_over_fold_seeds": self.gain.seed_sd,
            "per_fold_seed": records(self.repeats_table().reset_index()),
        }
        return {
            "dataset": self.dataset,
            "retriever": self.retriever,
            "metric": self.metric,
            "queries": len(self.per_query),
            "grid_points": len(self.grid),
            "search": self.search_settings(),
            "default": self.default,
            "best": best,
            "in_sample_gain": self.in_sample_gain,
            "cross_validated": {**cross_validated, "gain_test": self.gain.to_dict()},
            "fold_choices": records(self.fold_table()),
            "notes": self.notes(),
            **({} if self.timing is None else {"timing": self.timing.to_dict()}),
            "provenance": self.provenance.to_dict(),
        }

    def headline(self) -> list[str]:
        """The result in a few lines: grid, defaults, best in-sample, cross-validated, its error bar; notes."""
        d, best, m = self.default, self.best, self.metric
        if "retriever" in self.params:
            shape = f"{self.grid['retriever'].nunique()} retrievers' grids ({len(self.grid)} points)"
        else:
            sizes = [len(self.space[p]) if self.space else self.grid[p].nunique() for p in self.params]
            shape = f"a {' x '.join(map(str, sizes))} grid ({int(np.prod(sizes))} points)"
        if self.search == "optuna":
            studies = len(self.cv.choices) * len(self.repeated.seeds) + 1
            shape += (
                f" searched by optuna TPE ({studies} studies of {self.trials} trials, {len(self.grid)} points scored)"
            )
        seeds = self.repeated.seeds
        folds = f"{len(self.cv.choices)}-fold CV (seed {self.seed})"
        if len(seeds) > 1:
            folds = f"{len(self.cv.choices)}-fold CV x {len(seeds)} seeds ({seeds[0]}-{seeds[-1]})"
        rows = [  # label, where, what: each column padded so the numbers line up
            ("defaults", _point(d, self.params), f"{m} {d['score']:.4f}"),
            (
                "best on all queries",
                _point(best, self.params),
                f"{m} {best['score']:.4f}  in-sample gain {self.in_sample_gain:+.4f}",
            ),
            (
                folds,
                "held-out",
                f"{m} {self.repeated.mean:.4f}  cross-validated gain {self.cv_gain:+.4f}  "
                "<- expect this on new queries",
            ),
        ]
        if self.gain.seed_sd is not None:
            rows.append(("fold-seed spread", "of the gain", self.gain.spread()))
        label = max(len(r[0]) for r in rows + [("error bar on it", "", "")])
        where = max(len(r[1]) for r in rows)
        lines = [
            f"{self.retriever} on {self.dataset}: {m} over {shape}, {len(self.per_query)} queries",
            *(f"  {a.ljust(label)}  {b.ljust(where)}  {c}" for a, b, c in rows),
            f"  {'error bar on it'.ljust(label)}  {self.gain.interval()} (paired bootstrap over queries)  "
            f"p = {self.gain.p_value:.4f} (paired randomization test)  -> {self.gain.verdict()}",
        ]
        spec = self.best_spec()
        if spec is not None:
            lines.append(f"  {'best as a spec'.ljust(label)}  {spec}")
        return lines + [f"  note: {note}" for note in self.notes()]

    def best_spec(self) -> str | None:
        """The best point as a spec to pass on (``bm25:k1=1.9,b=0.65``): the tuned retriever's spec with
        the best values, as typed, over its own, parameters at their defaults left out; None for a
        retriever object whose parameters no spec holds."""
        from rankscope.retrieval.registry import brief_spec, parse_spec

        best = self.best
        base = str(best["retriever"]) if "retriever" in self.params else self.retriever
        try:
            name, raw = parse_spec(base)
            raw.update({p: typed(best[p]) for p in self.params if p != "retriever" and best[p] is not None})
            return brief_spec(f"{name}:{','.join(f'{k}={v}' for k, v in raw.items())}")
        except RankscopeError:
            return None

    def to_text(self) -> str:
        """The headline (each line wrapped to the terminal's width, continuing under its text) and the folds."""
        folds = self.fold_table()
        folds[self.params] = folds[self.params].map(_shown)
        timing = [] if self.timing is None else [f"  {self.timing.line()}"]
        lines = [_wrapped(line) for line in [*self.headline(), *timing]]
        return "\n".join([*lines, "", text_table(folds), *provenance.caption_lines(self.provenance)])

    def report(self) -> Report:
        """Result, folds and heatmap as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """grid.csv and folds.csv (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        return [
            write_csv(self.grid, out / "grid.csv", index=False),
            write_csv(self.fold_table(), out / "folds.csv"),
            write_csv(self.repeats_table(), out / "fold_seeds.csv"),
        ]

    def search_settings(self) -> dict[str, object]:
        """How the points were chosen: the whole grid, or optuna studies (one per fold, one on all queries)."""
        if self.search == "grid":
            return {"method": "grid"}
        studies = len(self.cv.choices) * len(self.repeated.seeds) + 1
        return {"method": "optuna", "sampler": "TPE", "studies": studies, "trials": self.trials, "seed": self.seed}

    def notes(self) -> list[str]:
        """Edge-of-grid notes (or that no point changed anything), then the warning when too few queries
        differ for a test to be significant."""
        warning = self.gain.warning()
        return self.edge_notes() + self.inert_notes() + ([warning] if warning else [])

    def inert_notes(self) -> list[str]:
        """Say so when every grid point gives every query the same value: the tuned parameters change
        nothing here (a framework's parameter read only when its index is built, say)."""
        values = self.per_query.to_numpy()
        if len(self.grid) < 2 or not (values == values[:, :1]).all():
            return []
        return [
            f"every grid point gives every query the same {self.metric}: the tuned parameters "
            f"({', '.join(self.params)}) change nothing here (are they read only when the index is built?)"
        ]

    def edge_notes(self) -> list[str]:
        """Warn when the best point lies on the border of a numeric range: the optimum may lie outside it
        (unless the parameter changes nothing there, as RRF's k for CombSUM)."""
        notes = []
        for name in self.params:
            values = pd.Series(self.space[name]) if self.space else self.grid[name]
            value = self.best[name]
            if not pd.api.types.is_numeric_dtype(values) or values.nunique() < 2:
                continue
            if value in (values.min(), values.max()) and self._matters(name):
                hint = f"--{name}" if name in SHORTHANDS else f"--param {name}"
                notes.append(f"the best {name}={value:g} is on the edge of the grid; consider widening {hint}")
        return notes

    def _matters(self, name: str) -> bool:
        """Does changing ``name`` alone, from the best point, change any query's value?"""
        best = best_column(self.per_query)
        others = [p for p in self.params if p != name]
        text = self.grid[others].map(_shown)  # as text, a missing value equals a missing value
        same = (text == text.loc[best]).all(axis=1)
        siblings = self.per_query[self.grid.index[same]]
        return not siblings.eq(self.per_query[best], axis=0).all().all()


def _plain(value: object) -> object:
    """A numpy scalar as the Python value, a missing one (a parameter another retriever has) as None."""
    if value is pd.NA:
        return None
    return value.item() if isinstance(value, np.generic) else value


def _shown(value: object) -> str:
    """A grid value as text, as typed (1.9, not 1.9000000000000001); a parameter the point's retriever
    lacks as an empty cell."""
    return "" if pd.isna(value) else typed(value)


def typed(value: object) -> str:
    """A parameter value as a person types it: floats to 12 significant digits without trailing
    zeros (a grid's 0.1 steps add float noise), everything else as ``str``."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.12g}"
    return str(value)


def _wrapped(line: str) -> str:
    """One headline line wrapped to the terminal's width, continuing under the text after its label."""
    width = terminal_width()
    if width is None or len(line) <= width:
        return line
    column = re.search(r"\S {2,}(?=\S)", line.lstrip())  # where the text after the label starts
    lead = len(line) - len(line.lstrip())
    indent = " " * (lead + (column.end() if column else 2))
    return textwrap.fill(line, width, subsequent_indent=indent, break_on_hyphens=False)


def _point(values: Mapping[str, object], names: Sequence[str]) -> str:
    """``k1=1.2 b=0.75``; parameters the point does not have (None) are left out; none left: ``as given``
    (a framework retriever whose dictionary lacks the tuned keys: the framework's own defaults)."""
    shown = [n for n in names if values[n] is not None]
    if not shown:
        return "as given"
    return " ".join(f"{n}={values[n]:g}" if isinstance(values[n], float) else f"{n}={values[n]}" for n in shown)


def search_depth(metric: str) -> int:
    """Documents to retrieve per query: the metric's cutoff (``ndcg@10`` needs 10), else 1000."""
    from rankscope.evaluation.metrics import parse_metric

    k = parse_metric(metric).k
    return FULL_DEPTH if k is None else k


def _old_tune(kwargs: dict[str, object]) -> dict[str, object]:
    """The earlier keywords: ``k1``/``b`` (into ``params``), ``retrievers`` (a list as ``retriever``),
    ``trials`` (into ``search``), ``seed``/``scheduler`` (into ``execution``), ``figures`` (into ``out``)."""
    shorthands = {name: kwargs.pop(name) for name in ("k1", "b") if kwargs.get(name) is not None}
    kwargs.pop("k1", None), kwargs.pop("b", None)
    params = dict(kwargs.get("params") or {})  # type: ignore[call-overload]
    twice = sorted(set(shorthands) & set(params))
    if twice:
        raise RankscopeError(f"parameter {twice[0]!r} is given twice")
    if shorthands:
        kwargs["params"] = {**shorthands, **params}
    if kwargs.get("retrievers") is not None:
        kwargs["retriever"] = list(kwargs.pop("retrievers"))  # type: ignore[call-overload]
    kwargs.pop("retrievers", None)
    if "trials" in kwargs:
        search = cast("Search | str", kwargs.get("search", Search()))
        kwargs["search"] = replace(
            Search(search) if isinstance(search, str) else search, trials=cast(int, kwargs.pop("trials"))
        )
    return moved(moved_figures(kwargs), {"seed": "seed", "scheduler": "scheduler"}, "execution", Execution)


@accepts_old_calls(("dataset", "retriever", "k1", "b", "metric", "folds", "seed", "out"), _old_tune)
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
    bit. The earlier signature (``k1``, ``b``, ``seed`` and ``out`` by position, keywords ``retrievers``,
    ``trials``, ``scheduler``, ``figures``) still works, with a DeprecationWarning.
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
    grids = {plan.spec: {n: [_plain(v) for v in values] for n, values in plan.space.items()} for plan in plans}
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
    default = {n: _plain(plan.defaults[n]) if n in plan.defaults else None for n in grid.columns if n != "mean"}
    return _cross_validated(task, plan, plan.spec, grid, per_query, default, timing)


def _tune_choice(task: _Task, plans: Sequence[_Plan], execution: Execution) -> TuneResult:
    """Several retrievers: one grid of every retriever's points, the first at its defaults the baseline."""
    grid, per_query, timing = _score_grids(task, plans, execution, nested=True)
    base = plans[0]
    names = [n for n in grid.columns if n not in ("retriever", "mean")]
    default = {"retriever": base.spec, **{n: _plain(base.defaults[n]) if n in base.defaults else None for n in names}}
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
            points = [dict(zip(plan.names, (_plain(v) for v in values))) for values in plan.points]
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
        default={**{n: _plain(plan.defaults[n]) for n in plan.names}, "score": float(at_defaults.mean())},
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
        type(plan.system).check_params({**current, **{n: _plain(v) for n, v in point.items()}})
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
        else [_plain(v) for v in np.asarray(values).tolist()]
        for name, values, flag in given
    }


def heatmap_plot(result: TuneResult) -> plots.Plot | None:
    """The metric over the first two tuned parameters, when exactly two numeric ones were tuned."""
    names = result.params
    if len(names) != 2 or not all(pd.api.types.is_numeric_dtype(result.grid[n]) for n in names):
        return None
    row_name, column_name = names
    table = result.grid.pivot(index=row_name, columns=column_name, values="mean")
    if table.isna().to_numpy().any():  # a search scored only some points
        return None
    best, d = result.best, result.default
    return plots.heatmap(
        table.to_numpy(),
        list(table.index),
        list(table.columns),
        (cast(float, best[row_name]), cast(float, best[column_name])),
        (cast(float, d[row_name]), cast(float, d[column_name])),
        result.metric,
        dataset=result.dataset,
        names=(row_name, column_name),
    )


def typed_params(table: pd.DataFrame, params: Sequence[str]) -> pd.DataFrame:
    """``table`` with the parameter columns as typed (1.9, not 1.9000), for the report's tables."""
    return table.assign(**{name: table[name].map(_shown) for name in params if name in table.columns})


def build_report(result: TuneResult) -> Report:
    """The tuning result, fold choices, heatmap and the ten best points."""
    report = Report(f"rankscope tune: {result.retriever} on {result.dataset}")
    report.paragraph(
        "The in-sample gain is the best grid point's gain on the queries it was chosen on; the "
        "cross-validated gain chooses the parameters on the training folds and scores the held-out fold, "
        "so it is what new queries can expect. Its interval is a paired bootstrap over queries of the "
        "held-out values minus the defaults' values, its p-value a paired randomization test."
    )
    report.heading("Result").bullets([line.strip() for line in result.headline()])
    report.heading("Cross-validation folds").table(typed_params(result.fold_table(), result.params))
    report.heading("Grid")
    heatmap = heatmap_plot(result)
    if heatmap is not None:
        report.image("heatmap", heatmap, f"{result.metric} over the ({', '.join(result.params)}) grid")
    elif len(result.params) >= 3:
        report.image(
            "marginals",
            plots.marginals(result.grid, result.params, result.metric, result.best, dataset=result.dataset),
            f"{result.metric} against each parameter: the best and the average over the other parameters",
        )
    top = result.grid.sort_values("mean", ascending=False, kind="stable").head(10)
    report.table(typed_params(top, result.params), caption="the ten best grid points", index=False)
    return provenance.add_section(report, result.provenance)
