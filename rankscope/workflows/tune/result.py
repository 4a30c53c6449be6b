"""What a tuning run shows: :class:`TuneResult` (the grid, the folds' choices, the gain and its error
bar) as text, plain data, tables and a report with the heatmap. :mod:`.workflow` computes it."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.reporting import plots, provenance
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.rendering import Plot
from rankscope.reporting.report import Report, write_csv
from rankscope.reporting.tables import records, terminal_width, text_table
from rankscope.workflows.common.fanout import Timing
from rankscope.workflows.tune.crossval import CrossValidation, RepeatedCrossValidation, best_column
from rankscope.workflows.tune.gain import GainTest
from rankscope.workflows.tune.grid import SHORTHANDS, plain


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
        return {**{p: plain(row[p]) for p in self.params}, "score": float(row["mean"])}

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


def heatmap_plot(result: TuneResult) -> Plot | None:
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
