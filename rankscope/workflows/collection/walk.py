"""Which files under ``--docs`` ``collection init`` reads, and why it reads no other entry there.

Folders are walked without following links, so nothing outside the ``--docs`` paths enters the
shared corpus: a link to a file inside them is that file, read once under its own name; a link
leaving them is refused. A linked folder, a dangling link, a link loop, a folder that cannot be
listed and an entry that is no regular file (a FIFO would block the read for ever) are each listed
with the reason, never dropped without a word. A file is opened without following a link, so one
replaced by a link after the walk is not read either. Names are carried as :func:`shown_path`
gives them: ids, sources and ``unreadable.tsv`` stay valid UTF-8 for a name that is not.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from rankscope.workflows.collection.readers import Unreadable


@dataclass(frozen=True)
class DocFile:
    """One file to read: its id prefix, its path, and whether the user named it (then a link is followed)."""

    prefix: str
    path: Path
    named: bool = False

    @property
    def source(self) -> str:
        return shown_path(self.path)


@dataclass(frozen=True)
class Walked:
    """The files to read, in path order, and every other entry met with the reason it is not read."""

    files: list[DocFile] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def shown_path(path: Path | str) -> str:
    """The path as text: bytes that are not UTF-8 (``caf\\xe9.txt``) and control characters (a newline
    would split a line of ``unreadable.tsv``) written as ``\\xNN``; any other name is unchanged."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(f"\\x{ord(c):02x}" if c < " " or c == "\x7f" else c for c in text)


def walk_docs(docs: Sequence[str | Path]) -> Walked:
    """The files under ``docs`` (see the module doc); a path given that does not exist is an error."""
    walked = Walked()
    roots = [Path(given).expanduser().absolute() for given in docs]
    for given, root in zip(docs, roots):
        if not root.exists():
            raise FileNotFoundError(f"--docs {given}: no such file or folder")
    inside = [root.resolve() for root in roots]
    for root in roots:
        if root.is_dir():
            _walk(root, inside, walked)
        elif root.is_file():
            walked.files.append(DocFile(shown_path(root.name), root, named=True))
        else:
            walked.refused[shown_path(root)] = "not a regular file (a device, FIFO or socket)"
    walked.files.sort(key=lambda found: found.path)
    return walked


def _walk(root: Path, inside: list[Path], walked: Walked) -> None:
    """Every entry under ``root``, one folder at a time (no recursion), links never followed."""
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            walked.refused[shown_path(folder)] = f"folder cannot be listed ({exc.strerror})"
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    walked.refused[shown_path(path)] = _link(path, inside)
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(path)
                elif entry.is_file(follow_symlinks=False):
                    prefix = f"{root.name}/{path.relative_to(root).as_posix()}"
                    walked.files.append(DocFile(shown_path(prefix), path))
                else:
                    walked.refused[shown_path(path)] = "not a regular file (a device, FIFO or socket)"
            except OSError as exc:
                walked.refused[shown_path(path)] = f"cannot be read ({exc.strerror})"


def _link(path: Path, inside: list[Path]) -> str:
    """Why the link ``path`` is not read itself."""
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return f"dangling link (to {shown_path(os.readlink(path))})"
    except RuntimeError:  # Python 3.11's loop; later ones raise ELOOP
        return f"link loop (to {shown_path(os.readlink(path))})"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"link loop (to {shown_path(os.readlink(path))})"
        return f"link cannot be followed ({exc.strerror})"
    if target.is_dir():
        return f"linked folder, not followed (to {shown_path(target)})"
    if not target.is_file():
        return f"link to what is not a regular file ({shown_path(target)})"
    if any(target == root or target.is_relative_to(root) for root in inside):
        return f"link to a file read under its own name ({shown_path(target)})"
    return f"link to a file outside --docs, refused ({shown_path(target)})"


def read_file(found: DocFile, most: int | None = None) -> bytes:
    """The file's bytes, opened without following a link (unless the user named it) and only if it is a
    regular file, as the walk saw it, and no more than ``most`` of them (a 5 GB log is refused before it
    is read, not after); :class:`Unreadable` says why not."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if found.named else os.O_NOFOLLOW)
    try:
        descriptor = os.open(found.path, flags)
    except OSError as exc:
        raise Unreadable(f"cannot be read ({exc.strerror})") from None
    with open(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise Unreadable("not a regular file (a device, FIFO or socket)")
        if most is not None and status.st_size > most:
            raise _too_big(most)
        try:
            return handle.read() if most is None else _read_at_most(handle, most)
        except OSError as exc:
            raise Unreadable(f"cannot be read ({exc.strerror})") from None


def _read_at_most(handle: BinaryIO, most: int) -> bytes:
    """The rest of ``handle`` in pieces of 1 MiB (``read(most + 1)`` would set ``most`` bytes aside for
    a file of 11), refused once it passes ``most``: a file growing after the look at its size."""
    pieces, size = [], 0
    while piece := handle.read(1 << 20):
        size += len(piece)
        if size > most:
            raise _too_big(most)
        pieces.append(piece)
    return b"".join(pieces)


def _too_big(most: int) -> Unreadable:
    return Unreadable(f"more than {most:,} bytes (the bound on one file's text), not read")
