"""Tables people already have: JSONL, CSV or TSV files and pandas DataFrames, with a column mapping.

A mapping renames the user's columns to the schema's, ``{schema_name: their_name}``,
e.g. ``{"doc_id": "pid", "text": "passage"}``. An unmapped schema column is looked up
under its own name, else under the names other tools write (:data:`ALIASES`: Pyserini's
``id``/``contents``, BEIR's ``_id``, ranx's ``q_id``, ...) when exactly one of them is
there. The file format follows the extension (``.jsonl``, ``.csv``, ``.tsv``, each
optionally ``.gz``); CSV/TSV files need a header row, except a two-column ``.tsv`` corpus
or queries file whose first line names none of its columns: that is read as
``id<TAB>text`` lines without quoting, as MS MARCO and Pyserini ship them.
Values are read as text, so ids like ``"007"`` or ``"NA"`` stay as written.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pandas as pd

from rankscope.core.errors import FormatError, SchemaError
from rankscope.core.fileio import PathLike, read_text
from rankscope.core.params import check_arguments
from rankscope.corpora.checks import empty_table, id_problem, integer_problem, number_problem, refuse_repeats
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.jsonl import read_jsonl, string_problem
from rankscope.corpora.query_fields import QueriesFile
from rankscope.corpora.schema import KIND, KINDS, validate
from rankscope.corpora.stream import DELIMITERS

Columns = Mapping[str, str]
_KEYS = {
    "corpus": ("doc_id",),
    "queries": ("query_id",),
    "qrels": ("query_id", "doc_id"),
    "run": ("query_id", "doc_id"),
}
_OPTIONAL = {"corpus": {"title"}, "run": {"rank"}}
ALIASES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "corpus": {"doc_id": ("_id", "id", "docid"), "text": ("contents",)},
    "queries": {"query_id": ("_id", "id", "qid"), "text": ("query", "question")},
    "qrels": {"query_id": ("q_id", "qid", "query-id"), "doc_id": ("docid", "corpus-id"), "relevance": ("score",)},
    "run": {"query_id": ("q_id", "qid"), "doc_id": ("docid",)},
}
"""Other tools' names for a schema column, used when the column's own name is absent and exactly one is present."""
_HEADERLESS = {"corpus": ("doc_id", "text"), "queries": ("query_id", "text")}


@check_arguments(kind=KIND)
def read_table(path: PathLike, kind: str, columns: Columns | None = None) -> pd.DataFrame:
    """Read one table (``corpus``, ``queries``, ``qrels`` or ``run``) from a JSONL/CSV/TSV file.

    Errors name the file and line: a row with the wrong number of fields, a
    missing JSON field, a non-integer relevance, a repeated id or judgment.
    """
    path = Path(path)
    records, lines, mapping = table_records(path, kind, columns)
    frame = pd.DataFrame.from_records(_check_rows(path, records, lines, kind, mapping))
    title = mapping.get("title")
    if title in frame.columns:
        frame[title] = frame[title].fillna("")  # a JSONL corpus may give some documents no title
    table = from_frame(frame, kind, mapping, source=str(path))
    keys = list(zip(*(table[k] for k in _KEYS[kind])))
    grades = table["relevance"].tolist() if kind == "qrels" else None
    refuse_repeats(path, keys, lines, "/".join(_KEYS[kind]), grades)
    return table


def table_records(
    path: PathLike, kind: str, columns: Columns | None = None
) -> tuple[list[dict], list[int], dict[str, str]]:
    """A table file's rows as read (every field, values as the file wrote them), their line numbers, and
    the mapping of ``kind``'s columns to the file's names; :func:`read_table` checks and keeps the schema's
    columns, :mod:`rankscope.corpora.query_fields` reads the queries' other fields."""
    path = Path(path)
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix == ".jsonl":
        records, lines = _jsonl_records(path)
    elif suffix in DELIMITERS:
        text = read_text(path)
        names = headerless_names(text.partition("\n")[0], path, suffix, kind, columns)
        records, lines = _delimited_records(path, text, DELIMITERS[suffix], names)
    else:
        expected = "expected .jsonl, .csv or .tsv (optionally .gz)"
        raise FormatError(path, None, f"unknown table format {suffix!r}; {expected}")
    if not records:
        raise empty_table(path, kind)
    return records, lines, column_mapping(kind, columns, set().union(*records), str(path))


def from_frame(
    frame: pd.DataFrame, kind: str, columns: Columns | None = None, source: str = "<DataFrame>"
) -> pd.DataFrame:
    """Rename a DataFrame's columns by ``columns`` and validate it as ``kind`` (a new frame)."""
    mapping = column_mapping(kind, columns, set(map(str, frame.columns)), source)
    present = {theirs: ours for ours, theirs in mapping.items() if theirs in frame.columns}
    optional = _OPTIONAL.get(kind, set())
    missing = [
        f"{ours} (as {theirs!r})"
        for ours, theirs in mapping.items()
        if theirs not in frame.columns and ours not in optional
    ]
    if missing:
        found = list(map(str, frame.columns))
        raise SchemaError(f"{source}: {kind} table lacks {', '.join(missing)}; found columns {found}")
    return validate(frame[list(present)].rename(columns=present), kind, source)


def dataset_from_frames(
    name: str,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    qrels: pd.DataFrame,
    columns: Mapping[str, Columns] | None = None,
    split: str = "test",
) -> Dataset:
    """A Dataset from three DataFrames; ``columns`` maps each kind to its column mapping."""
    columns = columns or {}
    unknown = set(columns) - {"corpus", "queries", "qrels"}
    if unknown:
        raise ValueError(f"columns keys must be 'corpus', 'queries', 'qrels'; got {sorted(unknown)}")
    return Dataset(
        name=name,
        corpus=from_frame(corpus, "corpus", columns.get("corpus"), f"{name} corpus"),
        queries=from_frame(queries, "queries", columns.get("queries"), f"{name} queries"),
        qrels=from_frame(qrels, "qrels", columns.get("qrels"), f"{name} qrels"),
        split=split,
    )


def read_tabular_dataset(
    name: str,
    corpus: PathLike,
    queries: PathLike,
    qrels: PathLike,
    columns: Mapping[str, Columns] | None = None,
    split: str = "test",
) -> Dataset:
    """A Dataset from three table files (any mix of JSONL/CSV/TSV); the queries read as every questions
    file is (:mod:`rankscope.corpora.questions`, which reads its tables through this module)."""
    from rankscope.corpora.questions import read_questions_table

    columns = columns or {}
    return Dataset(
        name=name,
        corpus=read_table(corpus, "corpus", columns.get("corpus")),
        queries=read_questions_table(queries, columns.get("queries")),
        qrels=read_table(qrels, "qrels", columns.get("qrels")),
        split=split,
        queries_file=QueriesFile(Path(queries), "table", dict(columns.get("queries") or {})),
    )


def column_mapping(
    kind: str, columns: Columns | None, found: set[str] | None = None, source: str = "<table>"
) -> dict[str, str]:
    """Schema column -> the name it has in the table: as mapped, else its own, else the one alias in ``found``."""
    columns = dict(columns or {})
    unknown = set(columns) - set(KINDS[kind])
    if unknown:
        raise SchemaError(f"column mapping names {sorted(unknown)}, which are not {kind} columns {list(KINDS[kind])}")
    repeated = [name for name in dict.fromkeys(columns.values()) if list(columns.values()).count(name) > 1]
    if repeated:
        both = [col for col in KINDS[kind] if columns.get(col) == repeated[0]]
        raise SchemaError(
            f"{source}: the column mapping gives both the {kind}'s {' and '.join(both)} the column "
            f"{repeated[0]!r}; map each to a column of its own (CLI: --fields {','.join(f'{kind}.{c}=...' for c in both)})"
        )
    taken = set(columns.values())
    mapping = {}
    for col in KINDS[kind]:
        if col in columns or found is None or col in found:
            mapping[col] = columns.get(col, col)
            continue
        present = [alias for alias in ALIASES.get(kind, {}).get(col, ()) if alias in found and alias not in taken]
        if len(present) > 1:
            raise SchemaError(
                f"{source}: columns {present} could each be the {kind}'s {col}; "
                f"say which with a column mapping (CLI: --fields {col}=NAME)"
            )
        mapping[col] = present[0] if present else col
    return mapping


def headerless_names(first: str, path: Path, suffix: str, kind: str, columns: Columns | None) -> list[str] | None:
    """The column names of a headerless ``id<TAB>text`` corpus or queries file, or None when it has a header.

    Headerless: a ``.tsv`` whose ``first`` line has two fields, neither a name the mapping or
    :data:`ALIASES` would take for the id or the text; its quotes are plain text (MS MARCO's passages
    have them). The one rule of this reader and of the streaming one (:mod:`rankscope.corpora.stream`).
    """
    if suffix != ".tsv" or kind not in _HEADERLESS:
        return None
    fields = first.split("\t")
    if len(fields) != 2:
        return None
    mapping = column_mapping(kind, columns, set(fields), str(path))
    id_column, text_column = (mapping[col] for col in _HEADERLESS[kind])
    if id_column in fields or text_column in fields:
        return None
    return [id_column, text_column]


def quoting(names: list[str] | None) -> Literal[0, 1, 2, 3]:
    """The csv quoting of a delimited table: CSV's for a file with a header, none for a headerless TSV
    (``names`` from :func:`headerless_names`), whose quotes are text."""
    return csv.QUOTE_MINIMAL if names is None else csv.QUOTE_NONE


def _jsonl_records(path: Path) -> tuple[list[dict], list[int]]:
    """The objects of a JSONL table as they are (strings and numbers; :func:`_check_rows` reads them by column)."""
    records, lines = [], []
    for number, obj in read_jsonl(path):
        bad = [k for k, v in obj.items() if v is None or isinstance(v, (bool, dict, list))]
        if bad:
            value = obj[bad[0]]
            found = f"a JSON {type(value).__name__}" if isinstance(value, (dict, list)) else json.dumps(value)
            raise FormatError(path, number, f"field {bad[0]!r} is {found}; expected a string or number")
        records.append(obj)
        lines.append(number)
    return records, lines


def _delimited_records(
    path: Path, text: str, delimiter: str, names: list[str] | None = None
) -> tuple[list[dict], list[int]]:
    """Parse with the csv module to keep true line numbers (quoted fields may span lines).

    ``names``: the file has no header; its rows are these columns, and quotes are plain text.
    """
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True, quoting=quoting(names))
    try:
        header = next(reader, None) if names is None else names
        if header is None:
            return [], []
        repeated = sorted({name for name in header if header.count(name) > 1})
        if repeated:  # a row would keep one of the two values, silently
            raise FormatError(path, 1, f"the header names {', '.join(map(repr, repeated))} twice or more")
        shape = f"as in the header {header}" if names is None else f"'{'<TAB>'.join(names)}' (a headerless TSV)"
        records, lines = [], []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise FormatError(path, reader.line_num, f"expected {len(header)} fields {shape}, found {len(row)}")
            records.append(dict(zip(header, row)))
            lines.append(reader.line_num)
    except csv.Error as exc:
        kind = "TSV" if delimiter == "\t" else "CSV"
        raise FormatError(path, reader.line_num, f"malformed {kind} ({exc})") from None
    return records, lines


def _check_rows(
    path: Path, records: list[dict], lines: list[int], kind: str, mapping: Mapping[str, str]
) -> list[dict[str, str]]:
    """The rows as text, each checked where it was read, so an error names the file's line (not a row
    of the table): required fields present, ids and texts as :func:`~rankscope.corpora.jsonl.string_problem`
    and :func:`~rankscope.corpora.checks.id_problem` allow, integer columns integral, scores finite."""
    optional = _OPTIONAL.get(kind, set())
    required = [theirs for ours, theirs in mapping.items() if ours not in optional]
    checks = [(ours, theirs, _CHECKS.get(ours)) for ours, theirs in mapping.items()]
    rows = []
    for record, number in zip(records, lines):
        missing = [name for name in required if name not in record]
        if missing:
            column = next(ours for ours, theirs in mapping.items() if theirs == missing[0])
            hint = f"map columns with --fields {kind}.{column}=NAME"
            raise FormatError(path, number, f"missing field(s) {missing}; found {sorted(record)} ({hint})")
        for ours, theirs, check in checks:
            if check is not None and theirs in record:
                value = record[theirs]
                problem = string_problem(theirs, value) if ours in _STRINGS else None
                problem = problem or check(value if isinstance(value, str) else str(value), ours)
                if problem:
                    raise FormatError(path, number, problem)
        rows.append({k: v if isinstance(v, str) else str(v) for k, v in record.items()})
    return rows


def _no_check(token: str, what: str) -> None:
    return None


_STRINGS = {"query_id", "doc_id", "title", "text"}
"""Columns a JSON value fills only as a string or an integer (the rule every JSON reader follows)."""
_CHECKS = {
    "query_id": id_problem,
    "doc_id": id_problem,
    "title": _no_check,
    "text": _no_check,
    "relevance": integer_problem,
    "rank": integer_problem,
    "score": number_problem,
}
"""How each schema column's value is checked as the file wrote it."""


def parse_fields(text: str) -> dict[str, dict[str, str]]:
    """``--fields``: ``doc_id=id,text=contents`` as a column mapping per table kind.

    ``COLUMN=NAME`` applies to every kind that has COLUMN (``text`` to corpus and queries);
    ``KIND.COLUMN=NAME`` (``corpus.text=contents``) to one kind only, and wins over the
    unprefixed form.
    """
    prefixed: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
    shared: dict[str, str] = {}
    for item in text.split(","):
        key, sep, name = (part.strip() for part in item.partition("="))
        if not sep or not key or not name:
            raise SchemaError(f"--fields expects COLUMN=NAME pairs separated by commas, got {item!r}")
        kind, dot, column = key.rpartition(".")
        if dot and kind not in KINDS:
            raise SchemaError(f"--fields {item!r}: {kind!r} is not one of {', '.join(KINDS)}")
        if column not in (KINDS[kind] if dot else {c for cols in KINDS.values() for c in cols}):
            known = KINDS[kind] if dot else sorted({c for cols in KINDS.values() for c in cols})
            raise SchemaError(f"--fields {item!r}: {column!r} is not a column; columns are {', '.join(known)}")
        target = prefixed[kind] if dot else shared
        if column in target:
            raise SchemaError(f"--fields names {key!r} twice")
        target[column] = name
    return {
        kind: {**{c: n for c, n in shared.items() if c in KINDS[kind]}, **prefixed[kind]}
        for kind in KINDS
        if prefixed[kind] or any(c in KINDS[kind] for c in shared)
    }
