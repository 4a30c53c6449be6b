"""Work beside this process, in children forked from it: the one place the package forks, so the rules
that make forking safe are kept here and a workflow says only what it would run beside itself.

The rule (:func:`can_fork`), which every child obeys: Linux; ``RANKSCOPE_FORK`` not ``0``; no other Python
thread running but tqdm's monitor (a thread holding a lock at the fork would leave it locked in the child
for ever; Jupyter and Dask clients start threads; the monitor only ever takes tqdm's own lock, which a child
never uses); no OpenMP runtime loaded (GNU OpenMP is not fork-safe: a child forked after its threads ran
waits for ever in its next parallel region, as torch's encoders and faiss's searches do). Where it does not
hold, the work is done here, one part after the other, with the same result. Every child dies with this
process, killed or not (Linux's parent-death signal, :func:`die_with_parent`).

- :func:`start`: files written by a child while this process writes others (``finish`` has the child draw
  and save a report's figures, which also keeps matplotlib's import off this process). A command that knows
  early it will write a folder forks that child at once (:func:`warm`), before it loads anything: the child
  imports what the work needs on the second core, then waits to be handed the work, pickled (a module-level
  function and this process's own values, never a user's file). Work that does not pickle goes to a fresh fork.
- :func:`beside`: a value computed in a child forked at that moment, holding all this process holds
  (diagnose's second system, compare's second half of the systems and its pair tests).
- :func:`forked_map`: a pool of workers (``--workers`` of ``index``, ``evaluate`` and ``tune``: the streaming
  index's batches, a run file's spans, tune's grid points), sized by :func:`pool_size`. They start in
  milliseconds holding this process's tables, so nothing is pickled on the way in; Dask's workers
  (:mod:`rankscope.core.scheduler`) cost seconds to start, more than a second core gives on two cores.

A child of :func:`start` or :func:`beside` sends what the work returned through a pipe, pickled (this
process reads only what its own child wrote), and leaves with ``os._exit`` (no exit handlers, no flushing of
buffers it inherited). If it fails in any way, the work is done again here, so an error (a full disk, a bad
value) is raised here exactly as without the child.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import os
import pickle
import signal
import struct
import sys
import threading
import warnings
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from rankscope.core.errors import RankscopeError

if TYPE_CHECKING:
    from concurrent.futures import Future

IDLE_THREADS = frozenset({"tqdm_monitor"})
"""Threads that may run at the fork: they take no lock the child's work needs."""

FORK_ENV = "RANKSCOPE_FORK"
"""``RANKSCOPE_FORK=0`` forks no child: every write and computation in this process (the files are the same)."""
_PR_SET_PDEATHSIG = 1


def can_fork() -> bool:
    """True where a child forked now is safe and wanted (:func:`warm`, :func:`start` and :func:`beside` fork
    only then); a workflow adds only its own conditions (what may run beside it)."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and os.environ.get(FORK_ENV, "1") != "0"
        and threading.active_count() == 1 + sum(t.name in IDLE_THREADS for t in threading.enumerate())
        and not openmp_loaded()
    )


def openmp_loaded() -> bool:
    """Whether an OpenMP runtime is loaded in this process (torch's, faiss's): a command's process has none
    when it forks its first children; one that made a dense system or searched a faiss index has."""
    from threadpoolctl import threadpool_info

    return any(library["user_api"] == "openmp" for library in threadpool_info())


def die_with_parent(parent: int) -> None:
    """A forked child ends when the process that forked it does, even killed (it would otherwise compute or
    wait on its pipe or task queue for nobody): Linux's parent-death signal. Run first in every child."""
    import ctypes

    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def _fork() -> int:
    """``os.fork()``, the child set to die with this process; the buffered output flushed first (else the
    child's copy would be written twice)."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent)
    return pid


@dataclass(frozen=True)
class _Warm:
    """A child forked by :func:`warm`, waiting for one piece of work: its length on ``send``, its bytes in
    ``shared`` (a file in memory both hold, so handing over megabytes never waits on the child); it
    answers on ``answer``."""

    pid: int
    send: int
    shared: int
    answer: int


_warm: list[_Warm] = []
"""The waiting child of this process, if any (at most one)."""
_LENGTH = struct.Struct("<Q")
T = TypeVar("T")


def warm(modules: Sequence[str]) -> None:
    """Fork now, when :func:`can_fork`, a child that imports ``modules`` and waits for the work of the next
    :func:`start` (or for this process to close its pipe: :func:`cool`, or its exit)."""
    if _warm or not can_fork():
        return
    work_read, work_write = os.pipe()
    answer_read, answer_write = os.pipe()
    shared = os.memfd_create("rankscope-work")
    pid = _fork()
    if pid == 0:  # the child: import, wait for the work, do it, say what was written
        code = 1
        try:
            os.close(work_write)
            os.close(answer_read)
            for module in modules:
                importlib.import_module(module)
            with os.fdopen(work_read, "rb") as pipe:
                header = pipe.read(_LENGTH.size)
            if len(header) == _LENGTH.size:  # else this process went on without it
                function, args = pickle.loads(_read_all(shared, _LENGTH.unpack(header)[0]))
                code = _answer(answer_write, function(*args))
        except BaseException:  # noqa: BLE001 - any failure: the parent does the work again and raises it
            code = 1
        finally:
            os._exit(code)
    os.close(work_read)
    os.close(answer_write)
    _warm.append(_Warm(pid, work_write, shared, answer_read))


def cool() -> None:
    """Let a child of :func:`warm` that was given no work go (it exits when its pipe closes)."""
    while _warm:
        child = _warm.pop()
        os.kill(child.pid, signal.SIGKILL)  # it holds nothing: no file of it is half written
        for fd in (child.send, child.shared, child.answer):
            os.close(fd)
        os.waitpid(child.pid, 0)


def start(work: Callable[..., T], *args: Any) -> Callable[[], T]:
    """Start ``work(*args)`` (writing files, returning what pickles: their paths, say) in a child: the one
    :func:`warm` forked when it waits and the work pickles, else a child forked now when :func:`can_fork`;
    the function returned waits for it and gives what the work returned. Without a child, ``work`` runs
    when waited for."""

    def here() -> T:
        return work(*args)

    if _warm:
        child = _warm.pop()
        try:
            data = pickle.dumps((work, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - a closure or an object that does not pickle: a fresh fork below
            _warm.append(child)
            cool()
        else:
            written = 0
            while written < len(data):
                written += os.pwrite(child.shared, memoryview(data)[written:], written)
            os.close(child.shared)
            with os.fdopen(child.send, "wb") as pipe:
                pipe.write(_LENGTH.pack(len(data)))
            return _waiting(child.pid, child.answer, here)
    return _fresh(here, here)


def beside(work: Callable[..., T], *args: Any) -> Callable[[], T]:
    """Start ``work(*args)`` (computing, not writing: a value that pickles) in a child forked now, which
    holds all this process holds, so nothing is pickled on the way in; a child waiting since :func:`warm`
    keeps waiting for its own work. The function returned waits and gives ``work``'s value. Without a
    child (:func:`can_fork`), ``work`` runs when waited for. A warning the child would show fails it, so
    that the work is redone here, where the warning is shown as without the child."""

    def here() -> T:
        return work(*args)

    def quiet() -> T:
        with warnings.catch_warnings(record=True) as issued:  # the filters as they are, nothing shown
            value = work(*args)
        if issued:
            raise RuntimeError(f"{len(issued)} warning(s): the work is redone where they can be shown")
        return value

    return _fresh(quiet, here)


def _fresh(work: Callable[[], T], here: Callable[[], T]) -> Callable[[], T]:
    """``work`` in a child forked now (``here`` when it fails, or here alone when :func:`can_fork` is False)."""
    if not can_fork():
        return here
    read, write = os.pipe()
    pid = _fork()
    if pid == 0:  # the child: do the work, say what was written, leave without exit handlers
        code = 1
        try:
            os.close(read)
            code = _answer(write, work())
        except BaseException:  # noqa: BLE001 - any failure: the parent does the work again and raises it
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    return _waiting(pid, read, here)


def _read_all(fd: int, length: int) -> bytes:
    """The first ``length`` bytes of the file ``fd``."""
    data = bytearray()
    while len(data) < length:
        chunk = os.pread(fd, length - len(data), len(data))
        if not chunk:
            raise EOFError("the work was cut short")
        data += chunk
    return bytes(data)


def _answer(fd: int, value: object) -> int:
    """The child's answer: what the work returned, pickled on ``fd``; its exit code."""
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


def _waiting(pid: int, answer: int, here: Callable[[], T]) -> Callable[[], T]:
    def wait() -> T:
        with os.fdopen(answer, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not data:  # failed, killed, or left without answering
            return here()  # the same work here: its error, if any, is raised in this process
        return cast(T, pickle.loads(data))  # noqa: S301 - written by this process's own child

    return wait


def default_count() -> int:
    """Worker processes when the user names none (``--workers`` of ``index``, ``evaluate`` and ``tune``): up to 2,
    the cores this project's target machine has; more only when asked."""
    return min(2, os.cpu_count() or 1)


def checked_count(given: int | None) -> int:
    """``--workers`` as a command line gave it: :func:`default_count` when not given, else a positive
    integer or one line saying so (``index``, ``evaluate`` and ``tune`` alike)."""
    if given is None:
        return default_count()
    if given < 1:
        raise RankscopeError(f"--workers must be a positive integer, got {given}")
    return int(given)


class WorkerLost(RankscopeError):
    """A worker process ended without giving its result (killed, out of memory): no result is given."""


def pool_size(asked: int) -> int:
    """The processes a pool of ``asked`` workers gets now: ``asked`` where :func:`can_fork`, else 1, meaning
    the caller's own path in this process (the same numbers). Callers size a pool by this before
    :func:`forked_map`: with an OpenMP runtime loaded (a dense system indexed), workers forked would hang."""
    return asked if asked <= 1 or can_fork() else 1


def _start(parent: int, setup: Callable[..., None], arguments: tuple[Any, ...]) -> None:
    die_with_parent(parent)
    setup(*arguments)


def forked_map(
    workers: int,
    setup: Callable[..., None],
    arguments: tuple[Any, ...],
    task: Callable[[T], Any],
    items: Iterable[T],
    what: str,
    *,
    ahead: int | None = None,
) -> Generator[Any, None, None]:
    """``task(item)`` of each of ``items`` on ``workers`` forked processes, each having run
    ``setup(*arguments)`` first (inherited, not pickled); the results one at a time in the items' order,
    as each is ready (a progress bar can follow them). All items are submitted at once, or with ``ahead``
    at most that many are submitted and not yet given back: the items are read as results are taken, so an
    iterable of any length (the streaming index's batches) is mapped in bounded memory. A worker that
    dies is one :class:`WorkerLost` naming ``what``; a task's exception is raised here as it was raised
    there; either way, or if the iterator is closed early, the tasks not started are cancelled and no
    further result is given."""
    import multiprocessing  # here, not at import: the command-line parser reads default_count()
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    if ahead is not None and ahead < 1:
        raise ValueError(f"ahead must be a positive number of items, got {ahead}")
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start, initargs=(os.getpid(), setup, arguments)
    )
    pending: collections.deque[Future[Any]] = collections.deque()
    try:
        for item in items:
            pending.append(pool.submit(task, item))
            if ahead is not None and len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        raise WorkerLost(
            f"a worker process {what} ended before giving its result (killed, or out of memory?); no result is given"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
