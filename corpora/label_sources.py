"""Where a dataset's judgments came from and who made them: people, a judge model, or a question generator.

A collection folder written by ``rankscope collection export`` keeps ``judgments.tsv`` beside its
qrels: every merged pair with its ``source`` (``human:alice``, ``openai:MODEL``, ``generated:MODEL``).
The loader reads it when it is there, so every report can say what its judgments are made of
(:class:`LabelSources`); without it, the record says only where the qrels were read from.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rankscope.core.errors import FormatError
from rankscope.core.fileio import read_lines

RECORD = "judgments.tsv"
"""The provenance record a collection folder keeps beside its qrels (``rankscope collection export``)."""

MADE_OF = "collection.json"
"""What ``collection export`` says its labels are made of: warnings (agreement never measured), the judges'
agreement with people, the questions left out; every report on the folder repeats it (:attr:`LabelSources.notes`)."""

KINDS = ("human", "judge", "generated", "unknown")
"""Who made a label: a person, a judge (a model or any other labeller), a question generator (the
question's own target), or not recorded (a pair of the qrels the record does not list)."""


def kind_of(source: str) -> str:
    """``human:alice`` and ``human`` are human, ``generated:MODEL`` generated, any other source a judge."""
    head = source.split(":", 1)[0]
    return head if head in ("human", "generated") else "judge"


@dataclass(frozen=True)
class LabelSources:
    """``origin``: where the qrels were read from; ``counts``: judged pairs per kind of :data:`KINDS`
    (empty when nothing records who made them); ``record``: the file that said so."""

    origin: str
    counts: Mapping[str, int]
    record: str | None = None
    notes: tuple[str, ...] = ()
    """What the collection's export said of them (:data:`MADE_OF`): agreement or its warning, questions left out."""

    def shares(self) -> dict[str, float]:
        total = sum(self.counts.values())
        return {kind: count / total for kind, count in self.counts.items()} if total else {}

    def describe(self) -> str:
        """``from DIR: 60 human (60%), 40 judge (40%) (sources in DIR/judgments.tsv)`` or, unrecorded, where from."""
        if not self.counts:
            return f"from {self.origin}; who made them is not recorded (no {RECORD} beside them)"
        shares = self.shares()
        parts = ", ".join(f"{count:,} {kind} ({shares[kind]:.0%})" for kind, count in self.counts.items())
        return f"from {self.origin}: {parts} (sources in {self.record})" + "".join(f"; {note}" for note in self.notes)

    def to_dict(self) -> dict[str, object]:
        return {
            "origin": self.origin,
            "counts": dict(self.counts),
            "shares": self.shares(),
            "record": self.record,
            "notes": list(self.notes),
        }


def count_kinds(pairs: Iterable[tuple[str, str]], source_of: Mapping[tuple[str, str], str]) -> dict[str, int]:
    """Pairs per kind (:data:`KINDS` order, kinds with no pair left out); a pair ``source_of`` lacks is unknown."""
    found = Counter(kind_of(source_of[pair]) if pair in source_of else "unknown" for pair in pairs)
    return {kind: found[kind] for kind in KINDS if found[kind]}


def read_sources(path: Path) -> dict[tuple[str, str], str]:
    """``(query_id, doc_id) -> source`` from a ``judgments.tsv`` (tab-separated, with a header)."""
    lines = read_lines(path)
    rows = csv.reader(lines, delimiter="\t")
    header = next(rows, [])
    if not {"query_id", "doc_id", "source"} <= set(header):
        raise FormatError(path, 1, f"expected a header with query_id, doc_id and source, found {header}")
    at = [header.index(column) for column in ("query_id", "doc_id", "source")]
    sources = {}
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise FormatError(path, number, f"{len(row)} fields, the header has {len(header)}")
        query_id, doc_id, source = (row[i] for i in at)
        sources[(query_id, doc_id)] = source
    return sources


def file_sources(qrels: object, path: str) -> LabelSources:
    """Where a qrels file's judgments (a table or a :class:`~rankscope.corpora.trec.CodedTable`) came from
    and, from a :data:`RECORD` beside the file, who made them: one reading for evaluate and compare."""
    from rankscope.corpora.trec import CodedTable

    if isinstance(qrels, CodedTable):
        pairs: Iterable[tuple[str, str]] = zip(qrels.query_names[qrels.query], qrels.doc_names[qrels.doc])
    else:
        pairs = zip(qrels["query_id"], qrels["doc_id"])  # type: ignore[index]
    return folder_sources(Path(path).parent, pairs, path)


def folder_sources(folder: Path, pairs: Iterable[tuple[str, str]], origin: str) -> LabelSources:
    """The record of ``folder`` (its :data:`RECORD`, if any) for the judged ``pairs`` read from ``origin``."""
    path = folder / RECORD
    if not path.is_file():
        return LabelSources(origin, {})
    return LabelSources(origin, count_kinds(pairs, read_sources(path)), str(path), made_of(folder / MADE_OF))


def made_of(path: Path) -> tuple[str, ...]:
    """The notes of a collection's :data:`MADE_OF`: its warnings, the judges' agreement with people, the
    questions left out (none when the file is not there)."""
    from rankscope.core.jsonstrict import loads
    from rankscope.core.printable import printable

    if not path.is_file():
        return ()
    try:
        record = loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise FormatError(path, 1, f"not valid JSON ({exc}); run rankscope collection export again") from None
    if not isinstance(record, dict):
        raise FormatError(
            path, 1, "not a collection's provenance (a JSON object); run rankscope collection export again"
        )
    notes = [f"warning: {text}" for text in record.get("warnings", []) if isinstance(text, str)]
    notes += [
        f"agreement {row['between']}: kappa {'undefined' if row.get('kappa') is None else format(row['kappa'], '.3f')} "
        f"on {row.get('pairs')} pairs"
        for row in record.get("agreement", [])
        if isinstance(row, dict) and row.get("between") == "people and judges"
    ]
    left = record.get("left_out", {})
    if isinstance(left, dict) and left:
        notes.append(f"questions left out: {', '.join(f'{q} ({why})' for q, why in left.items())}")
    return tuple(printable(note) for note in notes)  # the file may have been edited: shown, never obeyed
