"""``rankscope poolbias``: would each system keep its score had it not been pooled? (Zobel 1998)

Every system is run (or read) as compare does, the pool is every system's top ``depth`` per query,
and :func:`rankscope.evaluation.pool_bias.pool_bias` re-scores each system without the relevant
judgments only it brought to that pool. The table gives the drop of each metric and of the
system's rank; a flagged system's numbers rest on documents no other system found, so a new
system that finds other unjudged documents would be understated against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.progress import progress
from rankscope.evaluation.pool_bias import FLAG_DROP, pool_bias
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, write_csv
from rankscope.reporting.tables import text_table, wrap_paragraph
from rankscope.workflows.common.fanout import produce_runs
from rankscope.workflows.common.runs import DatasetSource, check_depth, resolve_dataset
from rankscope.workflows.common.systems import SystemLike, brief_description, descriptions, resolve_systems
from rankscope.workflows.options import Execution, Output

DEFAULT_SYSTEMS = ("tfidf", "bm25", "w2v")
DEFAULT_METRICS = ("map", "ndcg@10", "precision@10")
CAPTION = (
    "Leave one system out of the pool (Zobel 1998): the pool is every system's top {depth} per query; "
    "unique_relevant = relevant judgments only this system put there, removed before scoring it again; "
    "score / score_without = with every judgment / without those; drop = the difference (relative: of "
    "the score); rank / rank_without = its rank among the systems scored with every judgment (1 = best). "
    "Flagged (!) when it falls in rank or loses more than {flag:.0%} of its score: its number rests on "
    "documents no other system found, and a system pooled after it would be understated beside it"
)


@dataclass(frozen=True)
class PoolBiasResult:
    """``table``: one row per system and metric (the columns of :func:`rankscope.evaluation.pool_bias.pool_bias`);
    ``systems``: each system's full description; ``files``: what was written with ``out``."""

    dataset: str
    depth: int
    metrics: tuple[str, ...]
    table: pd.DataFrame
    systems: pd.DataFrame
    provenance: Provenance
    files: tuple[Path, ...] = ()

    @property
    def flagged(self) -> list[str]:
        """Systems flagged on any metric, in the systems' order."""
        flags = self.table.groupby("system", sort=False)["flagged"].any()
        return [str(name) for name, flag in flags.items() if flag]

    def shown(self) -> pd.DataFrame:
        """The table as the terminal shows it: one row per system and metric, numbers at 4 decimals."""
        table = self.table.assign(
            system=self.table["system"].map(lambda name: brief_description(str(name))),
            relative_drop=self.table["relative_drop"].map(lambda value: f"{value:.1%}"),
            flagged=self.table["flagged"].map(lambda flag: "!" if flag else ""),
        )
        return table.round(4).astype(object)

    def caption(self) -> str:
        return CAPTION.format(depth=self.depth, flag=FLAG_DROP)

    def table_text(self) -> str:
        """The table, its caption and the flagged systems as the terminal shows them (``compare --pool-bias`` too)."""
        flagged = ", ".join(self.flagged) or "none"
        return f"{text_table(self.shown(), index=False)}\n\n{wrap_paragraph(self.caption())}\nflagged: {flagged}"

    def to_text(self) -> str:
        return f"{self.table_text()}\n{wrap_paragraph(provenance.judgments_caption(self.provenance))}"

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "depth": self.depth,
            "metrics": list(self.metrics),
            "flag_drop": FLAG_DROP,
            "flagged": self.flagged,
            "rows": self.table.to_dict(orient="records"),
            "provenance": self.provenance.to_dict(),
        }

    def report(self) -> Report:
        report = Report(f"rankscope poolbias: {self.dataset}")
        report.paragraph(
            f"{len(self.systems)} systems on {self.dataset}, pool depth {self.depth}; flagged: "
            f"{', '.join(self.flagged) or 'none'}."
        )
        self.add_section(report)
        report.paragraph(provenance.judgments_caption(self.provenance))
        report.heading("Systems").table(self.systems)
        return provenance.add_section(report, self.provenance)

    def add_section(self, report: Report) -> Report:
        """The report's section: the table under its caption (``compare --pool-bias``'s report too)."""
        return report.heading("Leave one system out of the pool").table(self.shown(), caption=self.caption())

    def write_table(self, out: Path) -> Path:
        """pool_bias.csv (``compare --pool-bias`` writes it too)."""
        return write_csv(self.table, out / "pool_bias.csv", index=False)

    def write_tables(self, out: Path) -> list[Path]:
        return [self.write_table(out), write_csv(self.systems, out / "systems.csv")]


def poolbias(
    dataset: DatasetSource = "cranfield",
    retrievers: Sequence[SystemLike] | Mapping[str, SystemLike] = DEFAULT_SYSTEMS,
    metrics: Sequence[str] = DEFAULT_METRICS,
    depth: int = 100,
    out: str | Path | Output | None = None,
    *,
    execution: Execution = Execution(),
) -> PoolBiasResult:
    """Leave-one-system-out pool-bias test of ``retrievers`` (specs, Retrievers, runs or run files, as
    :func:`rankscope.workflows.compare` takes them) on ``dataset`` with a pool of each system's top ``depth``.

    Retrievers search to 1000; runs are scored as given. ``execution.scheduler`` makes each system's run a
    task there. Scores are :func:`rankscope.evaluation.evaluate`'s (trec_eval semantics).
    """
    from rankscope.evaluation.metrics import parse_metrics

    names = tuple(m.name for m in parse_metrics(metrics))
    check_depth(depth)
    systems = resolve_systems(retrievers)
    several(list(systems))  # before any system runs
    out_path, figures = Output.of(out).checked()
    data = resolve_dataset(dataset)
    runs = {
        name: produced.run
        for name, produced in progress(
            produce_runs(systems, data, None, execution.scheduler), desc="systems", total=len(systems)
        )
    }
    record = provenance.record(
        "poolbias", data, descriptions(systems), metrics=list(names), depth=depth, flag_drop=FLAG_DROP
    )
    result = pool_bias_result(data.name, data.qrels, runs, names, depth, descriptions(systems), record)
    return finish(result, out_path, figures)


def several(names: Sequence[str]) -> None:
    """The test needs a pool of several systems."""
    if len(names) < 2:
        raise RankscopeError(f"the pool-bias test needs at least two systems (a pool of several), got {list(names)}")


def pool_bias_result(
    dataset: str,
    qrels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    depth: int,
    described: Mapping[str, str],
    record: Provenance,
) -> PoolBiasResult:
    """The test of ``runs`` as a result, for ``rankscope poolbias`` and ``compare --pool-bias`` alike."""
    several(list(runs))
    systems = pd.DataFrame(
        {"description": [described[name] for name in runs]}, index=pd.Index(list(runs), name="system")
    )
    table = pool_bias(qrels, runs, metrics, depth)
    return PoolBiasResult(dataset, depth, tuple(metrics), table, systems, record)
