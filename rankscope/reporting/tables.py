"""DataFrames as text: fixed-width tables for the terminal and pipe tables for Markdown.

Written here rather than through ``DataFrame.to_markdown`` so that rankscope
does not need ``tabulate``, and so numbers print the same way everywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd


def cell(value: object, digits: int = 4) -> str:
    """One value as text: floats with ``digits`` decimals, missing values as an empty cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _rows(frame: pd.DataFrame, digits: int, index: bool) -> tuple[list[str], list[list[str]]]:
    header = ([str(frame.index.name or "")] if index else []) + [str(c) for c in frame.columns]
    body = []
    for label, row in zip(frame.index, frame.itertuples(index=False, name=None)):
        body.append(([cell(label, digits)] if index else []) + [cell(v, digits) for v in row])
    return header, body


def text_table(frame: pd.DataFrame, digits: int = 4, index: bool = True) -> str:
    """A fixed-width table: text left-aligned, everything else right-aligned."""
    header, body = _rows(frame, digits, index)
    numeric = [False] * index + [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in body)])


def markdown_table(frame: pd.DataFrame, digits: int = 4, index: bool = True) -> str:
    """A GitHub-flavoured pipe table; ``|`` inside cells is escaped."""
    header, body = _rows(frame, digits, index)
    return pipe_table(header, body)


def pipe_table(header: Sequence[str], body: Iterable[Sequence[object]], digits: int = 4) -> str:
    """A pipe table from a header and rows of values (formatted by :func:`cell`), for callers without a frame."""

    def line(cells: Iterable[object]) -> str:
        return "| " + " | ".join(cell(c, digits).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in body)])


def records(frame: pd.DataFrame, index: bool = True) -> list[dict[str, object]]:
    """Rows as JSON-ready dicts (see :func:`to_json`)."""
    return (frame.reset_index() if index else frame).to_dict(orient="records")


def to_json(data: object) -> str:
    """Strict JSON (NaN becomes null; numpy scalars become plain numbers), indented, ending in a newline."""
    return json.dumps(_plain(data), indent=2, allow_nan=False) + "\n"


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA:
        return None
    return value
