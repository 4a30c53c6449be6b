"""Checks every reader shares, so each error names the file and both offending lines."""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike

_INTEGER = re.compile(r"[+-]?[0-9]+")


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
        shown = ", ".join(map(repr, key)) if isinstance(key, tuple) else repr(key)
        conflict = ""
        if grades is not None and grades[first] != grades[index]:
            conflict = f" with conflicting grades {grades[first]} and {grades[index]}"
        raise FormatError(path, lines[index], f"duplicate {what} {shown} (first at line {lines[first]}){conflict}")


def integer(token: str, path: PathLike, line: int, what: str) -> int:
    """Parse an integer field strictly: digits with an optional sign, nothing else."""
    if not _INTEGER.fullmatch(token):
        raise FormatError(path, line, f"{what} must be an integer, found {token!r}")
    return int(token)


def numeric_id(token: str, path: PathLike, line: int, what: str) -> str:
    """A numeric id without leading zeros, so ``"001"`` and ``"1"`` name the same record."""
    if not token.isascii() or not token.isdigit():
        raise FormatError(path, line, f"{what} must be a number, found {token!r}")
    return str(int(token))
