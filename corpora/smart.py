"""The classic SMART / Glasgow test collections: Cranfield, CISI, CACM, MED, ADI, TIME, NPL.

Most use the SMART record layout: ``.I <id>`` starts a record and one-letter
markers (``.T`` title, ``.A`` authors, ``.B`` bibliography, ``.W`` abstract,
``.X`` citations, ``.N``/``.K``/``.C`` notes and keywords) start its sections.
TIME (``*TEXT``/``*FIND`` records ending at ``*STOP``) and NPL (records ended by a
``/`` line) use their own layouts. One parser per layout, plus a small
:class:`SmartSpec` per collection naming its files, sections and qrels format.

Mappings (also in docs/corpora.md):

- ids are numbers: leading zeros are dropped everywhere (``.I 001`` and ``01`` in a
  qrels file are both query ``"1"``), so queries and qrels agree;
- title is the ``.T`` section, text the ``.W`` section (Cranfield's ``.W`` repeats
  the title, as distributed); ``.A .B .X .N .K .C`` are not text and are dropped;
- Cranfield's ``cranqrel`` numbers queries by their position in ``cran.qry`` (whose
  ``.I`` ids skip numbers: 001, 002, 004, 008, ...), so Cranfield queries are
  **renumbered 1..225 by position**; likewise ``TIME.REL`` numbers documents by
  position in ``TIME.ALL``, so TIME documents are numbered 1..423 by position;
- Cranfield relevance codes (1 = complete answer ... 4 = minimum interest, -1 = no
  interest) become graded relevance where higher is better: 1->4, 2->3, 3->2, 4->1,
  -1->0. Every code 1..4 stays relevant at trec_eval's ``relevance >= 1``; -1 is kept
  as a judged non-relevant document. The other collections list relevant pairs
  only: relevance 1 (MED's file states 1 itself);
- a section marker repeated inside a record continues that section (CISI lists one
  author per ``.A``); when that happens to a title or text section (Cranfield
  documents 576 and 578 carry stray ``.W`` lines) the Dataset gets a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, read_lines
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.checks import integer, numeric_id, refuse_repeats
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.paths import first_file

_MARKER = re.compile(r"\.([A-Z])(?:[ \t](.*))?")
"""A section marker and what follows it on the line (stripped by the caller). No lazy group meets a
trailing ``[ \t]*`` here: that pair backtracks quadratically on a long line of spaces and text."""
_TIME_HEADER = re.compile(r"\*(TEXT|FIND)[ \t]+(\S+).*")
_TIME_STOP = "*STOP"

CRANFIELD_GRADES: Mapping[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}


@dataclass(frozen=True)
class Record:
    """One document or query as found in the file: id, first line number, section texts."""

    id: str
    line: int
    sections: Mapping[str, str]
    repeated: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgment:
    query_id: str
    doc_id: str
    relevance: int
    line: int


# --- record layouts ------------------------------------------------------------------------
def parse_sections(path: PathLike) -> list[Record]:
    """Parse a SMART ``.I``/``.T``/``.W``... file into records (ids as found, not normalised)."""
    records: list[Record] = []
    current: dict[str, list[str]] | None = None
    start, rec_id, section = 0, "", ""
    repeated: list[str] = []
    for number, line in enumerate(read_lines(path), start=1):
        marker = _MARKER.fullmatch(line)
        if marker and marker.group(1) == "I":
            if current is not None:
                records.append(_finish(rec_id, start, current, repeated))
            rec_id = (marker.group(2) or "").strip(" \t")
            if not rec_id:
                raise FormatError(path, number, "'.I' line without an id; expected '.I <number>'")
            current, start, section, repeated = {}, number, "", []
        elif current is None:
            if line.strip():
                raise FormatError(path, number, f"expected a record start '.I <id>', found {line[:60]!r}")
        elif marker:
            section = marker.group(1)
            if section in current:
                repeated.append(f"{section} (line {number})")
            current.setdefault(section, [])
            rest = (marker.group(2) or "").strip(" \t")
            if rest:
                current[section].append(rest)
        elif not section:
            if line.strip():
                raise FormatError(path, number, f"text before any section marker in record {rec_id!r}: {line[:60]!r}")
        else:
            current[section].append(line)
    if current is not None:
        records.append(_finish(rec_id, start, current, repeated))
    if not records:
        raise FormatError(path, None, "no records found: expected lines '.I <id>' followed by sections like '.W'")
    return records


def parse_time(path: PathLike) -> list[Record]:
    """Parse TIME.ALL / TIME.QUE: ``*TEXT <n> ...`` or ``*FIND <n>`` records up to ``*STOP``."""
    records: list[Record] = []
    current: list[str] | None = None
    start, rec_id, stopped = 0, "", False
    for number, line in enumerate(read_lines(path), start=1):
        header = _TIME_HEADER.fullmatch(line.strip())
        if stopped:
            if line.strip():
                raise FormatError(path, number, f"text after {_TIME_STOP}: {line[:60]!r}")
        elif header or line.strip() == _TIME_STOP:
            if current is not None:
                records.append(_finish(rec_id, start, {"W": current}, []))
            current, start = [], number
            rec_id = header.group(2) if header else ""
            stopped = header is None
            if stopped:
                current = None
        elif current is None:
            if line.strip():
                raise FormatError(path, number, f"expected '*TEXT <n>' or '*FIND <n>', found {line[:60]!r}")
        else:
            current.append(line)
    if current is not None:
        records.append(_finish(rec_id, start, {"W": current}, []))
    if not records:
        raise FormatError(path, None, "no records found: expected '*TEXT <n>' or '*FIND <n>' lines")
    return records


def parse_slash_blocks(path: PathLike) -> list[Record]:
    """Parse NPL files: an id line, then text lines, ended by a line holding only ``/``."""
    records: list[Record] = []
    block: list[str] = []
    start = 0
    lines = read_lines(path)
    for number, line in enumerate(lines, start=1):
        if line.strip() == "/":
            if not block:
                raise FormatError(path, number, "'/' ends an empty record; expected an id line first")
            records.append(_finish(block[0].strip(), start, {"W": block[1:]}, []))
            block = []
        elif block or line.strip():
            if not block:
                start = number
            block.append(line)
    if block:  # the last record may lack its '/'
        records.append(_finish(block[0].strip(), start, {"W": block[1:]}, []))
    if not records:
        raise FormatError(path, None, "no records found: expected an id line, text lines and a '/' line")
    return records


def _finish(rec_id: str, line: int, sections: Mapping[str, list[str]], repeated: Sequence[str]) -> Record:
    texts = {name: "\n".join(lines).strip() for name, lines in sections.items()}
    return Record(rec_id, line, texts, tuple(repeated))


# --- qrels layouts ---------------------------------------------------------------------------
def _judgment_lines(path: PathLike, n_fields: int) -> Iterable[tuple[int, list[str]]]:
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != n_fields:
            raise FormatError(path, number, f"expected {n_fields} fields, found {len(fields)}: {line!r}")
        yield number, fields


def read_cranfield_qrels(path: PathLike) -> list[Judgment]:
    """``query_position doc_id code`` with codes mapped by :data:`CRANFIELD_GRADES`."""
    out = []
    for number, (q, d, code) in _judgment_lines(path, 3):
        grade = integer(code, path, number, "relevance code")
        if grade not in CRANFIELD_GRADES:
            raise FormatError(path, number, f"unknown Cranfield relevance code {code!r}; expected 1, 2, 3, 4 or -1")
        out.append(_judgment(path, number, q, d, CRANFIELD_GRADES[grade]))
    return out


def read_pair_qrels(path: PathLike) -> list[Judgment]:
    """``query_id doc_id 0 0.0`` lines (CISI, CACM, ADI): each listed pair is relevant (1)."""
    return [_judgment(path, number, f[0], f[1], 1) for number, f in _judgment_lines(path, 4)]


def read_med_qrels(path: PathLike) -> list[Judgment]:
    """MED.REL is TREC-style: ``query_id 0 doc_id relevance``."""
    return [
        _judgment(path, number, f[0], f[2], integer(f[3], path, number, "relevance"))
        for number, f in _judgment_lines(path, 4)
    ]


def read_list_qrels(path: PathLike) -> list[Judgment]:
    """TIME.REL: ``query_id doc doc doc ...`` per line; every listed document is relevant."""
    out: list[Judgment] = []
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split()
        if len(fields) == 1:
            raise FormatError(path, number, f"query {fields[0]!r} lists no documents; expected 'query_id doc_id ...'")
        out.extend(_judgment(path, number, fields[0], d, 1) for d in fields[1:])
    return out


def read_block_qrels(path: PathLike) -> list[Judgment]:
    """NPL rlv-ass: a query id line, document ids on the following lines, a ``/`` line."""
    out: list[Judgment] = []
    for record in parse_slash_blocks(path):
        docs = record.sections["W"].split()
        if not docs:
            raise FormatError(path, record.line, f"query {record.id!r} lists no documents")
        out.extend(_judgment(path, record.line, record.id, d, 1) for d in docs)
    return out


def _judgment(path: PathLike, line: int, query: str, doc: str, relevance: int) -> Judgment:
    query_id = numeric_id(query, path, line, "query id")
    return Judgment(query_id, numeric_id(doc, path, line, "document id"), relevance, line)


# --- collections -----------------------------------------------------------------------------
RecordParser = Callable[[PathLike], list[Record]]
QrelsParser = Callable[[PathLike], list[Judgment]]


@dataclass(frozen=True)
class SmartSpec:
    """What differs between the collections: file names, layouts, sections, id quirks."""

    name: str
    docs: tuple[str, ...]  # accepted file names, first is the distributed one
    queries: tuple[str, ...]
    qrels: tuple[str, ...]
    parse_docs: RecordParser = parse_sections
    parse_queries: RecordParser = parse_sections
    parse_qrels: QrelsParser = read_pair_qrels
    title_section: str | None = "T"
    text_section: str = "W"
    queries_by_position: bool = False
    docs_by_position: bool = False
    ordered: tuple[str, ...] = ()  # roles ("docs", "queries") whose ids increase down the distributed file
    consecutive: tuple[str, ...] = ()  # roles whose ids run 1, 2, 3, ... in the distributed file

    def find(self, folder: Path) -> dict[str, Path] | None:
        """The spec's three files in ``folder`` (plain or ``.gz``), or None if any is missing."""
        found = {}
        for role, names in (("docs", self.docs), ("queries", self.queries), ("qrels", self.qrels)):
            path = first_file(folder, names)
            if path is None:
                return None
            found[role] = path
        return found


SPECS: Mapping[str, SmartSpec] = {
    spec.name: spec
    for spec in (
        SmartSpec(
            "cranfield",
            ("cran.all.1400", "cran.all"),
            ("cran.qry",),
            ("cranqrel",),
            parse_qrels=read_cranfield_qrels,
            queries_by_position=True,
            ordered=("docs", "queries"),
            consecutive=("docs",),
        ),
        SmartSpec(
            "cisi",
            ("CISI.ALL",),
            ("CISI.QRY",),
            ("CISI.REL",),
            ordered=("docs", "queries"),
            consecutive=("docs", "queries"),
        ),
        SmartSpec("cacm", ("cacm.all",), ("query.text",), ("qrels.text",)),
        SmartSpec("med", ("MED.ALL",), ("MED.QRY",), ("MED.REL",), parse_qrels=read_med_qrels),
        SmartSpec("adi", ("ADI.ALL",), ("ADI.QRY",), ("ADI.REL",)),
        SmartSpec(
            "time",
            ("TIME.ALL",),
            ("TIME.QUE",),
            ("TIME.REL",),
            parse_docs=parse_time,
            parse_queries=parse_time,
            parse_qrels=read_list_qrels,
            title_section=None,
            docs_by_position=True,
        ),
        SmartSpec(
            "npl",
            ("doc-text",),
            ("query-text",),
            ("rlv-ass",),
            parse_docs=parse_slash_blocks,
            parse_queries=parse_slash_blocks,
            parse_qrels=read_block_qrels,
            title_section=None,
        ),
    )
}


def detect_smart(folder: PathLike) -> SmartSpec | None:
    """The collection whose files are in ``folder``, by file name, or None."""
    folder = Path(folder)
    return next((spec for spec in SPECS.values() if spec.find(folder) is not None), None)


@check_arguments(collection=Param(str, choices=tuple(SPECS), objects=(SmartSpec,), optional=True))
def read_smart(folder: PathLike, collection: str | SmartSpec | None = None, name: str | None = None) -> Dataset:
    """Load a SMART/Glasgow collection from ``folder`` (detected from file names if not given)."""
    folder = Path(folder)
    spec = SPECS[collection] if isinstance(collection, str) else collection or detect_smart(folder)
    if spec is None:
        raise FormatError(folder, None, f"no SMART collection files found; known layouts: {_layouts()}")
    files = spec.find(folder)
    if files is None:
        raise FormatError(folder, None, f"{spec.name} needs files {_file_names(spec)}")
    corpus, doc_notes = _records_table(files["docs"], spec.parse_docs(files["docs"]), spec, "docs")
    queries, query_notes = _records_table(files["queries"], spec.parse_queries(files["queries"]), spec, "queries")
    judgments = spec.parse_qrels(files["qrels"])
    for role, table, number in (("docs", corpus, _doc_number), ("queries", queries, _query_number)):
        if role in _by_position(spec):
            _refuse_positions_beyond(files["qrels"], judgments, number, files[role], len(table))
    qrels = _qrels_table(files["qrels"], judgments)
    return Dataset(
        name=name or spec.name,
        corpus=corpus.rename(columns={"id": "doc_id"}),
        queries=queries[["id", "text"]].rename(columns={"id": "query_id"}),
        qrels=qrels,
        warnings=tuple(doc_notes + query_notes),
    )


def _records_table(path: Path, records: list[Record], spec: SmartSpec, role: str) -> tuple[pd.DataFrame, list[str]]:
    """Normalise ids (or number by position), refuse duplicates, pick title/text sections.

    Also returns warnings: records whose title or text section was repeated, gaps in ids the
    distribution numbers 1, 2, 3, ... A file numbered by position refuses what would shift it
    (:func:`_refuse_shifts`).
    """
    ids = [numeric_id(record.id, path, record.line, "record id") for record in records]
    by_position = role in _by_position(spec)
    text_sections = (spec.title_section, spec.text_section)
    if by_position:
        _refuse_shifts(path, records, ids, spec, role)
        ids = [str(position) for position in range(1, len(records) + 1)]
    refuse_repeats(path, ids, [r.line for r in records], "id")
    notes = [
        f"{path.name}: record {record.id} repeats section(s) {', '.join(repeats)}; "
        "their lines were appended to that section"
        for record in records
        if (repeats := [r for r in record.repeated if r[0] in text_sections])
    ]
    if role in spec.consecutive and not by_position:
        notes.extend(_gaps(path, records, ids))
    table = pd.DataFrame(
        {
            "id": ids,
            "title": [r.sections.get(spec.title_section or "", "") for r in records],
            "text": [r.sections.get(spec.text_section, "") for r in records],
        }
    )
    return table, notes


def _by_position(spec: SmartSpec) -> tuple[str, ...]:
    """The roles whose records the qrels number by position in their file."""
    return ("docs",) * spec.docs_by_position + ("queries",) * spec.queries_by_position


def _refuse_shifts(path: Path, records: list[Record], ids: list[str], spec: SmartSpec, role: str) -> None:
    """Refuse a file numbered by position whose structure shows a record lost, repeated or moved.

    Numbered by position, such a file still parses, and every later record lands on another's
    judgments with no other sign: two records merged by a lost ``.I`` line repeat their text
    section; a repeated or moved record breaks the order of the ids the distribution keeps.
    """
    why = (
        f"the qrels number {role} by their position in {path.name}, so every later record would be judged "
        "as another; restore the distributed file"
    )
    for record in records:
        merged = [r for r in record.repeated if r[0] in (spec.title_section, spec.text_section)]
        if merged:
            raise FormatError(
                path, record.line, f"record {record.id} repeats section(s) {', '.join(merged)}: two records merged "
                f"(a lost '.I' line?); {why}"
            )  # fmt: skip
    if role not in spec.ordered:
        return
    for previous, record, before, this in zip(records, records[1:], ids, ids[1:]):
        if (len(this), this) <= (len(before), before):  # ids without leading zeros: numeric order
            raise FormatError(
                path, record.line, f"record {record.id} follows record {previous.id} (line {previous.line}), but ids "
                f"increase down the distributed file: a record repeated or moved; {why}"
            )  # fmt: skip


def _refuse_positions_beyond(
    qrels: Path, judgments: list[Judgment], number: Callable[[Judgment], str], path: Path, count: int
) -> None:
    """A judgment naming a position past the last record of a file numbered by position: a record was lost
    (every later one then holds the judgments of the one after it)."""
    beyond = next((j for j in judgments if len(number(j)) > len(str(count)) or int(number(j)) > count), None)
    if beyond is not None:
        raise FormatError(
            qrels, beyond.line, f"judges record {number(beyond)} by position, but {path.name} holds {count} records: "
            f"a record was lost or deleted, so every record after it would be judged as the one after it; "
            "restore the distributed file"
        )  # fmt: skip


def _query_number(judgment: Judgment) -> str:
    return judgment.query_id


def _doc_number(judgment: Judgment) -> str:
    return judgment.doc_id


def _gaps(path: Path, records: list[Record], ids: list[str]) -> list[str]:
    """Warnings for ids that skip numbers in a file the distribution numbers 1, 2, 3, ...: a record deleted,
    or merged into the one before by a lost ``.I`` line."""
    notes = []
    for record, before, this in zip(records[1:], ids, ids[1:]):
        if len(before) <= 18 and this != str(int(before) + 1):  # ids of 19 digits or more are not the distribution's
            notes.append(
                f"{path.name}: record ids jump from {before} to {this} (line {record.line}), but the distributed "
                "file numbers its records without gaps: a record deleted, or merged into the one before by a lost "
                "'.I' line"
            )
    return notes


def _qrels_table(path: Path, judgments: list[Judgment]) -> pd.DataFrame:
    """Judgments as a table; a (query, document) pair listed twice is an error naming both lines."""
    refuse_repeats(
        path,
        [(j.query_id, j.doc_id) for j in judgments],
        [j.line for j in judgments],
        "judgment of query, document",
        grades=[j.relevance for j in judgments],
    )
    if not judgments:
        raise FormatError(path, None, "no judgments found")
    return pd.DataFrame(
        {
            "query_id": [j.query_id for j in judgments],
            "doc_id": [j.doc_id for j in judgments],
            "relevance": [j.relevance for j in judgments],
        }
    )


def _file_names(spec: SmartSpec) -> str:
    return ", ".join(names[0] for names in (spec.docs, spec.queries, spec.qrels))


def _layouts() -> str:
    return "; ".join(f"{spec.name}: {_file_names(spec)}" for spec in SPECS.values())
