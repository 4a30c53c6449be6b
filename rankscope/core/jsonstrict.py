"""JSON read strictly: a key given twice in one object, or NaN/Infinity, is an error, not a silent choice.

Python's ``json`` keeps the last of two equal keys (``{"_id": "1", "_id": "2"}`` is
document 2) and accepts ``NaN``, which no JSON standard allows. Readers of user files
and index headers go through :func:`loads` so both are reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


class JSONValueError(ValueError):
    """Valid JSON syntax with a duplicate key or a non-standard constant; the message says which."""


def loads(text: str) -> Any:
    """Parse ``text``; raises ``json.JSONDecodeError`` for bad syntax and :class:`JSONValueError` as above."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)


def _unique_keys(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JSONValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a JSON number")
