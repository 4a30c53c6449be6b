"""The team's own questions (``--queries FILE``): text lines, JSONL or CSV, each recording where it came from.

- ``.jsonl``: one object a line with the question in ``text`` (or ``query``, ``question``) and an
  optional id in ``_id`` (or ``id``, ``query_id``);
- ``.csv``: a header naming the same columns;
- anything else: one question a line (blank lines skipped).

A question without an id is ``q<line>``, so a file that grows at its end keeps its ids. A question
repeating an earlier one (same words, case and spacing aside) is merged into it and said so; a
repeated id is an error naming both lines. Each query row records ``origin``: the file and line.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rankscope.core.errors import FormatError, duplicate_message
from rankscope.core.fileio import read_text
from rankscope.corpora.checks import id_problem
from rankscope.corpora.jsonl import read_jsonl, string_field
from rankscope.workflows.collection.layout import CollectionError

TEXT_FIELDS = ("text", "query", "question")
ID_FIELDS = ("_id", "id", "query_id")


def read_queries(path: str | Path) -> list[dict[str, Any]]:
    """The questions of ``path`` as query rows (``_id``, ``text``, ``origin``), duplicates merged."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        found = [(n, _text(path, n, obj), _given_id(path, n, obj)) for n, obj in read_jsonl(path)]
    elif suffix == ".csv":
        found = _csv(path)
    else:
        found = [(n, line.strip(), None) for n, line in enumerate(read_text(path).split("\n"), 1) if line.strip()]
    if not found:
        raise FormatError(path, None, "no questions in the file")
    rows: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    by_text: dict[str, dict[str, Any]] = {}
    for number, text, given in found:
        if not text:
            raise FormatError(path, number, "empty question")
        query_id = f"q{number}" if given is None else _checked_id(path, number, given)
        if query_id in first_line:
            raise FormatError(path, number, duplicate_message("query id", query_id, first_line[query_id]))
        first_line[query_id] = number
        same = by_text.get(_normal(text))
        if same is not None:
            same["origin"]["merged_lines"].append(number)
            continue
        row = {
            "_id": query_id,
            "text": text,
            "origin": {"made": "file", "file": str(path.absolute()), "line": number, "merged_lines": []},
        }
        by_text[_normal(text)] = row
        rows.append(row)
    return rows


def merge_queries(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The collection's queries with the file's added: an id already there must keep its text."""
    by_id = {row["_id"]: row for row in existing}
    merged = list(existing)
    notes = []
    for row in new:
        old = by_id.get(row["_id"])
        if old is None:
            merged.append(row)
            by_id[row["_id"]] = row
        elif old["text"] != row["text"]:
            origin = row["origin"]
            raise CollectionError(
                f"{origin['file']}, line {origin['line']}: query id {row['_id']!r} is {old['text'][:60]!r} in the "
                f"collection, the file says {row['text'][:60]!r} (labels are kept by query: give the new question a new id)"
            )
        if row["origin"]["merged_lines"]:
            notes.append(
                f"query {row['_id']!r} (line {row['origin']['line']}) is repeated at line(s) "
                f"{row['origin']['merged_lines']}: merged"
            )
    return merged, notes


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _text(path: Path, number: int, obj: dict[str, Any]) -> str:
    """The question's words: a JSON string (``"text": 5`` is no question)."""
    for name in TEXT_FIELDS:
        if name in obj:
            if not isinstance(obj[name], str):
                raise FormatError(path, number, f"field {name!r} must be a string, found {json.dumps(obj[name])[:40]}")
            return obj[name].strip()
    raise FormatError(path, number, f"no question: expected a field {' or '.join(TEXT_FIELDS)}; found {sorted(obj)}")


def _given_id(path: Path, number: int, obj: dict[str, Any]) -> str | None:
    for name in ID_FIELDS:
        if name in obj:
            return string_field(path, number, obj, name)
    return None


def _checked_id(path: Path, number: int, given: str) -> str:
    """A given id, by the rule every reader of query ids applies (``pool`` reads the collection's file by it):
    not empty, no whitespace inside, no NUL, no quotes; spaces around it are the file's layout, not the id's."""
    query_id = given.strip()
    problem = id_problem(query_id, "query id")
    if problem:
        raise FormatError(path, number, problem)
    return query_id


def _csv(path: Path) -> list[tuple[int, str, str | None]]:
    reader = csv.DictReader(io.StringIO(read_text(path)))
    header = reader.fieldnames or []
    text_column = next((name for name in TEXT_FIELDS if name in header), None)
    if text_column is None:
        raise FormatError(path, 1, f"the header must name a column {' or '.join(TEXT_FIELDS)}; found {header}")
    id_column = next((name for name in ID_FIELDS if name in header), None)
    found = []
    for record in reader:
        number = reader.line_num
        if None in record or any(value is None for value in record.values()):
            raise FormatError(path, number, f"expected {len(header)} fields as the header has")
        found.append((number, record[text_column].strip(), record[id_column] if id_column else None))
    return found
