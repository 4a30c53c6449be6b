"""One index folder replaced in one atomic exchange: writers of a folder serialised by a lock file
beside it, readers waited for, killed writers' leftovers deleted, and the hook tests kill builds with
(:data:`FAULT_VARIABLE`). What an index holds, and the checks of its folder before a swap: :mod:`.storage`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rankscope.core.errors import RankscopeError

FAULT_VARIABLE = "RANKSCOPE_TEST_KILL_AT"
"""For tests only: ``PHASE`` or ``PHASE:N`` makes the process SIGKILL itself the N-th time (default
first) an index build reaches that phase: counting, spilling, merging, committing, renaming, cleaning."""


class IndexBusyError(RankscopeError):
    """Another process is writing the same index folder."""


_STAGING: set[Path] = set()
"""Staging folders this process is filling: an index saved inside one (a spilled run, a hybrid's
parts, the index ``rankscope search`` saves with its ``source.json``) is written straight into it."""


def inside_staging(directory: Path) -> bool:
    """Whether ``directory`` (absolute) is, or is inside, a staging folder this process is filling."""
    return any(directory == s or s in directory.parents for s in _STAGING)


@contextlib.contextmanager
def staged(directory: Path, given: Path) -> Iterator[Path]:
    """An empty staging folder beside ``directory`` (absolute; ``given`` as the user named it, for the
    messages) that replaces it in one atomic exchange when the block ends (deleted if the block raises),
    under the writer's lock of ``directory``: a second writer is refused (:class:`IndexBusyError`), and
    the staging folders of killed writers are deleted first."""
    with _writer_lock(directory, given):
        _remove_leftovers(directory)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".staging", dir=directory.parent))
        _STAGING.add(staging)
        try:
            yield staging
            _STAGING.discard(staging)
            _swap_in(staging, directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        finally:
            _STAGING.discard(staging)


@contextlib.contextmanager
def reading_index(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold a shared lock on the index folder ``directory`` while the block opens it: a writer's
    exchange waits for the block to end, so what it reads all belongs to one index. (Files opened
    and memory-mapped stay readable after the exchange.) Nothing is locked if there is no folder."""
    fd = None
    for _ in range(_READ_ATTEMPTS):  # a writer may exchange the folder between open and lock: retry
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            fd = None
            break
        _flock(fd, shared=True)
        try:
            current = os.stat(directory)
        except OSError:
            current = None
        opened = os.fstat(fd)
        if current is not None and (current.st_ino, current.st_dev) == (opened.st_ino, opened.st_dev):
            break
        os.close(fd)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


_READ_ATTEMPTS = 100


def _flock(fd: int, *, shared: bool) -> None:
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform: the exchange alone
        return
    fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)


@contextlib.contextmanager
def _writer_lock(directory: Path, given: Path) -> Iterator[None]:
    """``.<name>.lock`` beside ``directory``, locked (POSIX ``lockf``: released by the kernel when the
    holder dies, so a killed writer's lock file is stale, not held; not inherited by forked workers),
    holding the writer's pid for the message, and removed when the writer is done."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = directory.parent / f".{directory.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            raise IndexBusyError(
                f"{given}: another process (pid {holder}) is writing this index; "
                "wait for it to finish or use another folder"
            ) from None
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break  # else the holder removed the file between our open and lock: take the new one
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still locked: a waiting writer then finds the file gone and retries
        os.close(fd)


def _remove_leftovers(directory: Path) -> None:
    """Delete the staging (and set-aside) folders of writers of ``directory`` that were killed: the
    caller holds the writer's lock, so none of them is being written."""
    pattern = re.compile(rf"\.{re.escape(directory.name)}\.[a-z0-9_]{{8}}\.(?:staging|tmp|old)")
    for entry in directory.parent.iterdir():
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _swap_in(staging: Path, directory: Path) -> None:
    """Put ``staging`` in the place of ``directory`` in one step, once no reader is opening the old
    index (:func:`reading_index`), then delete the old index."""
    if not directory.exists():
        fault("renaming")
        os.rename(staging, directory)
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _flock(fd, shared=False)
        fault("renaming")
        if _exchange(staging, directory):
            old = staging  # now holds the old index
        else:  # two renames: a reader in between finds no index, never a mix
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".old", dir=directory.parent))
            os.replace(directory, old / "previous")
            fault("renaming")
            try:
                os.replace(staging, directory)
            except BaseException:
                os.replace(old / "previous", directory)
                raise
    finally:
        os.close(fd)
    fault("cleaning")
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where the system or file system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


_FAULTS: dict[str, int] = {}


def fault(phase: str) -> None:
    """Kill this process here if :data:`FAULT_VARIABLE` names ``phase`` (tests of interrupted builds)."""
    wanted = os.environ.get(FAULT_VARIABLE)
    if not wanted or wanted.split(":")[0] != phase:
        return
    _FAULTS[phase] = _FAULTS.get(phase, 0) + 1
    count = wanted.partition(":")[2]
    if _FAULTS[phase] == (int(count) if count.isdigit() else 1):
        os.kill(os.getpid(), signal.SIGKILL)
