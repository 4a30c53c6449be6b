"""Where results go: output paths checked before any computing, report folders swapped in whole.

A mistyped ``--out`` (a directory where a file belongs, a path under a regular file,
a read-only folder, a character device) used to fail after minutes of indexing, or
replace ``/dev/...`` with a regular file. :func:`check_output_file` and
:func:`check_output_folder` say so first. A workflow writes its folder through
:func:`output_folder`: into a temporary sibling that replaces the old folder only
when every file is written, so an interrupted run never leaves a mix of old and new
files that looks complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import naming_errors

REPORT_MARK = "summary.json"
"""Every workflow folder holds it; an existing folder without it is the user's, never replaced."""


class OutputPathError(RankscopeError):
    """An output path that cannot be written (or must not be overwritten); raised before any computing."""


def check_output_file(path: str | os.PathLike[str] | None, option: str = "--out") -> Path:
    """``path`` as a Path, if a file can be written there: not empty, not a directory or a device, a writable folder."""
    target = _non_empty(path, option)
    _no_dangling_link(target, option)
    if target.is_dir():
        raise OutputPathError(f"{option} {target}: is a directory; give a file name")
    if target.exists() and not target.is_file():
        raise OutputPathError(
            f"{option} {target}: is not a regular file (a device, FIFO or socket); refusing to replace it"
        )
    _check_parent(target, option)
    return target


def check_output_folder(path: str | os.PathLike[str] | None, option: str = "--out") -> Path:
    """``path`` as a Path, if a report folder can be (re)placed there: new, empty, or a previous report;
    never a symbolic link (the swap would replace the link with a folder, and the earlier report it
    pointed to elsewhere would silently stay as it was)."""
    target = _non_empty(path, option)
    _no_dangling_link(target, option)
    if target.is_symlink():
        raise OutputPathError(
            f"{option} {target}: is a symbolic link (to {os.readlink(target)}); a report folder is replaced "
            "whole, so give the folder's own path or a new one"
        )
    if target.exists() and not target.is_dir():
        raise OutputPathError(f"{option} {target}: exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / REPORT_MARK).is_file():
        raise OutputPathError(
            f"{option} {target}: a folder of other files (no {REPORT_MARK}); give a new or empty folder"
        )
    _check_parent(target, option)
    return target


@contextlib.contextmanager
def output_folder(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling folder to write into; on success it replaces ``path`` in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        swap_into_place(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_folder(path: Path, write: Callable[[Path], list[Path]]) -> tuple[Path, ...]:
    """Call ``write(folder)`` on a temporary folder swapped in as ``path``; the written files, under ``path``."""
    with naming_errors(path), output_folder(path) as folder:
        written = write(folder)
    return tuple(path / file.relative_to(folder) for file in written)


def swap_into_place(tmp: Path, directory: Path) -> None:
    """Rename ``tmp`` to ``directory``, moving an old one aside first and deleting it after."""
    old = None
    if directory.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".old", dir=directory.parent))
        os.replace(directory, old / "previous")
    try:
        os.replace(tmp, directory)
    except BaseException:
        if old is not None:
            os.replace(old / "previous", directory)
        raise
    finally:
        if old is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(old)


def _non_empty(path: str | os.PathLike[str] | None, option: str) -> Path:
    if path is None or not str(path).strip():
        raise OutputPathError(f"{option} is empty; give a path")
    return Path(path).expanduser()


def _no_dangling_link(target: Path, option: str) -> None:
    """A symbolic link to nothing is refused by name: writing would replace the link (a file) or fail with
    'Not a directory' on a path the user never gave (a folder)."""
    if target.is_symlink() and not target.exists():
        raise OutputPathError(
            f"{option} {target}: a symbolic link to {os.readlink(target)}, which does not exist; "
            "give another path or remove the link"
        )


def _check_parent(target: Path, option: str) -> None:
    """The nearest existing ancestor must be a folder we can write in (missing folders are created)."""
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputPathError(f"{option} {target}: {ancestor} is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option} {target}: cannot write in {ancestor} (permission denied)")
