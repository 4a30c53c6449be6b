"""DataFrames as text: fixed-width tables for the terminal and pipe tables for Markdown.

Written here rather than through ``DataFrame.to_markdown`` so that rankscope
does not need ``tabulate``, and so numbers print the same way everywhere.
"""

from __future__ import annotations

import math

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

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in body)])
