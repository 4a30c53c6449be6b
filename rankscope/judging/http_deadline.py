"""A deadline on a whole HTTP attempt for urllib3: sending, the status line, the headers and the body.

urllib3's timeouts are socket timeouts: each read may wait that long, so a server sending one byte
every 0.7 s holds a client with a 1 s timeout for ever. Here an attempt is armed when its request is
sent (:meth:`WatchedHTTPConnection.request`, with the seconds :func:`deadline` set for the thread)
and one watchdog thread, shared by every request in flight, shuts the attempt's socket down when its
time is up: the read blocked on it returns at once, and the attempt fails as a read timeout (urllib3
retries it like one). The caller reading the body disarms the attempt when it has the last byte
(:func:`disarm`) and asks :func:`passed` whether what it read was cut by the deadline.

A shared thread rather than a timer per request: arming is a heap push under a lock, not a thread
start, so a judge sending hundreds of requests a second pays microseconds for it. After a fork the
child starts its own watchdog (the parent's thread does not exist there).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection


@dataclass(eq=False)
class _Alarm:
    at: float
    connection: HTTPConnection
    fired: bool = False
    cancelled: bool = False


@dataclass(eq=False)
class _Watchdog:
    """Shuts down the socket of each armed attempt whose time is up (see the module)."""

    _wake: threading.Condition = field(default_factory=threading.Condition)
    _alarms: list[tuple[float, int, _Alarm]] = field(default_factory=list)
    _order: Iterator[int] = field(default_factory=itertools.count)
    _thread: threading.Thread | None = None

    def arm(self, seconds: float, connection: HTTPConnection) -> _Alarm:
        alarm = _Alarm(time.monotonic() + seconds, connection)
        with self._wake:
            heapq.heappush(self._alarms, (alarm.at, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="rankscope-http-deadlines", daemon=True)
                self._thread.start()
            if self._alarms[0][2] is alarm:  # the earliest now: the watchdog sleeps until a later one
                self._wake.notify()
        return alarm

    def cancel(self, alarm: _Alarm) -> None:
        """After this returns, ``alarm`` does not fire (the connection may go back to the pool)."""
        with self._wake:
            alarm.cancelled = True

    def _watch(self) -> None:
        with self._wake:
            while True:
                while self._alarms and self._alarms[0][2].cancelled:
                    heapq.heappop(self._alarms)
                if not self._alarms:
                    self._wake.wait()
                    continue
                wait = self._alarms[0][0] - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                alarm = heapq.heappop(self._alarms)[2]
                alarm.fired = True
                sock = alarm.connection.sock
                if sock is not None:
                    with contextlib.suppress(OSError):  # the base class's: a TLS socket's own would touch its state
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)


_WATCHDOG = _Watchdog()
_THREAD = threading.local()  # seconds: this thread's deadline per attempt; alarm: its attempt in flight


def _new_watchdog() -> None:
    global _WATCHDOG
    _WATCHDOG = _Watchdog()


os.register_at_fork(after_in_child=_new_watchdog)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every attempt this thread sends in the block must end within ``seconds`` of being sent."""
    _THREAD.seconds, _THREAD.alarm = seconds, None  # no earlier call's alarm answers for this one
    try:
        yield
    finally:
        disarm()
        _THREAD.seconds = None


def disarm() -> None:
    """The attempt in flight on this thread has ended (its body read, or given up)."""
    alarm = getattr(_THREAD, "alarm", None)
    if alarm is not None:
        _WATCHDOG.cancel(alarm)


def passed() -> bool:
    """Whether the deadline of this thread's last attempt passed (what it read may be cut short)."""
    alarm = getattr(_THREAD, "alarm", None)
    return alarm is not None and alarm.fired


class WatchedHTTPConnection(HTTPConnection):
    """urllib3's connection, armed with the thread's deadline when a request is sent."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        disarm()  # a retry: the previous attempt is over
        seconds = getattr(_THREAD, "seconds", None)
        _THREAD.alarm = None if seconds is None else _WATCHDOG.arm(seconds, self)
        super().request(*args, **kwargs)

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().getresponse(*args, **kwargs)
        except Exception as exc:
            if passed():  # what the shut socket raised: a dropped connection, an incomplete read
                raise TimeoutError("the deadline passed") from exc  # urllib3: a read timeout
            raise


class WatchedHTTPSConnection(WatchedHTTPConnection, HTTPSConnection):
    """The same over TLS."""


class WatchedHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = WatchedHTTPConnection


class WatchedHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = WatchedHTTPSConnection


POOLS = {"http": WatchedHTTPPool, "https": WatchedHTTPSPool}
"""``PoolManager.pool_classes_by_scheme`` for watched connections."""
