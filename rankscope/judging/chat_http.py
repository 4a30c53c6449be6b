"""Chat-completions requests over the standard library's ``http.client``: one kept-alive connection per
thread, a timeout on every socket operation, retries with exponential backoff on what a server says
"try later" with (429, 408, 409, 5xx, a dropped connection), waiting a ``Retry-After`` it gives.

Why not the ``openai`` client library: measured on this project's 2-core machine against the stub
server in another process (``benchmarks/bench_judge_throughput.py``'s set-up), it costs 3.3 ms of
CPU per request (its typed request options and response models, httpx), ``AsyncOpenAI`` as much,
so a judge tops out near 200 requests a second whatever the concurrency; this costs 0.3 ms, and a
judge's throughput is then set by the server. A proxy named by ``HTTPS_PROXY``/``HTTP_PROXY`` (and
``NO_PROXY``) is used as the ``openai`` client would.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import threading
import time
import urllib.parse
import urllib.request
from typing import Any

RETRIED_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: the answers after which asking again may succeed."""
BACKOFF_START, BACKOFF_MAX, RETRY_AFTER_MAX = 0.5, 8.0, 60.0
"""Seconds: the first retry's wait, the longest, and the longest ``Retry-After`` honoured (the openai client's)."""


class HTTPStatusError(Exception):
    """The server answered with an error status (after the retries); the message carries its body."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}: {body[:2000].decode('utf-8', 'replace')}")
        self.status = status


REQUEST_ERRORS = (OSError, http.client.HTTPException, HTTPStatusError, ValueError)
"""What :meth:`ChatClient.create` raises once its retries are spent (``ValueError``: a body that is not JSON)."""


class ChatClient:
    """POSTs JSON bodies to ``<base_url>/chat/completions``; safe to call from many threads at once."""

    def __init__(self, base_url: str, key: str, *, timeout: float, retries: int) -> None:
        parts = urllib.parse.urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.path = f"{parts.path}/chat/completions"
        self.timeout, self.retries = timeout, retries
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {key}",
        }
        self.proxy = _proxy(parts.scheme, self.host)
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's JSON answer to ``body``; raises ``OSError``, ``http.client.HTTPException``,
        :class:`HTTPStatusError` or ``ValueError`` (a body that is not JSON) once the retries are spent."""
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                status, headers, answer = self._post(data)
            except (OSError, http.client.HTTPException):
                self._drop()
                if last:
                    raise
                time.sleep(_backoff(attempt))
                continue
            if status < 300:
                return dict(json.loads(answer))
            if last or not (status in RETRIED_STATUSES or status >= 500):
                raise HTTPStatusError(status, answer)
            time.sleep(_retry_after(headers) or _backoff(attempt))
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    def close(self) -> None:
        with self._lock:
            for connection in self._opened:
                connection.close()
            self._opened.clear()

    def _post(self, data: bytes) -> tuple[int, http.client.HTTPMessage, bytes]:
        connection = self._connection()
        target = self.path
        if self.proxy and self.scheme == "http":  # a plain-HTTP proxy takes the absolute URL
            target = f"http://{self.host}:{self.port}{self.path}"
        connection.request("POST", target, data, self.headers)
        response = connection.getresponse()
        return response.status, response.headers, response.read()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            host, port = self.proxy or (self.host, self.port)
            if self.scheme == "https":
                connection = http.client.HTTPSConnection(host, port, timeout=self.timeout)
                if self.proxy:
                    connection.set_tunnel(self.host, self.port)
            else:
                connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._opened.append(connection)
        return connection

    def _drop(self) -> None:
        """Close this thread's connection after a failure: the next try opens a fresh one."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


def _backoff(attempt: int) -> float:
    """Exponential, capped, with up to 25% jitter (so many clients refused at once do not return at once)."""
    return min(BACKOFF_START * 2**attempt, BACKOFF_MAX) * (1 - 0.25 * random.random())  # noqa: S311 (timing only)


def _retry_after(headers: http.client.HTTPMessage) -> float | None:
    """The wait a ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header asks for, if sane."""
    wait: float | None = None
    if (millis := headers.get("retry-after-ms")) is not None:
        try:
            wait = float(millis) / 1000
        except ValueError:
            wait = None
    if wait is None and (value := headers.get("retry-after")) is not None:
        try:
            wait = float(value)
        except ValueError:
            date = email.utils.parsedate_to_datetime(value) if email.utils.parsedate_tz(value) else None
            wait = date.timestamp() - time.time() if date is not None else None
    return wait if wait is not None and 0 < wait <= RETRY_AFTER_MAX else None


def _proxy(scheme: str, host: str) -> tuple[str, int] | None:
    """(host, port) of the proxy the environment names for ``scheme``, unless ``NO_PROXY`` exempts ``host``."""
    url = urllib.request.getproxies().get(scheme)
    if not url or urllib.request.proxy_bypass(host):
        return None
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    return (parts.hostname or "", parts.port or 80) if parts.hostname else None
