"""Write files on the second core: a forked child writes some of a report folder's files while this
process writes the others (``finish`` has the child draw and save the figures, which also keeps
matplotlib's import off this process).

Only where forking is safe: Linux, and no other Python thread running but tqdm's monitor (a thread
holding a lock at the fork would leave it locked in the child forever; Jupyter and Dask clients start
threads, and then the work is done here, one part after the other). The monitor, which a progress bar
on a terminal starts, only ever takes tqdm's own lock, which the child never uses. The child reports the paths it
wrote through a pipe and leaves with ``os._exit`` (no exit handlers, no flushing of buffers it
inherited). If it fails in any way, the work is done again in this process, so an error (a full disk,
a bad value) is raised here exactly as without the child.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

IDLE_THREADS = frozenset({"tqdm_monitor"})
"""Threads that may run at the fork: they take no lock the child's work needs."""

FORK_ENV = "RANKSCOPE_FORK"
"""``RANKSCOPE_FORK=0`` keeps every write in this process (for debugging; the files are the same)."""


def can_fork() -> bool:
    """True where :func:`start` runs its work in a child process."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and threading.active_count() == 1 + sum(t.name in IDLE_THREADS for t in threading.enumerate())
        and os.environ.get(FORK_ENV, "1") != "0"
    )


def start(work: Callable[[], list[Path]]) -> Callable[[], list[Path]]:
    """Start ``work`` (writing files, returning their paths) in a forked child when :func:`can_fork`;
    the function returned waits for it and gives the paths. Without a child, ``work`` runs when waited for."""
    if not can_fork():
        return work
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: do the work, say what was written, leave without exit handlers
        code = 1
        try:
            os.close(read)
            data = json.dumps([str(path) for path in work()]).encode("utf-8")
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
            code = 0
        except BaseException:  # noqa: BLE001 - any failure: the parent does the work again and raises it
            code = 1
        finally:
            os._exit(code)
    os.close(write)

    def wait() -> list[Path]:
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return work()  # the same work here: its error, if any, is raised in this process
        return [Path(path) for path in json.loads(data.decode("utf-8"))]

    return wait
