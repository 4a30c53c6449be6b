"""What produced a report: the one provenance record every workflow writes (issue 17).

A record holds each system's full description (the spec with every parameter, defaults
included, or the run file and its SHA-256), the rankscope version, the dataset's name and
fingerprint (:attr:`rankscope.corpora.dataset.Dataset.fingerprint`), the workflow's settings
(metrics, test, correction, seed, depth, ...), the date (UTC) and the command line
(:mod:`rankscope.core.invocation`; ``None`` when called from Python). compare, diagnose, tune and rag build it with :func:`record`, put
it under ``"provenance"`` in ``summary.json``, write it as ``provenance.json`` beside the CSV
files (a sidecar: ``pandas.read_csv`` reads every CSV unchanged) and show it at the end of
``report.md``/``report.html``; ``summary.tex`` carries it as LaTeX comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from rankscope.core import invocation
from rankscope.core.version import __version__
from rankscope.corpora.dataset import Dataset
from rankscope.reporting.report import Report, write_text
from rankscope.reporting.tables import to_json, wrap_paragraph

FILE = "provenance.json"


@dataclass(frozen=True)
class Provenance:
    """What produced a result; :meth:`to_dict` is what the files hold."""

    workflow: str
    dataset: str
    dataset_fingerprint: str
    systems: Mapping[str, str]
    settings: Mapping[str, object]
    judgments: Mapping[str, object] = field(default_factory=dict)
    """How the judgments were read (``conventions``) and where they came from (``sources``: who made them, when known)."""
    rankscope_version: str = __version__
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    command: str | None = field(default_factory=invocation.current)

    def to_dict(self) -> dict[str, object]:
        return {
            "workflow": self.workflow,
            "rankscope_version": self.rankscope_version,
            "created": self.created,
            "command": self.command,
            "dataset": {"name": self.dataset, "fingerprint": self.dataset_fingerprint},
            "systems": dict(self.systems),
            "settings": dict(self.settings),
            "judgments": dict(self.judgments),
        }

    def table(self) -> pd.DataFrame:
        """The record as two columns (what the reports show): one row per item, one per system."""
        rows = [
            ("rankscope", self.rankscope_version),
            ("created (UTC)", self.created),
            ("command", self.command or f"Python: rankscope.{self.workflow}(...)"),
            ("dataset", f"{self.dataset} (fingerprint sha256 {self.dataset_fingerprint})"),
            *((f"system {name}", description) for name, description in self.systems.items()),
            *((name, _shown(value)) for name, value in self.settings.items()),
            *((f"judgments: {name}", _shown(value)) for name, value in self.judgments.items() if name != "sources"),
        ]
        return pd.DataFrame(rows, columns=["item", "value"])

    def latex_comment(self) -> str:
        """The record as LaTeX comment lines (``%``), to head a table a paper includes."""
        return "".join(f"% {item}: {value}\n" for item, value in self.table().itertuples(index=False))


def add_section(report: Report, provenance: Provenance) -> Report:
    """The record as the report's last section."""
    return report.heading("Provenance").table(
        provenance.table(), caption=f"what produced this report; also in {FILE} and summary.json", index=False
    )


def write(provenance: Provenance, out: Path) -> Path:
    """``provenance.json`` in the report folder: the record for every file beside it (CSV files stay plain tables)."""
    return write_text(out / FILE, to_json(provenance.to_dict()))


def record(workflow: str, dataset: Dataset, systems: Mapping[str, str], **settings: object) -> Provenance:
    """The provenance of a ``workflow`` run on ``dataset`` with ``systems`` (name -> full description)."""
    judgments = judgments_record(dataset, workflow)
    return Provenance(workflow, dataset.name, dataset.fingerprint, dict(systems), settings, judgments)


def judgments_caption(provenance: Provenance) -> str:
    """The sentence under a table: where its judgments came from and how they were read."""
    found = provenance.judgments
    if not found:
        return ""
    return f"Judgments: {found['provenance']}. Read as: {found['conventions']}."


def caption_lines(provenance: Provenance) -> list[str]:
    """:func:`judgments_caption` as the terminal lines under a result's table (a blank line, then the
    sentence wrapped to the terminal's width); none when the result was scored without judgments."""
    caption = judgments_caption(provenance)
    return ["", wrap_paragraph(caption)] if caption else []


def judgments_record(dataset: Dataset, workflow: str = "") -> dict[str, object]:
    """How ``dataset``'s judgments were read (with ``workflow``'s rule for queries without a relevant judgment:
    :data:`~rankscope.evaluation.conventions.FOLLOWING`, else trec_eval's and why) and, when the loader knew,
    where they came from and who made them."""
    from rankscope.evaluation.conventions import FOLLOWING, WHY_COUNTED, label_conventions, queries_without_relevant

    sources = dataset.label_sources
    counts = queries_without_relevant(dataset.qrels)
    return {
        "conventions": label_conventions(
            dataset.qrels["relevance"], 1, workflow in FOLLOWING, counts, WHY_COUNTED.get(workflow, "")
        ),
        "provenance": "not recorded (judgments given in memory)" if sources is None else sources.describe(),
        "sources": None if sources is None else sources.to_dict(),
    }


def _shown(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)
