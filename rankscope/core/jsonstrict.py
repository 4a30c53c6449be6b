"""JSON read strictly: a key given twice in one object, or NaN/Infinity, is an error, not a silent choice.

Python's ``json`` keeps the last of two equal keys (``{"_id": "1", "_id": "2"}`` is
document 2) and accepts ``NaN``, which no JSON standard allows. Readers of user files
and index headers go through :func:`loads` so both are reported, and so are three things
Python's ``json`` raises as something else or lets through: arrays or objects nested deeper
than the recursion limit (a ``RecursionError`` in its scanner), integers of more than
:data:`MAX_DIGITS` digits (Python refuses to convert them) and a lone surrogate escape
(``"\ud800"``: a string no UTF-8 file, run or index can hold).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any

MAX_DIGITS = 4300
"""Most digits of an integer read: Python's own limit on converting a decimal string (``sys.int_info``)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONValueError(ValueError):
    """Valid JSON syntax with a duplicate key or a non-standard constant; the message says which."""


def loads(text: str) -> Any:
    """Parse ``text``; raises ``json.JSONDecodeError`` for bad syntax and :class:`JSONValueError` as above."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=_int)
    except RecursionError:
        raise JSONValueError(
            f"arrays or objects nested deeper than Python's recursion limit ({sys.getrecursionlimit()})"
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        _no_lone_surrogate(value)
    return value


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise JSONValueError(f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_DIGITS})")
    return int(digits)


def _no_lone_surrogate(value: Any) -> None:
    """Refuse a string holding half of a UTF-16 surrogate pair (only an escape can make one)."""
    strings = [value] if isinstance(value, str) else []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            strings.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            strings.append(item)
    for string in strings:
        try:
            string.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JSONValueError(
                f"string {string[:40]!r} holds a lone surrogate {string[exc.start]!r} (not a character)"
            ) from None


def _unique_keys(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JSONValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a JSON number")
