"""JSON Lines: one object per line, read strictly with file and line in every error."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from rankscope.core import jsonstrict as strict_json
from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, atomic_write, iter_lines
from rankscope.corpora.checks import id_problem

EMPTY = "empty file: expected one JSON object per line"
"""The refusal of a JSON Lines file without objects, by every reader of one."""


def read_jsonl(path: PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line, reading one line at a time (an index's
    corpus may not fit in memory); anything but an object is an error."""
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            value = strict_json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(path, number, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
        except strict_json.JSONValueError as exc:
            raise FormatError(path, number, f"invalid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise FormatError(path, number, f"expected a JSON object, found {type(value).__name__}")
        yield number, value


def string_field(path: PathLike, line: int, obj: dict[str, Any], key: str, *, required: bool = True) -> str:
    """A string (or integer id) field of a JSON object; missing or other types are errors."""
    if key not in obj:
        if required:
            raise FormatError(path, line, f"missing field {key!r}; found fields {sorted(obj)}")
        return ""
    problem = string_problem(key, obj[key])
    if problem:
        raise FormatError(path, line, problem)
    return str(obj[key])


def string_problem(key: str, value: Any) -> str | None:
    """Why a JSON value cannot be an id or a text, or None: a string, or an integer read as written
    (``7`` is ``"7"``); a float (``1.0`` would be ``"1.0"``, not what the file wrote), ``true``, null,
    an array or an object is refused, by every JSON reader alike."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return f"field {key!r} must be a string, found {json.dumps(value)[:40]}"
    return None


def corpus_document(path: PathLike, line: int, obj: dict[str, Any], key: str = "_id") -> tuple[str, str, str]:
    """``(doc_id, title, text)`` of one corpus line, by the rules of every JSON corpus reader (BEIR's,
    :func:`rankscope.corpora.beir.read_beir_corpus`, and the index's, :func:`rankscope.corpora.stream.iter_corpus`):
    the id (``key``) and ``text`` required, ``title`` optional, each a :func:`string_field`; the id by
    :func:`~rankscope.corpora.checks.id_problem`."""
    doc_id = string_field(path, line, obj, key)
    problem = id_problem(doc_id, key)
    if problem:
        raise FormatError(path, line, problem)
    return doc_id, string_field(path, line, obj, "title", required=False), string_field(path, line, obj, "text")


def write_jsonl(rows: Iterable[dict[str, Any]], path: PathLike) -> None:
    """Write one compact JSON object per line (UTF-8, not ASCII-escaped), atomically."""
    with atomic_write(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False))
            handle.write("\n")
