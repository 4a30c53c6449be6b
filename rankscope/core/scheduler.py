"""Where work runs: this process, or a Dask cluster (``--scheduler ADDRESS`` or ``local:N``; extra ``distributed``).

``local:N`` starts a ``LocalCluster`` of N worker processes (one thread each) on 127.0.0.1 for the
duration of the command; any other value is the address of a running scheduler
(``tcp://host:8786``, as ``dask-scheduler`` prints it, or one started by dask-jobqueue or the
Dask Kubernetes operator). Results never depend on where or on how many workers they ran
(docs/distributed.md). A scheduler that cannot be reached is a one-line :class:`SchedulerError`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

from rankscope.core.errors import RankscopeError

CONNECT_TIMEOUT = 10
"""Seconds to wait for a scheduler at an address before giving up."""

_LOCAL = re.compile(r"local:([1-9][0-9]{0,2})")


class SchedulerError(RankscopeError):
    """The scheduler spec is malformed, Dask is not installed, or the scheduler cannot be reached."""


def add_scheduler(parser: argparse.ArgumentParser, what: str) -> None:
    """The ``--scheduler`` option of a command; ``what`` says what the command runs there."""
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS|local:N",
        help=f"run on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N worker processes "
        f'on this machine; {what} (extra "distributed", docs/distributed.md)',
    )


def parse_scheduler(spec: str) -> int | str:
    """The number of local workers of ``local:N``, or the address given."""
    if spec.startswith("local"):
        match = _LOCAL.fullmatch(spec)
        if match is None:
            raise SchedulerError(f"scheduler {spec!r}: write local:N with N worker processes (1-999), e.g. local:2")
        return int(match.group(1))
    if not spec.strip() or any(c.isspace() for c in spec):
        raise SchedulerError(f"scheduler {spec!r}: give an address like tcp://host:8786 or local:N")
    return spec


@contextlib.contextmanager
def connect(spec: str) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec``, closed (and a local cluster stopped) on exit."""
    target = parse_scheduler(spec)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SchedulerError(f'--scheduler {spec} needs Dask: pip install "rankscope[distributed]"') from None
    with contextlib.ExitStack() as stack:
        if isinstance(target, int):
            cluster = LocalCluster(
                n_workers=target,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # a free port, loopback only
                silence_logs=logging.ERROR,
            )
            stack.enter_context(cluster)
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = Client(target, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise SchedulerError(f"cannot reach the Dask scheduler at {target}: {said}") from None
            stack.enter_context(client)
        yield client


@contextlib.contextmanager
def using(scheduler: Any) -> Iterator[Any]:
    """A client for ``scheduler``: None gives None (this process), a spec is :func:`connect`-ed and
    closed on exit, a connected ``distributed.Client`` is used as it is and left open."""
    if scheduler is None or not isinstance(scheduler, str):
        yield scheduler
        return
    with connect(scheduler) as client:
        yield client


def worker_count(client: Any) -> int:
    """Workers the scheduler has now (at least 1: work waits for a worker to join)."""
    return max(1, len(client.scheduler_info()["workers"]))
