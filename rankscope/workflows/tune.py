"""Tune BM25's k1 and b on a grid, and report the gain a user can expect on new queries.

The corpus is tokenised and counted once; each grid point only re-weights the
stored counts (``set_params(k1=..., b=...)``). Per-query metric values of every
point are kept, so k-fold cross-validation over queries can choose parameters
on the training folds and score them on the held-out fold: the best in-sample
gain is printed next to that cross-validated gain, which is the honest one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.outputs import check_output_folder, write_folder
from rankscope.core.progress import progress
from rankscope.workflows import plots
from rankscope.workflows.crossval import CrossValidation, best_column, cross_validate
from rankscope.workflows.grid import parse_range
from rankscope.workflows.report import Report, write_csv, write_report, write_text
from rankscope.workflows.runs import DatasetSource, resolve_dataset
from rankscope.workflows.tables import records, text_table, to_json

DEFAULT_K1 = "0.2:2.0:0.1"
DEFAULT_B = "0.0:1.0:0.05"
FULL_DEPTH = 1000


@dataclass(frozen=True)
class TuneResult:
    """A tuning run. ``grid``: one row per point (``point, k1, b, mean``) in grid order
    (k1 outer, b inner); ``per_query``: index query_id, one column per point."""

    dataset: str
    retriever: str
    metric: str
    grid: pd.DataFrame
    per_query: pd.DataFrame
    default: dict[str, float]
    cv: CrossValidation
    seed: int
    files: tuple[Path, ...] = field(default=())

    @property
    def best(self) -> dict[str, float]:
        """The point with the best mean on all queries (ties: first in grid order)."""
        row = self.grid.loc[best_column(self.per_query)]
        return {"k1": float(row["k1"]), "b": float(row["b"]), "score": float(row["mean"])}

    @property
    def in_sample_gain(self) -> float:
        return self.best["score"] - self.default["score"]

    @property
    def cv_gain(self) -> float:
        return self.cv.mean - self.default["score"]

    def fold_table(self) -> pd.DataFrame:
        """Per fold: the (k1, b) chosen on the other folds, its training and held-out means."""
        points = self.grid.loc[self.cv.choices["point"]]
        table = self.cv.choices.assign(k1=points["k1"].to_numpy(), b=points["b"].to_numpy())
        return table[["fold", "k1", "b", "train_mean", "test_mean", "n_test"]].set_index("fold")

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        best, folds = self.best, len(self.cv.choices)
        return {
            "dataset": self.dataset,
            "retriever": self.retriever,
            "metric": self.metric,
            "queries": len(self.per_query),
            "grid_points": len(self.grid),
            "default": self.default,
            "best": best,
            "in_sample_gain": self.in_sample_gain,
            "cross_validated": {"folds": folds, "seed": self.seed, "score": self.cv.mean, "gain": self.cv_gain},
            "fold_choices": records(self.fold_table()),
            "notes": self.edge_notes(),
        }

    def headline(self) -> list[str]:
        """The result in four lines: grid, defaults, best in-sample, cross-validated; plus edge notes."""
        d, best, m = self.default, self.best, self.metric
        n_k1, n_b = self.grid["k1"].nunique(), self.grid["b"].nunique()
        lines = [
            f"{self.retriever} on {self.dataset}: {m} over a {n_k1} x {n_b} grid ({len(self.grid)} points), "
            f"{len(self.per_query)} queries",
            f"  defaults             k1={d['k1']:g} b={d['b']:g}  {m} {d['score']:.4f}",
            f"  best on all queries  k1={best['k1']:g} b={best['b']:g}  {m} {best['score']:.4f}  "
            f"in-sample gain {self.in_sample_gain:+.4f}",
            f"  {len(self.cv.choices)}-fold CV (seed {self.seed})  held-out {m} {self.cv.mean:.4f}  "
            f"cross-validated gain {self.cv_gain:+.4f}  <- expect this on new queries",
        ]
        return lines + [f"  note: {note}" for note in self.edge_notes()]

    def to_text(self) -> str:
        folds = self.fold_table().astype({"k1": str, "b": str})
        return "\n".join([*self.headline(), "", text_table(folds)])

    def report(self) -> Report:
        """Result, folds and heatmap as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def edge_notes(self) -> list[str]:
        """Warn when the best point lies on the border of the grid: the optimum may lie outside it."""
        notes = []
        for name in ("k1", "b"):
            values = self.grid[name]
            value = self.best[name]
            if values.nunique() > 1 and value in (values.min(), values.max()):
                notes.append(f"the best {name}={value:g} is on the edge of the grid; consider widening --{name}")
        return notes


def search_depth(metric: str) -> int:
    """Documents to retrieve per query: the metric's cutoff (``ndcg@10`` needs 10), else 1000."""
    from rankscope.evaluation.metrics import parse_metric

    k = parse_metric(metric).k
    return FULL_DEPTH if k is None else k


def tune(
    dataset: DatasetSource = "cranfield",
    retriever: str = "bm25",
    k1: str | np.ndarray = DEFAULT_K1,
    b: str | np.ndarray = DEFAULT_B,
    metric: str = "ndcg@10",
    folds: int = 5,
    seed: int = 0,
    out: str | Path | None = None,
) -> TuneResult:
    """Grid-search (k1, b) for ``retriever``, cross-validate the choice, write files to ``out``."""
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    depth = search_depth(metric)
    k1s = parse_range(k1, "k1") if isinstance(k1, str) else np.asarray(k1, dtype=np.float64)
    bs = parse_range(b, "b") if isinstance(b, str) else np.asarray(b, dtype=np.float64)
    system = make_retriever(retriever)
    params = system.get_params()
    if "k1" not in params or "b" not in params:
        raise RankscopeError(f"retriever {retriever!r} has no k1 and b parameters to tune (it has {sorted(params)})")
    for x in k1s:  # a grid value the retriever refuses fails before any indexing
        for y in bs:
            type(system).check_params({**params, "k1": float(x), "b": float(y)})
    out_path = None if out is None else check_output_folder(out)  # before any computing
    data = resolve_dataset(dataset)
    system.index(data.corpus)

    def score() -> pd.Series:
        return evaluate(data.qrels, system.search(data.queries, k=depth), [metric]).wide()[metric]

    defaults = score()
    grid = pd.DataFrame([(x, y) for x in k1s for y in bs], columns=["k1", "b"]).rename_axis("point")
    columns = {}
    for point, x, y in progress(grid.itertuples(name=None), desc="grid", total=len(grid), unit="point"):
        system.set_params(k1=float(x), b=float(y))
        columns[point] = score()
    per_query = pd.DataFrame(columns)
    grid["mean"] = per_query.mean(axis=0).to_numpy()
    result = TuneResult(
        dataset=data.name,
        retriever=retriever,
        metric=metric,
        grid=grid,
        per_query=per_query,
        default={"k1": float(params["k1"]), "b": float(params["b"]), "score": float(defaults.mean())},
        cv=cross_validate(per_query, folds, seed),
        seed=seed,
    )
    if out_path is None:
        return result
    return replace(result, files=write_folder(out_path, partial(write_outputs, result)))


def heatmap_png(result: TuneResult) -> bytes:
    table = result.grid.pivot(index="k1", columns="b", values="mean")
    best, d = result.best, result.default
    return plots.heatmap(
        table.to_numpy(),
        list(table.index),
        list(table.columns),
        (best["k1"], best["b"]),
        (d["k1"], d["b"]),
        result.metric,
    )


def build_report(result: TuneResult) -> Report:
    """The tuning result, fold choices, heatmap and the ten best points."""
    report = Report(f"rankscope tune: {result.retriever} on {result.dataset}")
    report.paragraph(
        "The in-sample gain is the best grid point's gain on the queries it was chosen on; the "
        "cross-validated gain chooses (k1, b) on the training folds and scores the held-out fold, "
        "so it is what new queries can expect."
    )
    report.heading("Result").bullets([line.strip() for line in result.headline()])
    report.heading("Cross-validation folds").table(result.fold_table())
    report.heading("Grid").image("heatmap.png", heatmap_png(result), f"{result.metric} over the (k1, b) grid")
    top = result.grid.sort_values("mean", ascending=False, kind="stable").head(10)
    report.table(top, caption="the ten best grid points", index=False)
    return report


def write_outputs(result: TuneResult, out: Path) -> list[Path]:
    """grid.csv, folds.csv, summary.json and the report (with the heatmap)."""
    return [
        write_csv(result.grid, out / "grid.csv", index=False),
        write_csv(result.fold_table(), out / "folds.csv"),
        write_text(out / "summary.json", to_json(result.to_dict())),
        *write_report(build_report(result), out),
    ]
