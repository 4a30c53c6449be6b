"""DataFrames as text: fixed-width tables for the terminal and pipe tables for Markdown.

Written here rather than through ``DataFrame.to_markdown`` so that rankscope
does not need ``tabulate``, and so numbers print the same way everywhere.

Terminal text fits the terminal: :func:`terminal_width` is ``COLUMNS`` when set, else the width of
the terminal standard output is (no limit for a pipe or a file, so scripts read whole lines).
A table wider than that wraps its text cells (at spaces, commas and slashes) and, when its numbers
alone are too wide, is printed in column blocks that each repeat the row labels;
:func:`wrap_paragraph` wraps captions and findings.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from rankscope.core.printable import printable


def cell(value: object, digits: int = 4) -> str:
    """One value as text: floats with ``digits`` decimals, missing values as an empty cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return printable(str(value))  # ids and texts from users' files: no escape sequence reaches a terminal


def _rows(frame: pd.DataFrame, digits: int, index: bool) -> tuple[list[str], list[list[str]]]:
    header = ([str(frame.index.name or "")] if index else []) + [str(c) for c in frame.columns]
    body = []
    for label, row in zip(frame.index, frame.itertuples(index=False, name=None)):
        body.append(([cell(label, digits)] if index else []) + [cell(v, digits) for v in row])
    return header, body


GAP = 2
"""Spaces between two columns of a terminal table."""
NARROWEST_TEXT = 12
"""A text column is wrapped to no fewer characters than this (or its header's width)."""


def terminal_width() -> int | None:
    """The width terminal text fits: ``COLUMNS`` if it is a positive integer, else the terminal's
    width when standard output is one, else None (a pipe or file: lines are not wrapped)."""
    raw = os.environ.get("COLUMNS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def wrap_paragraph(text: str, width: int | None = None) -> str:
    """``text`` wrapped to ``width`` (default :func:`terminal_width`), each line on its own; a line
    starting ``- `` (a finding) continues indented under its text."""
    width = terminal_width() if width is None else width
    if width is None:
        return text
    lines = []
    for line in text.split("\n"):
        indent = "  " if line.startswith("- ") else ""
        lines += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return "\n".join(lines)


def wrap_cell(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after a space, comma or slash where
    one falls within the line (a spec breaks between its parameters), else at ``width``."""
    lines = []
    while len(text) > width:
        cut = max(text.rfind(mark, 0, width) for mark in " ,/") + 1
        cut = cut if cut > 0 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return [*lines, text]


def text_table(
    frame: pd.DataFrame, digits: int = 4, index: bool = True, width: int | None = None, clip: Sequence[str] = ()
) -> str:
    """A fixed-width table: text left-aligned, everything else right-aligned, fitting ``width``
    characters (default :func:`terminal_width`; see the module's docstring). The ``clip`` columns
    (long free text: a query) are cut to one line ending in ``…`` instead of wrapped."""
    header, body = _rows(frame, digits, index)
    clipped = [i for i, name in enumerate(header) if i >= index and name in clip]
    numeric = [False] * index + [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    limit = terminal_width() if width is None else width
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    if limit is not None:
        labels = 1 if index else 0
        widths = widths[:labels] + _narrowed(
            widths[labels:], header[labels:], numeric[labels:], limit - (widths[0] + GAP if index else 0)
        )
        if index:  # the row labels narrow only when they leave no room for the widest other column
            widths[:1] = _narrowed(widths[:1], header[:1], numeric[:1], limit - max(widths[1:], default=0) - GAP)
    for i in clipped:
        body = [[*row[:i], _clipped(row[i], widths[i]), *row[i + 1 :]] for row in body]
    blocks = [list(range(len(header)))] if limit is None else _blocks(widths, limit, keep=1 if index else 0)
    return "\n\n".join(_block_text(header, body, numeric, widths, columns) for columns in blocks)


def _clipped(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _narrowed(widths: list[int], header: list[str], numeric: list[bool], limit: int) -> list[int]:
    """Column widths with the widest text columns narrowed, one character at a time, until the row
    fits ``limit`` or every text column is at its narrowest (its header, or NARROWEST_TEXT)."""
    widths = list(widths)
    floor = [max(len(h), NARROWEST_TEXT) for h in header]
    while sum(widths) + GAP * (len(widths) - 1) > limit:
        shrinkable = [i for i, w in enumerate(widths) if not numeric[i] and w > floor[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def _blocks(widths: list[int], limit: int, keep: int) -> list[list[int]]:
    """The columns in blocks that each fit ``limit`` beside the first ``keep`` (the row labels)."""
    labels = list(range(keep))
    used = sum(widths[i] + GAP for i in labels)
    blocks: list[list[int]] = []
    current: list[int] = []
    for i in range(keep, len(widths)):
        needed = widths[i] + GAP
        if current and used + sum(widths[j] + GAP for j in current) + needed - GAP > limit:
            blocks.append(labels + current)
            current = []
        current.append(i)
    return [*blocks, labels + current] if current or not blocks else blocks


def _block_text(
    header: list[str], body: list[list[str]], numeric: list[bool], widths: list[int], columns: list[int]
) -> str:
    def lines(cells: list[str]) -> list[str]:
        wrapped = [wrap_cell(cells[i], widths[i]) for i in columns]
        height = max(len(w) for w in wrapped)
        out = []
        for k in range(height):
            parts = [
                (w[k] if k < len(w) else "").rjust(widths[i])
                if numeric[i]
                else (w[k] if k < len(w) else "").ljust(widths[i])
                for w, i in zip(wrapped, columns)
            ]
            out.append((" " * GAP).join(parts).rstrip())
        return out

    rule = (" " * GAP).join("-" * widths[i] for i in columns)
    return "\n".join([*lines(header), rule, *(line for row in body for line in lines(row))])


_MD_INLINE = re.compile(r"[\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_SPECIAL = re.compile(r"[\\`*\[\]|~_&<>\n\r]")
"""Every character :func:`md_escape` changes (or may: ``_``)."""
_MD_BLOCK_START = re.compile(r"^(\s*)(?:([#>+=-])|(\d+)([.)]))")


def md_escape(text: str) -> str:
    """``text`` as literal Markdown text on one line: HTML's ``& < >`` as entities (a title's
    ``<script>`` or ``<img onerror=...>`` stays text) and Markdown's link, image, emphasis, code,
    strike-through and table punctuation backslash-escaped (an id ``[x](javascript:...)`` is no
    link); an underscore inside a word (``recall_loss``) is left as it is, as Markdown does. Text
    holding none of those characters (most cells: numbers, ids, words) is returned as it is, after one
    search (a report's drill-down escapes 60,000 cells)."""
    text = str(text)
    if _MD_SPECIAL.search(text) is None:
        return text
    text = " ".join(text.split("\n")).replace("\r", " ")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_INLINE.sub(lambda m: "\\" + m[0], text)


def md_block(text: str) -> str:
    """:func:`md_escape`, and a leading ``#``, ``-``, ``+``, ``=`` or ``1.`` escaped too: a paragraph,
    heading or list item starting with user text never becomes another kind of block."""
    return _MD_BLOCK_START.sub(
        lambda m: f"{m[1]}\\{m[2]}" if m[2] else f"{m[1]}{m[3]}\\{m[4]}", md_escape(text), count=1
    )


def markdown_table(frame: pd.DataFrame, digits: int = 4, index: bool = True) -> str:
    """A GitHub-flavoured pipe table, every cell literal text (:func:`md_escape`)."""
    header, body = _rows(frame, digits, index)
    return pipe_table(header, body)


def pipe_table(
    header: Sequence[str], body: Iterable[Sequence[object]], digits: int = 4, raw: frozenset[str] = frozenset()
) -> str:
    """A pipe table from a header and rows of values (formatted by :func:`cell`, then escaped by
    :func:`md_escape`), for callers without a frame; ``raw`` columns hold Markdown already."""
    raws = [name in raw for name in header]

    def line(cells: Iterable[object], kinds: Sequence[bool]) -> str:
        return "| " + " | ".join(str(c) if keep else md_escape(cell(c, digits)) for c, keep in zip(cells, kinds)) + " |"

    plain = [False] * len(header)
    return "\n".join([line(header, plain), "|" + "---|" * len(header), *(line(r, raws) for r in body)])


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
