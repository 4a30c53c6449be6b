"""Chat-completions requests over urllib3: a pool of kept-alive connections shared by the judge's
threads, a timeout on every socket operation, retries with exponential backoff on what a server says
"try later" with (429, 408, 409, 5xx, a dropped connection), waiting a ``Retry-After`` it gives.

Why urllib3 and not the ``openai`` client library: measured on this project's 2-core machine against
the stub server in another process (``benchmarks/bench_judge_throughput.py``'s set-up), the ``openai``
client costs 3.3 ms of CPU per request (its typed request options and response models, httpx),
``AsyncOpenAI`` as much, so a judge topped out near 200 requests a second whatever the concurrency;
urllib3 costs 0.66 ms (the standard library's ``http.client`` alone 0.33 ms, without pooling,
retries or proxies), and a judge's throughput is then set by the server. A proxy named by
``HTTPS_PROXY``/``HTTP_PROXY`` (and ``NO_PROXY``) is used as the ``openai`` client would.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import urllib3
from urllib3.exceptions import HTTPError

RETRIED_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
"""The answers after which asking again may succeed."""
BACKOFF_START, BACKOFF_MAX, RETRY_AFTER_MAX = 0.5, 8.0, 60.0
"""Seconds: the first retry's wait, the longest, and the longest ``Retry-After`` honoured (the openai client's)."""


class HTTPStatusError(Exception):
    """The server answered with an error status (after the retries); the message carries its body."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}: {body[:2000].decode('utf-8', 'replace')}")
        self.status = status


REQUEST_ERRORS = (HTTPError, HTTPStatusError, ValueError)
"""What :meth:`ChatClient.create` raises once its retries are spent (urllib3's errors: no connection,
a timeout, a dropped answer; ``ValueError``: a body that is not JSON)."""


class _Retry(urllib3.Retry):
    """urllib3's retry rules with the openai client's waits: backoff from the first retry, with jitter,
    and a server's ``Retry-After`` (or ``retry-after-ms``) honoured up to :data:`RETRY_AFTER_MAX`."""

    def get_backoff_time(self) -> float:
        return _backoff(len(self.history) - 1)

    def get_retry_after(self, response: Any) -> float | None:
        return _retry_after(response.headers)


class ChatClient:
    """POSTs JSON bodies to ``<base_url>/chat/completions``; safe to call from many threads at once
    (``connections`` kept alive for them)."""

    def __init__(self, base_url: str, key: str, *, timeout: float, retries: int, connections: int = 32) -> None:
        parts = urllib.parse.urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
        self.url = f"{parts.geturl()}/chat/completions"
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {key}",
        }
        retry = _Retry(
            total=retries,
            allowed_methods=None,  # a chat completion is asked again: the judge keeps one answer per pair
            status_forcelist=RETRIED_STATUSES,
            raise_on_status=False,  # the last error answer is returned, and named with its body below
            respect_retry_after_header=True,
        )
        options: dict[str, Any] = {"maxsize": connections, "retries": retry, "timeout": urllib3.Timeout(timeout)}
        proxy = _proxy(parts.scheme, parts.hostname)
        self._pool = urllib3.ProxyManager(proxy, **options) if proxy else urllib3.PoolManager(**options)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's JSON answer to ``body``; raises urllib3's ``HTTPError``, :class:`HTTPStatusError`
        or ``ValueError`` (a body that is not JSON) once the retries are spent."""
        response = self._pool.request("POST", self.url, body=json.dumps(body).encode(), headers=self.headers)
        if response.status >= 300:
            raise HTTPStatusError(response.status, response.data)
        return dict(json.loads(response.data))

    def close(self) -> None:
        self._pool.clear()


def _backoff(attempt: int) -> float:
    """Exponential, capped, with up to 25% jitter (so many clients refused at once do not return at once)."""
    return min(BACKOFF_START * 2**attempt, BACKOFF_MAX) * (1 - 0.25 * random.random())  # noqa: S311 (timing only)


def _retry_after(headers: Mapping[str, str]) -> float | None:
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


def _proxy(scheme: str, host: str) -> str | None:
    """The URL of the proxy the environment names for ``scheme``, unless ``NO_PROXY`` exempts ``host``."""
    url = urllib.request.getproxies().get(scheme)
    if not url or urllib.request.proxy_bypass(host):
        return None
    return url if "://" in url else f"http://{url}"
