"""What a rag run shows: :class:`RagResult` (the systems' scores within each token budget, the tests
against whole documents, the tokens to the first evidence) as text, plain data, tables and a report.
:mod:`.workflow` computes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.evaluation.marks import ALPHA, GRID_CAPTION, legend, mark_summary, significance_grid
from rankscope.reporting import plots, provenance
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, file_stem, write_csv, write_runs
from rankscope.reporting.tables import records, text_table, wrap_paragraph


@dataclass(frozen=True)
class RagResult:
    """Everything ``rag`` produced, as DataFrames.

    ``summary``: index system, one column per metric (means; higher is better).
    ``per_query``: long ``system, query_id, metric, value``. ``significance``: the columns of
    :func:`evaluation.significance.compare_results`, against ``baseline``. ``tokens``: long
    ``system, query_id, tokens_to_first`` (NaN: no evidence within the depth). ``chunks``:
    per system the number of chunks, their mean length, the median/75th-percentile tokens
    to the first evidence, the share of queries reaching none, and the mean number of
    distinct documents among the top 10 chunks. ``runs``: each system's chunk run.
    """

    dataset: str
    baseline: str
    budgets: tuple[int, ...]
    evidence: str
    counter: str
    test: str
    depth: int
    summary: pd.DataFrame
    per_query: pd.DataFrame
    significance: pd.DataFrame
    tokens: pd.DataFrame
    chunks: pd.DataFrame
    findings: tuple[str, ...]
    provenance: Provenance
    runs: Mapping[str, pd.DataFrame] = field(repr=False)
    files: tuple[Path, ...] = ()
    chunk_tables: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """Counts, not the tables (a notebook cell shows one line)."""
        return f"RagResult({self.dataset!r}: {len(self.summary)} systems, budgets {list(self.budgets)})"

    def marked(self) -> pd.DataFrame:
        """The summary as text with the best and significance marks (see :data:`rankscope.evaluation.marks.LEGEND`)."""
        marked = mark_summary(self.summary, self.significance, self.baseline)
        marked.index.name = "system"
        return marked

    def legend(self) -> str:
        return legend(self.test, "systems")

    def to_text(self) -> str:
        lines = [
            wrap_paragraph(f"token counts: {self.counter}; evidence: {self.evidence}"),
            "",
            text_table(self.marked()),
            "",
            wrap_paragraph(self.legend()),
            *provenance.caption_lines(self.provenance),
            "",
            text_table(self.shown_chunks(), digits=2),
            "",
            *(wrap_paragraph(f"- {finding}") for finding in self.findings),
        ]
        return "\n".join(lines)

    def shown_chunks(self) -> pd.DataFrame:
        """The chunk statistics as people read them: token counts in whole tokens (716, not 715.5)."""
        whole = ["median_tokens_to_first", "p75_tokens_to_first"]
        return self.chunks.assign(**{c: self.chunks[c].round().astype("Int64") for c in whole})

    def report(self) -> Report:
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """summary.csv, per_query.csv, significance.csv, tokens.csv, chunks.csv (statistics), a TREC run
        per system and the chunk table of each chunking, ``chunk_table.<chunking>.csv`` (chunk_id,
        doc_id, position, start, end, tokens: what the runs' ``DOC#N`` ids mean, for other tools)
        (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        return [
            write_csv(self.summary, out / "summary.csv"),
            write_csv(self.per_query, out / "per_query.csv", index=False),
            write_csv(self.significance, out / "significance.csv", index=False),
            write_csv(self.tokens, out / "tokens.csv", index=False),
            write_csv(self.chunks, out / "chunks.csv"),
            *write_runs(self.runs, out),
            *(
                write_csv(table, out / f"chunk_table.{file_stem(spec)}.csv", index=False)
                for spec, table in self.chunk_tables.items()
            ),
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "baseline": self.baseline,
            "budgets": list(self.budgets),
            "evidence": self.evidence,
            "token_counts": self.counter,
            "test": self.test,
            "correction": "holm",
            "alpha": ALPHA,
            "depth": self.depth,
            "mean": {name: row.to_dict() for name, row in self.summary.iterrows()},
            "chunks": {name: row.to_dict() for name, row in self.chunks.iterrows()},
            "significance": records(self.significance, index=False),
            "findings": list(self.findings),
            "provenance": self.provenance.to_dict(),
        }


def build_report(result: RagResult) -> Report:
    """Summary with marks, significance, chunk statistics, budget curves and the tokens-to-evidence curves."""
    report = Report(f"rankscope rag: {result.dataset}")
    report.paragraph(
        f"{len(result.summary)} systems (chunking / retriever) on {result.dataset}, searched to depth "
        f"{result.depth} chunks; token counts: {result.counter}; evidence: {result.evidence}. "
        "The context for a budget of B tokens holds the top chunks in rank order while their running total "
        "stays within B; the first chunk that would cross B ends it (never truncated, nothing later slipped in)."
    )
    report.heading("Findings").bullets(list(result.findings))
    report.heading("Summary").table(result.marked(), caption=result.legend())
    report.heading("Chunks and tokens to the first evidence").table(result.shown_chunks())
    curves = {
        name: pd.DataFrame(
            {
                "hit": [row[f"hit@{b}tok"] for b in result.budgets],
                "recall": [row[f"recall@{b}tok"] for b in result.budgets],
            },
            index=pd.Index(result.budgets, name="B"),
        )
        for name, row in result.summary.iterrows()
    }
    report.heading("Hit and recall within a token budget")
    report.image(
        "budget_curves",
        plots.cutoff_curves(curves, axis="B", xlabel="context budget B (tokens)", dataset=result.dataset),
        "Hit@B tokens and Recall@B tokens against the budget, one line per chunking / retriever",
    )
    distributions = {
        name: frame["tokens_to_first"].to_numpy(dtype=np.float64)
        for name, frame in result.tokens.groupby("system", sort=False)
    }
    report.image(
        "tokens_to_first",
        plots.tokens_to_first(distributions, result.budgets, dataset=result.dataset),
        "Share of queries whose first evidence is within T tokens of context (budgets dashed)",
    )
    report.heading(f"Significance against {result.baseline}").table(
        significance_grid(result.significance, list(result.summary.columns)),
        caption=GRID_CAPTION,
    )
    return provenance.add_section(report, result.provenance)
