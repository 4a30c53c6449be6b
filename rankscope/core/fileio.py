"""Reading text strictly and writing files atomically.

Every reader in rankscope goes through :func:`read_lines` so that encoding
problems are reported with the file and line, a UTF-8 BOM is accepted, CRLF is
normalised and ``.gz`` files are read transparently. Every writer goes through
:func:`atomic_write` so that a crash never leaves a half-written file where a
good one used to be.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import mmap
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from rankscope.core.errors import FormatError

if TYPE_CHECKING:
    import numpy as np

PathLike = str | os.PathLike[str]

_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark: accepted at the start of any file, never part of it


def require_file(path: PathLike, what: str = "file") -> Path:
    """``path`` as a Path if it is a regular file; a directory, device, FIFO or socket is a FormatError.

    Reading a FIFO would wait forever and ``/dev/null`` reads as empty, so neither may stand for a file.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such {what}")
    if path.is_dir():
        raise FormatError(path, None, f"is a directory, not a {what}")
    if not path.is_file():
        raise FormatError(path, None, f"is not a regular file (a device, FIFO or socket), not a {what}")
    return path


def read_bytes(path: PathLike) -> bytes:
    """Return the whole file's bytes (.gz decompressed, a UTF-8 BOM stripped)."""
    path = require_file(path)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise FormatError(path, None, f"not a valid gzip file ({exc})") from None
    return raw.removeprefix(_BOM)


def read_head(path: PathLike, size: int = 1 << 16) -> bytes:
    """The first ``size`` bytes of what :func:`read_bytes` returns, without reading the rest (to sniff
    a format); ``b""`` for a broken gzip stream, which the full read then reports."""
    path = require_file(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            head = handle.read(size)
    except (OSError, EOFError):
        return b""
    return head.removeprefix(_BOM)


def read_text(path: PathLike) -> str:
    """Return the whole file as text (UTF-8, BOM stripped, CRLF -> LF, .gz transparent)."""
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, raw, exc.start) from None
    return _lines_ended(text)


def iter_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` of each line of ``path`` read one at a time, by :func:`read_lines`' rules
    (the same lines, numbers and errors), for files too large to hold: an index's corpus."""
    path = require_file(path)
    offset = 0  # of the line's first byte, as read_text counts it (after the BOM)
    number = 0
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
        try:
            for raw in handle:
                if number == 0:
                    raw = raw.removeprefix(_BOM)
                    if not raw:  # a file of a BOM alone is empty
                        continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _not_utf8(path, raw, exc.start, number, offset) from None
                offset += len(raw)
                if "\r" not in text:  # the common line: no split
                    number += 1
                    yield number, text[:-1] if text.endswith("\n") else text
                    continue
                for line in _lines_ended(text).split("\n")[: -1 if text.endswith(("\n", "\r")) else None]:
                    number += 1
                    yield number, line
        except (OSError, EOFError) as exc:
            if path.suffix != ".gz":
                raise
            raise FormatError(path, None, f"not a valid gzip file ({exc})") from None


def _lines_ended(text: str) -> str:
    """Every line end (CRLF, CR) as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _not_utf8(path: PathLike, raw: bytes, start: int, lines_before: int = 0, offset: int = 0) -> FormatError:
    """The error for the byte ``raw[start]``, ``raw`` being the file's bytes after ``lines_before`` lines
    and ``offset`` bytes; its line is counted as the readers count lines (CRLF, CR and LF each end one)."""
    line = lines_before + _lines_ended(raw[:start].decode("utf-8")).count("\n") + 1
    return FormatError(path, line, f"invalid UTF-8 byte 0x{raw[start]:02x} at byte offset {offset + start}")


def decoded_lines(path: PathLike, raw: bytes, lines_before: int = 0, offset: int = 0) -> list[str]:
    """The lines of ``raw`` (bytes of ``path`` after ``lines_before`` lines and ``offset`` bytes) by
    :func:`read_lines`' rules: a piece of a file too large to hold, its errors numbered as in the file."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, raw, exc.start, lines_before, offset) from None
    lines = _lines_ended(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_lines(path: PathLike) -> list[str]:
    """Return the file's lines without line terminators (see :func:`read_text`)."""
    text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}
"""Errors of a write that the system raises without a file name (a full disk, a quota, a read-only mount)."""


@contextlib.contextmanager
def naming_errors(path: PathLike) -> Iterator[None]:
    """OSErrors of the block name the user's ``path``: a full disk's ``ENOSPC`` comes from ``write()`` with no
    file name, and an error inside the temporary sibling rankscope writes first (``.NAME.*``, swapped in as
    ``path`` at the end) named that sibling, a path the user never gave."""
    try:
        yield
    except OSError as exc:
        shown = _user_path(Path(path), exc)
        if shown is None:
            raise
        raise OSError(exc.errno, exc.strerror, shown) from None


def _user_path(path: Path, exc: OSError) -> str | None:
    """The path to name for ``exc``, or None to leave it as raised."""
    if exc.errno is None:
        return None
    if exc.filename is None:
        return str(path) if exc.errno in _FULL else None
    named = Path(os.path.abspath(os.fsdecode(exc.filename)))
    target = Path(os.path.abspath(path))
    for ancestor in (named, *named.parents):
        if ancestor.parent == target.parent and ancestor.name.startswith(f".{target.name}."):
            inside = named.relative_to(ancestor)
            return str(Path(path) / inside) if inside.parts else str(path)
    return None


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path`` and move it into place only on success.

    ``mode`` is ``"w"`` (text, LF line endings) or ``"wb"``. ``.gz`` paths are
    gzip-compressed. On any exception the temporary file is removed and the
    previous content of ``path`` (if any) is untouched; an OSError names ``path``
    (:func:`naming_errors`), never the temporary file.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    with naming_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a saved report should be readable
            with contextlib.ExitStack() as stack:
                raw = stack.enter_context(os.fdopen(fd, "wb"))
                sink: IO = raw
                if path.suffix == ".gz":
                    sink = cast(IO, stack.enter_context(gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)))
                if mode == "w":
                    sink = stack.enter_context(io.TextIOWrapper(sink, encoding=encoding, newline="\n"))
                yield sink
                sink.flush()
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def _umask() -> int:
    """The process umask (reading it means setting it; restored at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def release_pages(*arrays: np.ndarray) -> None:
    """Give back the pages this process holds of memory-mapped arrays' regions (``MADV_DONTNEED``).

    Why: every page of a file read through a map stays in the process (and counts in its peak RSS)
    until the map is closed, so one pass over a 2 GB index file makes a 2 GB process, though the
    kernel could reload those pages from the file at any time. The file's contents are untouched
    (the maps are shared: what was written is in the page cache) and the array reads the same after.
    Arrays that are not contiguous views of a map (in memory, copies) are left alone.
    """
    import numpy as np

    if not hasattr(mmap, "MADV_DONTNEED"):  # not on this platform (Windows): the pages stay until unmapped
        return
    for array in arrays:
        owner: object = array
        while isinstance(owner, np.ndarray):
            owner = owner.base
        if not isinstance(owner, mmap.mmap) or owner.closed or not array.flags.c_contiguous or array.nbytes == 0:
            continue
        origin = np.frombuffer(owner, dtype=np.uint8).ctypes.data
        start = array.ctypes.data - origin
        first = start - start % mmap.PAGESIZE
        owner.madvise(mmap.MADV_DONTNEED, first, min(start + array.nbytes, len(owner)) - first)
