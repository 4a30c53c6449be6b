"""The team's own questions (``--queries FILE``), each recording where it came from.

The file is read by :mod:`rankscope.corpora.questions`, the one reader of questions files (text
lines, JSONL, CSV or TSV; the fields, ids and errors of ``rag --answers`` and ``search --queries``).
A question repeating an earlier one (same words, case and spacing aside) is merged into it and said
so. Each query row records ``origin``: the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rankscope.corpora.questions import read_questions_file
from rankscope.workflows.collection.layout import CollectionError


def read_queries(path: str | Path) -> list[dict[str, Any]]:
    """The questions of ``path`` as query rows (``_id``, ``text``, ``origin``), duplicates merged."""
    path = Path(path)
    rows: list[dict[str, Any]] = []
    by_text: dict[str, dict[str, Any]] = {}
    for question in read_questions_file(path):
        text = question.text.strip()
        same = by_text.get(_normal(text))
        if same is not None:
            same["origin"]["merged_lines"].append(question.line)
            continue
        origin = {"made": "file", "file": str(path.absolute()), "line": question.line, "merged_lines": []}
        row = {"_id": question.query_id, "text": text, "origin": origin}
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
