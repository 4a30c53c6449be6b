"""What ``rankscope judge`` shows: :class:`JudgeResult` (the pool's counts, the merged labels and qrels,
the systems' judge shares, and with a study the audit, the human sample's intervals and agreement, the
recall beyond the pool) as text, plain data, tables and a report. :mod:`.workflow` computes it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rankscope.evaluation.ppi import METHODS, PPIResult
from rankscope.judging.audit import ProbeResult
from rankscope.judging.base import JudgeIdentity
from rankscope.reporting import provenance
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, write_csv, write_text
from rankscope.reporting.tables import text_table
from rankscope.workflows.common.judgments import HUMAN_SAMPLE, LABELS, POPULATION, QRELS, Judgments
from rankscope.workflows.judge.outside import CAPTION as OUTSIDE_CAPTION
from rankscope.workflows.judge.outside import Outside

SYSTEMS_CAPTION = (
    "Per system, shares of its top 10 rows: labelled by humans, labelled by the judge alone (the pool's "
    "holes it filled), and its invalid and failed replies there (holes left open)"
)
AUDIT_CAPTION = (
    "Grade shift (second version minus first) on perturbed pairs a fair assessor grades alike; flagged when "
    "a sign test gives p < 0.01 and the mean moves at least 0.1 grade (docs/judges.md)"
)

INTERVALS_CAPTION = (
    "each system's mean under the judge's labels alone (naive) and corrected by the human sample (PPI, PPI++), "
    "with 95% intervals (Student's t, finite-population corrected: docs/intervals.md); truth = the mean under "
    "the full human judgments (blind study) and whether each covered it"
)


@dataclass(frozen=True)
class JudgeResult:
    """What judging the pool did: counts, per-system shares, every pooled label and the merged qrels."""

    dataset: str
    judge: JudgeIdentity
    depth: int
    rejudge: bool
    counts: dict[str, int]
    systems: pd.DataFrame  # index system: judge_share@10, invalid@10, failed@10, human_share@10
    labels: pd.DataFrame = field(repr=False)  # LABEL_COLUMNS
    qrels: pd.DataFrame = field(repr=False)  # merged, query_id doc_id relevance
    provenance: Provenance
    warnings: tuple[str, ...] = ()
    audit: tuple[ProbeResult, ...] = ()
    ppi: PPIResult | None = None
    agreement: dict[str, Any] | None = None
    human_sample: pd.DataFrame | None = field(default=None, repr=False)  # the sample's human qrels
    population: tuple[str, ...] | None = None  # the queries the sample was drawn from
    files: tuple[Path, ...] = ()
    outside: Outside | None = None  # --outside-pool: R and recall beyond everything judged
    seconds: float = field(default=0.0, compare=False)  # the calls' wall time: not a count, it varies run to run

    @property
    def calls_per_second(self) -> float:
        return self.counts["calls"] / self.seconds if self.seconds > 0 else 0.0

    def judgments(self) -> Judgments:
        """The labels as ``compare`` scores with them: what :func:`~rankscope.workflows.common.judgments.read_judgments`
        reads back from the folder this result writes."""
        return Judgments(None, self.qrels, self.labels, self.human_sample, self.population, self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "judge": {"id": self.judge.key, **self.judge.to_dict()},
            "depth": self.depth,
            "rejudge": self.rejudge,
            **self.counts,
            "calls_per_second": round(self.calls_per_second, 2),
            "systems": self.systems.to_dict("index"),
            "warnings": list(self.warnings),
            "audit": {r.probe: r.to_dict() for r in self.audit},
            "ppi": None if self.ppi is None else self.ppi.to_dict(),
            "agreement": self.agreement,
            "outside": None if self.outside is None else self.outside.to_dict(),
            "provenance": self.provenance.to_dict(),
        }

    def interval_table(self) -> pd.DataFrame:
        """Per system: the truth (a blind study's), and each method's estimate and interval (and coverage)."""
        return interval_table(self.ppi.means) if self.ppi is not None else pd.DataFrame()

    def audit_table(self) -> pd.DataFrame:
        return pd.DataFrame({r.probe: r.to_dict() for r in self.audit}).T.rename_axis("audit probe")

    def report(self) -> Report:
        """The counts, the systems' shares and the audit as a :class:`~rankscope.reporting.report.Report`."""
        report = Report(f"rankscope judge: {self.dataset}")
        report.paragraph(self.to_text().split("\n\n")[0].replace("\n", "; "))
        report.heading("Systems").table(self.systems, caption=SYSTEMS_CAPTION)
        if self.ppi is not None:
            report.heading(f"Intervals of mean {self.ppi.metric}").table(
                self.interval_table(), caption=INTERVALS_CAPTION
            )
        if self.audit:
            report.heading("Audit").table(self.audit_table(), caption=AUDIT_CAPTION)
        if self.outside is not None:
            report.heading("Recall beyond the pool").table(self.outside.table(), caption=OUTSIDE_CAPTION, index=False)
        if self.warnings:
            report.heading("Warnings").bullets(list(self.warnings))
        return provenance.add_section(report, self.provenance)

    def write_tables(self, out: Path) -> list[Path]:
        """qrels.txt (merged, TREC), labels.jsonl (one line per pooled pair and source), systems.csv."""
        from rankscope.corpora.trec import write_trec_qrels

        write_trec_qrels(self.qrels, out / QRELS)
        written = [out / QRELS]
        if self.human_sample is not None:  # what compare --judgments corrects the judge with, and over which queries
            write_trec_qrels(self.human_sample, out / HUMAN_SAMPLE)
            written += [
                out / HUMAN_SAMPLE,
                write_text(out / POPULATION, "".join(f"{q}\n" for q in self.population or ())),
            ]
        lines = [
            json.dumps({**row, "label": None if pd.isna(row["label"]) else int(row["label"])}, ensure_ascii=False)
            for row in self.labels.astype(object).to_dict("records")
        ]
        if self.outside is not None:
            written.append(write_csv(self.outside.sample, out / "outside_sample.csv", index=False))
            written.append(write_csv(self.outside.estimate.queries, out / "outside_queries.csv", index=False))
            written.append(write_csv(self.outside.estimate.per_query, out / "outside_recall.csv", index=False))
        return [
            *written,
            write_text(out / LABELS, "".join(line + "\n" for line in lines)),
            write_csv(self.systems, out / "systems.csv"),
        ]

    def to_text(self) -> str:
        c = self.counts
        lines = [
            f"judge {self.judge} (prompt {self.judge.prompt_hash or '-'}) on {self.dataset}, pool depth {self.depth}",
            f"pooled pairs {c['pairs']}: {c['human_pairs']} judged by humans, {c['unjudged_pairs']} not "
            f"({c['distinct_asked']} distinct texts asked{' with rejudging' if self.rejudge else ''}; "
            f"{c['injection_flagged']} documents holding text addressed to the judge)",
            f"judge calls {c['calls']} ({self.calls_per_second:.1f} a second), cache hits {c['cache_hits']}, "
            f"invalid replies {c['invalid']}, failed {c['failed']}, "
            + (f"{c['tokens']:,} tokens" if c["tokens"] else f"~{c['estimated_tokens']:,} tokens"),
            "",
            text_table(self.systems),
        ]
        if self.audit:
            lines += ["", text_table(self.audit_table())]
        if self.outside is not None:
            lines += ["", self.outside.to_text()]
        if self.ppi is not None:
            lines += ["", f"{self.ppi.metric}: {INTERVALS_CAPTION}", text_table(self.interval_table())]
        if self.agreement is not None:
            labels = self.agreement["labels"]
            lines += [
                "",
                f"agreement on the {labels['n_pairs']} pairs both labelled: Cohen's kappa {labels['kappa']:.3f}, "
                f"quadratic {labels['kappa_quadratic']:.3f}",
            ]
            if self.agreement["rankings"]:
                lines.append(text_table(pd.DataFrame(self.agreement["rankings"]), index=False))
        return "\n".join([*lines, *provenance.caption_lines(self.provenance)])

    def __repr__(self) -> str:
        return f"JudgeResult({self.dataset!r}: {self.counts['pairs']} pooled pairs, {self.counts['calls']} calls)"


def interval_table(means: pd.DataFrame) -> pd.DataFrame:
    """One row per system: truth (if known), then per method the estimate, the interval and its coverage."""
    table = pd.DataFrame(index=pd.Index(means["system"], name="system"))
    if "truth" in means:
        table["truth"] = means["truth"].to_numpy()
    for method in METHODS:
        table[f"{method}"] = means[f"{method}_estimate"].to_numpy()
        table[f"{method} 95% CI"] = [
            f"[{low:.4f}, {high:.4f}]" for low, high in zip(means[f"{method}_low"], means[f"{method}_high"])
        ]
        if f"{method}_covered" in means:
            table[f"{method} covered"] = means[f"{method}_covered"].to_numpy()
    return table
