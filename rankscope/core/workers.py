"""Worker processes of one command on this machine, forked: they start in milliseconds holding what this
process holds (tables, compiled structures, metrics defined here), so nothing is pickled on the way in,
and they die with it, killed or not (Linux's parent-death signal). The streaming index counts batches on
them (:mod:`rankscope.retrieval.streaming`) and the streamed evaluation scores spans of a run file
(:mod:`rankscope.evaluation.streaming`); Dask's workers (:mod:`rankscope.core.scheduler`) cost seconds to
start and background work while they run, which on a machine of two cores is more than the second core gives.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from rankscope.core.errors import RankscopeError
from rankscope.core.forked import die_with_parent

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")


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
