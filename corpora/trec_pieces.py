"""A TREC run file read in pieces of about ``piece_bytes``, each cut where the query id changes, so
that a file grouped by query (as runs are written) comes in pieces holding whole queries: what
evaluating a run larger than memory reads (:mod:`rankscope.evaluation.streaming`).

Each piece is scanned by the compiled reader (:mod:`corpora._trec_scan`) into a
:class:`~rankscope.corpora.trec.CodedTable` with the same checks as a whole file; a piece it doubts
is checked line by line, and a bad line is a :class:`~rankscope.core.errors.FormatError` naming the
file and the line's number in the file. A query longer than ``piece_bytes`` makes a longer piece.
Memory: one piece's bytes and table at a time.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, require_file
from rankscope.corpora.trec import RUN_LAYOUT, CodedTable, scanned_bytes, table_of_lines

_BOM = b"\xef\xbb\xbf"
_FIRST_FIELD = re.compile(rb"[ \t]*([^ \t\r\n]*)")


@dataclass(frozen=True)
class Piece:
    """Rows of a run file, whole queries when the file is grouped: ``table`` (file order) and its bytes."""

    table: CodedTable
    raw: bytes
    first_line: int


def run_pieces(path: PathLike, piece_bytes: int) -> Iterator[Piece]:
    """The run file at ``path`` (plain or ``.gz``) in pieces of about ``piece_bytes``, each ending where
    the query id changes; an empty file is a FormatError, as for the whole-file reader."""
    path = require_file(path, "run file")
    rows = 0
    for raw, first_line in raw_pieces(path, piece_bytes):
        table = piece_table(path, raw, first_line)
        if len(table):
            rows += len(table)
            yield Piece(table, raw, first_line)
    if rows == 0:
        raise empty_run(path)


def empty_run(path: Path) -> FormatError:
    return FormatError(path, None, f"empty run file: expected lines of {RUN_LAYOUT.expected}")


def raw_pieces(
    path: Path, piece_bytes: int, span: tuple[int, int] | None = None, lines: bool = True
) -> Iterator[tuple[bytes, int]]:
    """(bytes, number of its first line) of each piece of the file, or of the bytes ``span`` (start, end) of
    a plain file, which :func:`query_starts` gave (its line numbers then count from the span's start).
    ``lines=False``: every number is 0 (counting the lines costs a tenth of the compiled pass's time)."""
    with _opened(path) as handle:
        if span is None:
            yield from _cut(handle, piece_bytes, None, lines)
        else:
            handle.seek(span[0])
            yield from _cut(handle, piece_bytes, span[1] - span[0], lines)


def query_starts(path: PathLike, count: int) -> list[int]:
    """Offsets cutting a plain run file into about ``count`` spans of whole lines, each starting at a line
    whose query id differs from the line before (so a grouped file's spans hold whole queries): 0, ...,
    the file's size. A span may come out empty when one query is longer than the spans."""
    size = Path(path).stat().st_size
    starts = [0]
    with open(path, "rb") as handle:
        for k in range(1, count):
            at = max(size * k // count, starts[-1])
            starts.append(_next_query_start(handle, at, size))
    return sorted({*starts, size})


def _next_query_start(handle: io.BufferedReader, at: int, size: int) -> int:
    """The start of the first line after ``at``'s line whose query id differs from the line before (``size``
    if none)."""
    if at == 0:
        return 0
    handle.seek(at - 1)
    handle.readline()  # to the start of the first whole line at or after ``at``
    query = None
    while True:
        start = handle.tell()
        line = handle.readline()
        if not line:
            return size
        field = _first_field(line, 0)
        if not field:
            continue  # a blank line
        if query is not None and field != query:
            return start
        query = field


def _opened(path: Path) -> gzip.GzipFile | io.BufferedReader:
    try:
        return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115 (returned)
    except OSError as exc:
        raise FormatError(path, None, f"cannot be read ({exc})") from None


def _cut(
    handle: gzip.GzipFile | io.BufferedReader, piece_bytes: int, limit: int | None, lines: bool
) -> Iterator[tuple[bytes, int]]:
    """(bytes, number of its first line, or 0 without ``lines``) of each piece: whole lines, cut before the
    last query's first line; ``limit``: read no more than that many bytes (a span of the file). While one
    query fills what is held, each read is as long as what is held, so a query of any length costs linear time."""
    carry, line, first = b"", 1, handle.tell() == 0
    left, want = limit, piece_bytes
    while True:
        try:
            block = handle.read(want if left is None else min(want, left))
            if left is not None:
                left -= len(block)
        except (OSError, EOFError) as exc:
            raise FormatError(getattr(handle, "name", "run file"), None, f"not a valid gzip file ({exc})") from None
        if first:
            block, first = block.removeprefix(_BOM), False
        data = carry + block if carry else block
        if not block:
            if data:
                yield data, line
            return
        cut = _last_query_start(data)
        if cut == 0:  # one query so far: read on
            carry, want = data, max(len(data), piece_bytes)
            continue
        yield data[:cut], line
        line += data.count(b"\n", 0, cut) if lines else 0
        carry, want = data[cut:], piece_bytes


def _last_query_start(data: bytes) -> int:
    """Where the lines of the last complete line's query id begin (0 when every line has it, or no line ends;
    blank lines go with the line after them). Found by halving, as a query's lines are together: a few
    dozen looks at a piece of 60,000 lines, not one a line. In a file that is not grouped the cut still
    falls where the query id changes, and the reader notices the query's lines on both sides of it."""
    end = data.rfind(b"\n")
    if end < 0:
        return 0
    last = high = data.rfind(b"\n", 0, end) + 1  # `high`: a line start of the query; before `low`: other queries
    query, low = _first_field(data, last), 0
    while low < high:
        middle = (low + high) // 2
        start = data.rfind(b"\n", 0, middle) + 1  # the start of the line holding byte `middle`
        if _field_from(data, start, last) == query:
            high = start
        else:
            low = data.index(b"\n", middle) + 1
    return high


def _field_from(data: bytes, start: int, stop: int) -> bytes:
    """The first field of the first line at or after ``start`` that is not blank (none after ``stop``)."""
    field = _first_field(data, start)
    while not field and start < stop:
        start = data.index(b"\n", start) + 1
        field = _first_field(data, start)
    return field


def _first_field(data: bytes, start: int) -> bytes:
    match = _FIRST_FIELD.match(data, start)
    return match.group(1) if match else b""


def piece_table(path: Path, raw: bytes, first_line: int) -> CodedTable:
    """The piece's rows: the compiled scan, or line by line (which names a bad line by its number in the file)."""
    table = scanned_bytes(raw, RUN_LAYOUT)
    if table is None:
        table = table_of_lines(path, RUN_LAYOUT, raw, first_line)
    return table
