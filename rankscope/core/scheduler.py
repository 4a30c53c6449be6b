"""Where work runs: this process, or a Dask cluster (``--scheduler ADDRESS`` or ``local:N``; extra ``distributed``).

``local:N`` starts a ``LocalCluster`` of N worker processes (one thread each) on 127.0.0.1 for the
duration of the command; any other value is the address of a running scheduler
(``tcp://host:8786``, as ``dask-scheduler`` prints it, or one started by dask-jobqueue or the
Dask Kubernetes operator). Results never depend on where or on how many workers they ran
(docs/distributed.md). A scheduler that cannot be reached, or a server at the address that does not
answer as a Dask scheduler within :data:`CONNECT_TIMEOUT` (an HTTP server, a port that accepts and never
replies, one that replies garbage), is a one-line :class:`SchedulerError`: Dask's own ``Client`` waits
for the handshake without a limit.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
from collections.abc import Iterator
from concurrent.futures import CancelledError
from typing import Any

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import require_extra

CONNECT_TIMEOUT = 10
"""Seconds to wait for a scheduler at an address before giving up."""
ANSWER_TIMEOUT = 10
"""Seconds a server that accepted the connection has to answer as a Dask scheduler."""

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
    distributed = require_extra("distributed", "distributed", f"--scheduler {spec}")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    with contextlib.ExitStack() as stack:
        stack.enter_context(_dask_logs_quiet())
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
            _identify(target)
            try:
                client = Client(target, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise SchedulerError(f"cannot reach the Dask scheduler at {target}: {_said(exc)}") from None
            stack.enter_context(client)
        try:
            yield client
        except (CancelledError, OSError) as exc:  # Dask cancels every task when it loses the scheduler
            if client.status == "running" and not isinstance(exc, CancelledError):
                raise
            raise SchedulerError(
                f"lost the Dask scheduler at {spec} while working ({_said(exc)}); nothing was written: run the command again"
            ) from None


@contextlib.contextmanager
def _dask_logs_quiet() -> Iterator[None]:
    """Dask's loggers below CRITICAL while rankscope holds a client: losing the scheduler logs tracebacks of
    its reconnection attempts on stderr, and the command says what happened in one line instead."""
    names = ["distributed", *(n for n in logging.Logger.manager.loggerDict if n.startswith("distributed."))]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _identify(address: str) -> None:
    """Ask the server at ``address`` what it is, all within :data:`CONNECT_TIMEOUT`; refuse anything but a
    Dask scheduler. Run in a thread of its own so that a caller's running event loop (a notebook) is no matter."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect as open_comm

    async def ask() -> Any:
        comm = await open_comm(address, timeout=CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:  # connecting gives up by itself (an OSError) after CONNECT_TIMEOUT
        return await asyncio.wait_for(ask(), CONNECT_TIMEOUT + ANSWER_TIMEOUT)

    with ThreadPoolExecutor(1) as pool:
        try:
            answer = pool.submit(asyncio.run, bounded()).result()
        except TimeoutError:
            raise SchedulerError(
                f"the server at {address} accepted the connection but did not answer as a Dask scheduler "
                f"within {ANSWER_TIMEOUT} s (is it a scheduler's address?)"
            ) from None
        except Exception as exc:  # whatever the server sent broke Dask's protocol: the address is the problem
            raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {_said(exc)}") from None
    if not (isinstance(answer, dict) and answer.get("type") == "Scheduler"):
        what = answer.get("type") if isinstance(answer, dict) else type(answer).__name__
        raise SchedulerError(f"the server at {address} is not a Dask scheduler (it said it is a {what})")


def _said(exc: BaseException) -> str:
    """An exception's first line, or its type when it says nothing."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
