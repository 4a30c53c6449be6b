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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.outputs import check_output_folder
from rankscope.core.progress import progress
from rankscope.core.scheduler import connect
from rankscope.reporting import plots, provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, write_csv
from rankscope.reporting.tables import records, text_table
from rankscope.workflows.common.fanout import Timing, grid_scores, per_query_score
from rankscope.workflows.common.runs import DatasetSource, check_specs, resolve_dataset
from rankscope.workflows.tune.crossval import CrossValidation, assign_folds, best_column, cross_validate
from rankscope.workflows.tune.gain import GainTest, gain_test
from rankscope.workflows.tune.grid import parse_values
from rankscope.workflows.tune.model_search import optuna_search, point_values

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset
    from rankscope.retrieval.base import Retriever

DEFAULT_K1 = "0.2:2.0:0.1"
DEFAULT_B = "0.0:1.0:0.05"
FULL_DEPTH = 1000
SEARCHES = ("grid", "optuna")


@dataclass(frozen=True)
class TuneResult:
    """A tuning run. ``grid``: one row per point (the tuned parameters, then ``mean``) in grid
    order (first parameter outermost); ``per_query``: index query_id, one column per point;
    ``default``: the parameters in effect before tuning and their ``score``; ``gain``: the
    cross-validated per-query gain over the defaults, with its interval and test. With
    ``search="optuna"``, ``grid`` holds the points the studies scored (in grid order), ``space``
    every parameter's values and ``trials`` the trials of each study."""

    dataset: str
    retriever: str
    metric: str
    grid: pd.DataFrame
    per_query: pd.DataFrame
    default: dict[str, object]
    cv: CrossValidation
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
        return self.best["score"] - self.default["score"]

    @property
    def cv_gain(self) -> float:
        return self.cv.mean - self.default["score"]

    def fold_table(self) -> pd.DataFrame:
        """Per fold: the parameters chosen on the other folds, its training and held-out means."""
        points = self.grid.loc[self.cv.choices["point"]]
        table = self.cv.choices.assign(**{p: points[p].to_numpy() for p in self.params})
        return table[["fold", *self.params, "train_mean", "test_mean", "n_test"]].set_index("fold")

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        best, folds = self.best, len(self.cv.choices)
        cross_validated = {"folds": folds, "seed": self.seed, "score": self.cv.mean, "gain": self.cv_gain}
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
            studies = len(self.cv.choices) + 1
            shape += (
                f" searched by optuna TPE ({studies} studies of {self.trials} trials, {len(self.grid)} points scored)"
            )
        folds = f"{len(self.cv.choices)}-fold CV (seed {self.seed})"
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
                f"{m} {self.cv.mean:.4f}  cross-validated gain {self.cv_gain:+.4f}  <- expect this on new queries",
            ),
        ]
        label = max(len(r[0]) for r in rows + [("error bar on it", "", "")])
        where = max(len(r[1]) for r in rows)
        lines = [
            f"{self.retriever} on {self.dataset}: {m} over {shape}, {len(self.per_query)} queries",
            *(f"  {a.ljust(label)}  {b.ljust(where)}  {c}" for a, b, c in rows),
            f"  {'error bar on it'.ljust(label)}  {self.gain.interval()} (paired bootstrap over queries)  "
            f"p = {self.gain.p_value:.4f} (paired randomization test)  -> {self.gain.verdict()}",
        ]
        return lines + [f"  note: {note}" for note in self.notes()]

    def to_text(self) -> str:
        folds = self.fold_table()
        folds[self.params] = folds[self.params].map(_shown)
        timing = [] if self.timing is None else [f"  {self.timing.line()}"]
        return "\n".join([*self.headline(), *timing, "", text_table(folds)])

    def report(self) -> Report:
        """Result, folds and heatmap as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """grid.csv and folds.csv (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        return [write_csv(self.grid, out / "grid.csv", index=False), write_csv(self.fold_table(), out / "folds.csv")]

    def search_settings(self) -> dict[str, object]:
        """How the points were chosen: the whole grid, or optuna studies (one per fold, one on all queries)."""
        if self.search == "grid":
            return {"method": "grid"}
        studies = len(self.cv.choices) + 1
        return {"method": "optuna", "sampler": "TPE", "studies": studies, "trials": self.trials, "seed": self.seed}

    def notes(self) -> list[str]:
        """Edge-of-grid notes, then the warning when too few queries differ for a test to be significant."""
        warning = self.gain.warning()
        return self.edge_notes() + ([warning] if warning else [])

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
                hint = f"--{name}" if name in ("k1", "b") else f"--param {name}"
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
    """A grid value as text; a parameter the point's retriever lacks as an empty cell."""
    return "" if pd.isna(value) else str(value)


def _point(values: Mapping[str, object], names: Sequence[str]) -> str:
    """``k1=1.2 b=0.75``; parameters the point does not have (None) are left out."""
    shown = [n for n in names if values[n] is not None]
    return " ".join(f"{n}={values[n]:g}" if isinstance(values[n], float) else f"{n}={values[n]}" for n in shown)


def search_depth(metric: str) -> int:
    """Documents to retrieve per query: the metric's cutoff (``ndcg@10`` needs 10), else 1000."""
    from rankscope.evaluation.metrics import parse_metric

    k = parse_metric(metric).k
    return FULL_DEPTH if k is None else k


def tune(
    dataset: DatasetSource = "cranfield",
    retriever: str | Retriever = "bm25",
    k1: str | np.ndarray | None = None,
    b: str | np.ndarray | None = None,
    metric: str = "ndcg@10",
    folds: int = 5,
    seed: int = 0,
    out: str | Path | None = None,
    *,
    params: Mapping[str, str | Sequence[object]] | None = None,
    retrievers: Sequence[str] | None = None,
    figures: Sequence[str] = plots.FIGURE_FORMATS,
    scheduler: str | None = None,
    search: str = "grid",
    trials: int = 50,
) -> TuneResult:
    """Grid-search parameters of ``retriever``, cross-validate the choice, write files to ``out``.

    ``retriever`` is a spec or a Retriever object (never modified: a fresh one with its
    parameters is indexed).

    ``params`` maps parameter names to ``start:stop:step``, one value, a comma list, or a
    list of values (:func:`rankscope.workflows.tune.grid.parse_values`, typed by the retriever's
    parameter table); ``k1`` and ``b`` are
    shorthands for two of them. With none of the three, k1 and b take the default ranges.
    ``retrievers`` (instead of ``retriever``) makes the system itself a choice: the grid is
    every retriever, each with the given parameters it has (at its defaults otherwise), the
    first at its defaults is the baseline, and each fold picks retriever and parameters.
    ``scheduler`` (``local:N`` or a Dask scheduler's address) scores the grid points there, in chunks
    (:mod:`rankscope.workflows.common.fanout`); the result is the same, bit for bit.
    ``search="optuna"`` runs ``trials`` trials of optuna's TPE per study instead of the whole grid.
    """

    depth = search_depth(metric)
    nested = retrievers is not None
    _check_search(search, trials, nested, scheduler)
    if nested:
        check_specs(list(retrievers))  # type: ignore[arg-type]
    every_point = search == "grid"
    plans = [_plan(system, k1, b, params, nested, every_point) for system in (retrievers if nested else [retriever])]
    specs = [plan.spec for plan in plans]
    described = {plan.spec: plan.system.spec() for plan in plans}  # every parameter, before any is tuned
    grids = {plan.spec: {n: [_plain(v) for v in values] for n, values in plan.space.items()} for plan in plans}
    figures = plots.check_formats(figures)
    out_path = None if out is None else check_output_folder(out)  # before any computing
    data = resolve_dataset(dataset)
    record = provenance.record(
        "tune", data, described, metric=metric, folds=folds, seed=seed, depth=depth, search=search, grid=grids
    )

    if search == "optuna":

        def score(system: Retriever) -> pd.Series:
            return per_query_score(system, data.queries, data.qrels, metric, depth)

        return _tune_by_search(data, plans[0], score, metric, folds, seed, trials, out_path, figures, record)
    rows: list[dict[str, object]] = []
    columns: dict[int, pd.Series] = {}
    timing = Timing((), ())
    bar = progress(range(sum(len(plan.points) for plan in plans)), desc="grid", unit="point")
    ticks = iter(bar)
    with contextlib.ExitStack() as stack:
        client = None if scheduler is None else stack.enter_context(connect(scheduler))
        for plan in plans:
            points = [dict(zip(plan.names, (_plain(v) for v in values))) for values in plan.points]
            plan.at_defaults, scored, spent = grid_scores(
                plan.system, data, metric, depth, points, client, lambda: next(ticks, None)
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
    cv = cross_validate(per_query, folds, seed)
    base = plans[0]
    default = {"retriever": base.spec} if nested else {}
    default.update({n: _plain(base.defaults[n]) if n in base.defaults else None for n in names if n != "retriever"})
    result = TuneResult(
        dataset=data.name,
        retriever=" | ".join(specs),
        metric=metric,
        grid=grid,
        per_query=per_query,
        default={**default, "score": float(base.at_defaults.mean())},
        cv=cv,
        seed=seed,
        gain=gain_test(cv.held_out, base.at_defaults, seed),
        provenance=record,
        timing=timing,
    )
    return finish(result, out_path, figures)


def _check_search(search: str, trials: int, nested: bool, scheduler: str | None) -> None:
    """Refuse an unknown search, too few trials, or optuna with a choice of retrievers or a scheduler
    (the studies propose points one after another, in this process), before any work."""
    if search not in SEARCHES:
        raise RankscopeError(f"--search must be one of {', '.join(SEARCHES)}, got {search!r}")
    if search == "optuna":
        if trials < 1:
            raise RankscopeError(f"--trials must be at least 1, got {trials}")
        if nested:
            raise RankscopeError("--search optuna tunes one retriever; with --retrievers use the grid")
        if scheduler is not None:
            raise RankscopeError("--search optuna runs its studies in this process; --scheduler is for the grid")


def _tune_by_search(
    data: Dataset,
    plan: _Plan,
    score: Callable[[Retriever], pd.Series],
    metric: str,
    folds: int,
    seed: int,
    trials: int,
    out_path: Path | None,
    figures: Sequence[str],
    record: Provenance,
) -> TuneResult:
    """:func:`tune` with optuna's TPE proposing the points (one study per fold, one on all queries)."""
    system = plan.system
    started = time.perf_counter()
    system.index(data.corpus)
    index_s = time.perf_counter() - started
    at_defaults = score(system)
    fold_of = assign_folds(list(at_defaults.index), folds, seed)  # before the search: it must not see held-out folds
    seconds: list[float] = []

    def score_point(point: tuple[int, ...]) -> pd.Series:
        started = time.perf_counter()
        system.set_params(**point_values(plan.space, point))
        scores = score(system)
        seconds.append(time.perf_counter() - started)
        return scores

    ticks = iter(progress(range((folds + 1) * trials), desc="trials", unit="trial"))
    outcome = optuna_search(plan.space, score_point, fold_of, trials, seed, tick=lambda: next(ticks, None))
    del plan.system
    points = list(outcome.values)  # in grid order, so ties go to the first in grid order as on a grid
    column = {point: i for i, point in enumerate(points)}
    per_query = pd.DataFrame({i: outcome.values[p] for i, p in enumerate(points)})
    grid = pd.DataFrame([point_values(plan.space, p) for p in points]).rename_axis("point")
    grid["mean"] = per_query.mean(axis=0).to_numpy()
    cv = cross_validate(per_query, folds, seed, chosen={f: column[p] for f, p in outcome.chosen.items()})
    result = TuneResult(
        dataset=data.name,
        retriever=plan.spec,
        metric=metric,
        grid=grid,
        per_query=per_query,
        default={**{n: _plain(plan.defaults[n]) for n in plan.names}, "score": float(at_defaults.mean())},
        cv=cv,
        seed=seed,
        gain=gain_test(cv.held_out, at_defaults, seed),
        provenance=replace(record, settings={**record.settings, "trials": trials}),
        search="optuna",
        trials=trials,
        space={n: list(v) for n, v in plan.space.items()},
        timing=Timing((index_s,), tuple(seconds)),
    )
    return finish(result, out_path, figures)


@dataclass
class _Plan:
    """One retriever's part of the grid, checked before any loading."""

    spec: str
    system: Retriever
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
    given: str | Retriever,
    k1: str | np.ndarray | None,
    b: str | np.ndarray | None,
    params: Mapping[str, str | Sequence[object]] | None,
    nested: bool,
    every_point: bool = True,
) -> _Plan:
    """The retriever, its grid and its defaults; with ``nested``, only the given parameters it has.

    ``given`` is a spec or a Retriever object; an object is never modified (a fresh one with its
    parameters is indexed, as compare does), and its full spec names it in the results. Every
    grid point is checked (``every_point``), or, for a search that scores only some of them,
    every value of each parameter with the others as they are.
    """
    from rankscope.workflows.common.systems import resolve_system

    name = given if isinstance(given, str) else "retriever"
    system = resolve_system(name, given).fresh_retriever()
    spec = given if isinstance(given, str) else system.spec()
    defaults = system.effective_params()
    if nested:  # each retriever takes the parameters it has in effect (not None: fb_terms without prf is not)
        k1, b = (k1 if defaults.get("k1") is not None else None), (b if defaults.get("b") is not None else None)
        params = {name: values for name, values in (params or {}).items() if defaults.get(name) is not None}
        if k1 is None and b is None and not params:
            return _Plan(spec, system, defaults, {})
    kinds = {p.name: p.kind for p in system.parameters}
    plan = _Plan(spec, system, defaults, _space(spec, defaults, kinds, k1, b, params))
    current = system.get_params()
    checked = plan.points if every_point else [{n: v} for n, values in plan.space.items() for v in values]
    for values in checked:  # a grid value the retriever refuses fails before any indexing
        point = dict(zip(plan.names, values)) if every_point else values
        type(system).check_params({**current, **{n: _plain(v) for n, v in point.items()}})
    return plan


def _space(
    retriever: str,
    defaults: Mapping[str, object],
    kinds: Mapping[str, type],
    k1: str | np.ndarray | None,
    b: str | np.ndarray | None,
    params: Mapping[str, str | Sequence[object]] | None,
) -> dict[str, list[object]]:
    """Grid values per parameter, checked against the retriever's parameters before any indexing."""
    if k1 is None and b is None and not params:
        k1, b = DEFAULT_K1, DEFAULT_B
    given = [(name, values, name) for name, values in (("k1", k1), ("b", b)) if values is not None]
    given += [(name, values, f"param {name}") for name, values in (params or {}).items()]
    names = [name for name, _, _ in given]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise RankscopeError(f"parameter {repeated[0]!r} is given twice")
    missing = [name for name in names if name not in defaults]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise RankscopeError(
            f"retriever {retriever!r} has no {' and '.join(missing)} parameter{plural} to tune "
            f"(it has {sorted(defaults)})"
        )
    return {
        name: parse_values(values, kinds[name], flag)
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
        (best[row_name], best[column_name]),
        (d[row_name], d[column_name]),
        result.metric,
        dataset=result.dataset,
        names=(row_name, column_name),
    )


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
    report.heading("Cross-validation folds").table(result.fold_table())
    report.heading("Grid")
    heatmap = heatmap_plot(result)
    if heatmap is not None:
        report.image("heatmap", heatmap, f"{result.metric} over the ({', '.join(result.params)}) grid")
    top = result.grid.sort_values("mean", ascending=False, kind="stable").head(10)
    report.table(top, caption="the ten best grid points", index=False)
    return provenance.add_section(report, result.provenance)
