"""Checks every reader shares, so each error names the file and both offending lines."""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence

from rankscope.core.errors import FormatError, duplicate_message
from rankscope.core.fileio import PathLike

INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
"""An integer as files write it: ASCII digits (not ``１`` or ``٣``), an optional sign, within int64.

Every reader uses this one rule, so ``1e3`` or ``1.0`` is refused everywhere, not read as 1000 by one path."""

NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A decimal number in ASCII. Unambiguous (each digit can belong to one part only), so matching is
linear: a field of 80,000 digits followed by a letter fails at once instead of backtracking for minutes."""

_QUOTES = ('"', "'")
_WHITESPACE = re.compile(r"\s")


def refuse_repeats(
    path: PathLike,
    keys: Sequence[Hashable],
    lines: Sequence[int],
    what: str,
    grades: Sequence[int] | None = None,
) -> None:
    """Raise FormatError at the first key seen twice; ``lines[i]`` is where ``keys[i]`` was read.

    ``what`` describes a key for the message (``"document id"``); tuple keys are
    shown joined by ", ". With ``grades``, a repeat with a different grade says so.
    """
    seen: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        first = seen.setdefault(key, index)
        if first == index:
            continue
        conflict = ""
        if grades is not None and grades[first] != grades[index]:
            conflict = f" with conflicting grades {grades[first]} and {grades[index]}"
        raise FormatError(path, lines[index], duplicate_message(what, key, lines[first]) + conflict)


def empty_table(path: PathLike, kind: str) -> FormatError:
    """The one refusal of a table file without rows (JSONL, CSV, TSV or Parquet alike)."""
    return FormatError(path, None, f"empty {kind} file: no rows")


def integer(token: str, path: PathLike, line: int, what: str) -> int:
    """Parse an integer field strictly: ASCII digits with an optional sign, within int64, nothing else."""
    problem = integer_problem(token, what)
    if problem:
        raise FormatError(path, line, problem)
    return int(token)


def integer_problem(token: str, what: str) -> str | None:
    """Why ``token`` is not an integer by :data:`INTEGER`, or None when it is one."""
    if INTEGER.fullmatch(token):
        return None
    digits = token.lstrip("+-")
    if digits.isascii() and digits.isdigit():
        return f"{what} {shown(token)} is out of range (more than 18 digits)"
    return f"{what} must be an integer, found {shown(token)}"


def number_problem(token: str, what: str) -> str | None:
    """Why ``token`` is not a finite decimal number by :data:`NUMBER`, or None when it is one."""
    if not NUMBER.fullmatch(token):
        return f"{what} must be a finite number, found {shown(token)}"
    if not math.isfinite(float(token)):
        return f"{what} {shown(token)} overflows a 64-bit float"
    return None


def id_problem(token: str, what: str) -> str | None:
    """Why ``token`` cannot be an id, or None.

    Not an id: an empty one; one holding whitespace (a TREC run or qrels line would split it, so no run
    written from it could name the document); a NUL byte; quotes around it, which files never mean.
    """
    if not token:
        return f"{what} is empty"
    if "\x00" in token:
        return f"{what} {shown(token)} contains a NUL byte"
    if _WHITESPACE.search(token):
        return f"{what} {shown(token)} contains whitespace; a TREC run or qrels line could not hold it"
    if token.startswith(_QUOTES) or token.endswith(_QUOTES):
        return f"{what} {shown(token)} is quoted; TREC files write ids bare (quotes would be part of the id)"
    return None


def shown(token: str, limit: int = 40) -> str:
    """A field as the user wrote it, cut to ``limit`` characters so a 100,000-character field stays one short line."""
    if len(token) <= limit:
        return repr(token)
    return f"{token[:limit]!r}... ({len(token)} characters)"


def numeric_id(token: str, path: PathLike, line: int, what: str) -> str:
    """A numeric id without leading zeros, so ``"001"`` and ``"1"`` name the same record."""
    if not token.isascii() or not token.isdigit():
        raise FormatError(path, line, f"{what} must be a number, found {shown(token)}")
    return token.lstrip("0") or "0"  # not int(): Python refuses to convert more than 4300 digits
