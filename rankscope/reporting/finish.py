"""How every workflow ends: the result first, then, when a folder is asked for, its files.

A workflow builds its result (tables, findings, provenance) without touching the disk, then hands
it to :func:`finish`. With a folder, the result's own tables (:meth:`Finished.write_tables`),
``summary.json``, ``provenance.json`` and the report are written into a temporary folder that replaces
the old one in one rename (:func:`rankscope.core.outputs.write_folder`), so an interrupted run never
leaves a mix of old and new files. One function, so a new workflow cannot forget a file or write one
in place.

The work is shared by both cores: a forked child (:mod:`rankscope.core.forked`) draws the figures and
writes their files, while this process writes the tables, report.md and report.html with a mark where
each figure goes (the report's plots are drawn only when first needed, :class:`~rankscope.reporting.rendering.Plot`,
so this process never imports matplotlib), then fills the marks with the SVGs the child sends back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from rankscope.core import forked
from rankscope.core.outputs import write_folder
from rankscope.core.phases import phase
from rankscope.reporting import provenance
from rankscope.reporting.rendering import DEFAULT_FIGURES
from rankscope.reporting.report import Report, page_without_figures, to_markdown, write_figures, write_text
from rankscope.reporting.tables import to_json


class Finished(Protocol):
    """What a workflow's result offers: text for the terminal, a JSON-ready dict, a report, its tables
    as files, the record of what produced it and the files written (a frozen dataclass field)."""

    @property
    def provenance(self) -> provenance.Provenance: ...
    @property
    def files(self) -> tuple[Path, ...]: ...

    def to_text(self) -> str: ...

    def to_dict(self) -> dict[str, object]: ...

    def report(self) -> Report: ...

    def write_tables(self, folder: Path) -> list[Path]: ...


R = TypeVar("R", bound=Finished)


@phase("report")
def finish(result: R, out: Path | None, figures: Sequence[str] = DEFAULT_FIGURES) -> R:
    """``result`` as it is without ``out``; with it, the result after writing its folder (``files`` set)."""
    if out is None:
        return result

    def write(folder: Path) -> list[Path]:
        # the figures drawn and saved on the second core while the tables, report.md and the page are
        # written here (rankscope.core.forked; one after the other where it cannot fork)
        report = result.report()  # its plots are not drawn here
        # the child is handed the plots alone (each its function and data: kilobytes), not the result,
        # which the child would unpickle and make the report of again (Cranfield's compare: 10 MB)
        drawing = forked.start(write_figures, report.images, folder, tuple(figures))
        files = [
            *result.write_tables(folder),
            write_text(folder / "summary.json", to_json(result.to_dict())),
            provenance.write(result.provenance, folder),
        ]
        files.append(write_text(folder / "report.md", to_markdown(report, figures)))
        page = page_without_figures(report)
        with phase("figures"):  # waiting for the child (or, without one, drawing the figures here)
            drawn, inline = drawing()
        return [*files, *drawn, write_text(folder / "report.html", page.filled(inline))]

    return dataclasses.replace(result, files=write_folder(out, write))  # type: ignore[type-var]
