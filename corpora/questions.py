"""A questions file, read one way by every command that takes one: ``collection init --queries``,
``rag --answers``, ``search --queries``, and a dataset folder's queries (a BEIR ``queries.jsonl``,
a collection's among them, or a queries table), which ``judge``, ``compare`` and ``diagnose`` load:
one file gives the same questions, or the same error, wherever it is given.

- Formats by suffix (each optionally ``.gz``): ``.jsonl`` one object a line; ``.csv``/``.tsv`` with
  a header (a two-column headerless ``.tsv`` is MS MARCO's ``id<TAB>text``); any other suffix
  (``.txt``) one question a line, blank lines skipped.
- Fields: the id in ``query_id``, else ``_id``, ``id`` or ``qid``; the text in ``text``, else
  ``query`` or ``question`` (:data:`rankscope.corpora.tabular.ALIASES`; two of them present is
  ambiguous: name one with a column mapping, ``--fields queries.text=NAME``).
- Rules: an id as every id (:func:`~rankscope.corpora.checks.id_problem`; a JSON integer read as
  written); a question without one is ``q<line>``, so a file growing at its end keeps its ids; the
  text a JSON string that is not blank; a repeated id an error naming both lines. Every error names
  the file and line. Other fields (``answers``, BEIR's ``metadata``) are kept as read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import FormatError, SchemaError, duplicate_message
from rankscope.core.fileio import PathLike, read_text
from rankscope.corpora.checks import empty_table, id_problem
from rankscope.corpora.jsonl import read_jsonl, string_problem
from rankscope.corpora.stream import DELIMITERS
from rankscope.corpora.tabular import ALIASES, Columns, column_mapping, table_records

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Question:
    """One question: its file ``line``, id (given, or ``q<line>``), text as written, and the record read."""

    line: int
    query_id: str
    text: str
    given_id: bool
    fields: Mapping[str, Any]


def read_questions_file(path: PathLike, columns: Columns | None = None) -> list[Question]:
    """The questions of ``path`` in file order (see the module doc); ``columns`` maps ``query_id`` and
    ``text`` to the file's own names."""
    path = Path(path)
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix == ".jsonl":
        numbered = list(read_jsonl(path))
        if not numbered:
            raise empty_table(path, "queries")
        known: dict[frozenset[str], Mapping[str, str]] = {}

        def fields(line: int, record: dict[str, Any]) -> Mapping[str, str]:
            """Each line by its own keys (a hand-written file may give one question ``id``, the next
            ``_id``); two candidates in one line are an error naming it."""
            keys = frozenset(record)
            if keys not in known:
                known[keys] = column_mapping("queries", columns, set(keys), f"{path}, line {line}")
            return known[keys]

        return _checked(path, numbered, fields)
    if suffix in DELIMITERS:
        records, lines, mapping = table_records(path, "queries", columns)
        if mapping["text"] not in records[0]:  # every row has the header's columns
            expected = _text_names(mapping["text"])
            raise FormatError(path, 1, f"the header names no question column {expected}; found {sorted(records[0])}")
    else:
        if columns:
            raise SchemaError(f"{path}: a column mapping needs a JSONL, CSV or TSV file, not one question a line")
        numbered_lines = [(n, line) for n, line in enumerate(read_text(path).split("\n"), 1) if line.strip()]
        if not numbered_lines:
            raise empty_table(path, "queries")
        records, lines = [{"text": line.strip()} for _, line in numbered_lines], [n for n, _ in numbered_lines]
        mapping = {"query_id": "query_id", "text": "text"}
    return _checked(path, list(zip(lines, records)), lambda line, record: mapping)


def read_questions_table(path: PathLike, columns: Columns | None = None) -> pd.DataFrame:
    """The questions of ``path`` as a queries frame, ``query_id`` and ``text``."""
    import pandas as pd

    found = read_questions_file(path, columns)
    return pd.DataFrame({"query_id": [q.query_id for q in found], "text": [q.text for q in found]})


def _checked(
    path: Path, numbered: list[tuple[int, dict[str, Any]]], fields: Callable[[int, dict[str, Any]], Mapping[str, str]]
) -> list[Question]:
    """The questions of the numbered records, each record's id and text where ``fields`` names them."""
    first: dict[str, int] = {}
    found = []
    for line, record in numbered:
        mapping = fields(line, record)
        id_name = mapping["query_id"]
        text = _text(path, line, record, mapping["text"])
        given = id_name in record
        query_id = _id(path, line, record[id_name], id_name) if given else f"q{line}"
        if query_id in first:
            raise FormatError(path, line, duplicate_message("query id", query_id, first[query_id]))
        first[query_id] = line
        found.append(Question(line, query_id, text, given, record))
    return found


def _text(path: Path, line: int, record: Mapping[str, Any], name: str) -> str:
    if name not in record:
        raise FormatError(path, line, f"no question: expected a field {_text_names(name)}; found {sorted(record)}")
    text = record[name]
    if not isinstance(text, str):
        raise FormatError(path, line, f"field {name!r} must be a string, found {json.dumps(text)[:40]}")
    if not text.strip():
        raise FormatError(path, line, "empty question")
    return text


def _text_names(name: str) -> str:
    """The names a question's text is looked for under, as an error says them."""
    return " or ".join(map(repr, (name, *ALIASES["queries"]["text"]) if name == "text" else (name,)))


def _id(path: Path, line: int, value: Any, name: str) -> str:
    problem = string_problem(name, value) or id_problem(str(value), "query id")
    if problem:
        raise FormatError(path, line, problem)
    return str(value)
