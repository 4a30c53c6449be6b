"""Chat-completions requests over urllib3: a pool of kept-alive connections shared by the judge's
threads, a deadline on every request, retries with exponential backoff on what a server says
"try later" with (429, 408, 409, 5xx, a dropped connection), waiting a ``Retry-After`` it gives.

Why urllib3 and not the ``openai`` client library: measured on this project's 2-core machine against
the stub server in another process (``benchmarks/bench_judge_throughput.py``'s set-up), the ``openai``
client costs 3.3 ms of CPU per request (its typed request options and response models, httpx),
``AsyncOpenAI`` as much, so a judge topped out near 200 requests a second whatever the concurrency;
urllib3 costs 0.66 ms (the standard library's ``http.client`` alone 0.33 ms, without pooling,
retries or proxies), and a judge's throughput is then set by the server. A proxy named by
``HTTPS_PROXY``/``HTTP_PROXY`` (and ``NO_PROXY``) is used as the ``openai`` client would.

What a hostile or broken server can do is bounded here, for every caller:

- ``timeout`` bounds each attempt whole, from sending the request to the answer's last byte (a
  socket timeout bounds each read only: a reply trickled a byte every 0.7 s never tripped a 1 s
  timeout). One watchdog thread shuts the socket of an attempt past its deadline, so a read
  blocked on it returns at once; the attempt is then retried like any timeout.
- An answer is read at most :data:`MAX_ANSWER_BYTES` decoded (a 1 MB gzip body inflating to 1 GB
  was inflated whole), an error body :data:`MAX_ERROR_BYTES`.
- An answer must be a JSON object (:func:`rankscope.core.jsonstrict.loads`: nesting 100,000 deep
  is an error, not a ``RecursionError``); a list, ``null``, a number or broken JSON is a failed call.

Everything :meth:`ChatClient.create` raises is a :class:`ChatError` whose message is the reason in
one line, naming the server (``host:port``): an HTTP status and its body, a timeout, a refused
connection, an answer that is too large or no JSON object.
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
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)

from rankscope.core.jsonstrict import loads
from rankscope.judging import http_deadline
from rankscope.judging.endpoint import checked_base_url, host_and_port

RETRIED_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
"""The answers after which asking again may succeed."""
BACKOFF_START, BACKOFF_MAX, RETRY_AFTER_MAX = 0.5, 8.0, 60.0
"""Seconds: the first retry's wait, the longest, and the longest ``Retry-After`` honoured (the openai client's)."""
MAX_ANSWER_BYTES = 4 * 2**20
"""Most bytes of an answer read, decoded: a judge's reply is a few hundred; 256 in flight stay under 1 GiB."""
MAX_ERROR_BYTES = 64 * 2**10
"""Most bytes of an error answer's body read (its start is quoted in the reason)."""
CHUNK = 64 * 2**10


class ChatError(Exception):
    """A call that got no usable answer (after the retries); the message is the reason, in one line."""


class HTTPStatusError(ChatError):
    """The server answered with an error status (after the retries); the message carries its body's start."""

    def __init__(self, status: int, reason: str, body: bytes, where: str) -> None:
        text = " ".join(body.decode("utf-8", "replace").split())[:300]
        said = f"{f'HTTP {status} {reason}'.strip()} from {where}"
        super().__init__(f"{said}: {text}" if text else said)
        self.status = status


REQUEST_ERRORS = (ChatError,)
"""What :meth:`ChatClient.create` raises once its retries are spent."""


class _Retry(urllib3.Retry):
    """urllib3's retry rules with the openai client's waits: backoff from the first retry, with jitter,
    and a server's ``Retry-After`` (or ``retry-after-ms``) honoured up to :data:`RETRY_AFTER_MAX`."""

    def get_backoff_time(self) -> float:
        return _backoff(len(self.history) - 1)

    def get_retry_after(self, response: Any) -> float | None:
        return _retry_after(response.headers)


class ChatClient:
    """POSTs JSON bodies to ``<base_url>/chat/completions``; safe to call from many threads at once
    (``connections`` kept alive for them). ``timeout``: seconds each attempt may take, whole."""

    def __init__(self, base_url: str, key: str, *, timeout: float, retries: int, connections: int = 32) -> None:
        base_url = checked_base_url(base_url)
        self.url = f"{base_url}/chat/completions"
        self.where = host_and_port(base_url)
        self.timeout = timeout
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
        proxy = _proxy(base_url)
        self._pool = urllib3.ProxyManager(proxy, **options) if proxy else urllib3.PoolManager(**options)
        self._pool.pool_classes_by_scheme = http_deadline.POOLS

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's JSON object answering ``body``; a :class:`ChatError` naming the reason otherwise."""
        with http_deadline.deadline(self.timeout):
            try:
                response = self._pool.request(
                    "POST", self.url, body=json.dumps(body).encode(), headers=self.headers, preload_content=False
                )
            except HTTPError as exc:
                raise ChatError(self._reason(exc)) from None
            ok = response.status < 300
            try:
                data = _read(response, MAX_ANSWER_BYTES if ok else MAX_ERROR_BYTES)
            except (HTTPError, OSError) as exc:
                response.close()
                raise ChatError(self._reason(exc)) from None
            finally:
                http_deadline.disarm()
                response.release_conn()
            if http_deadline.passed():  # read to an end the shut socket made: cut short
                raise ChatError(self._late())
        if not ok:
            raise HTTPStatusError(response.status, _printable(response.reason or ""), data, self.where)
        if len(data) > MAX_ANSWER_BYTES:
            raise ChatError(f"the answer from {self.where} is larger than {MAX_ANSWER_BYTES // 2**20} MiB decoded")
        return _json_object(data, self.where)

    def close(self) -> None:
        self._pool.clear()

    def _late(self) -> str:
        return f"no complete answer from {self.where} within {self.timeout:g} s"

    def _reason(self, exc: BaseException) -> str:
        """Why a call failed, in one line naming the server."""
        if isinstance(exc, MaxRetryError) and exc.reason is not None:
            return self._reason(exc.reason)
        if http_deadline.passed() or isinstance(exc, ReadTimeoutError):
            return self._late()
        if isinstance(exc, ConnectTimeoutError) and not isinstance(exc, NewConnectionError):
            return f"no connection to {self.where} within {self.timeout:g} s"
        if isinstance(exc, NameResolutionError):
            return f"cannot resolve the host of {self.where}"
        if isinstance(exc, NewConnectionError):
            said = str(exc).rsplit("Failed to establish a new connection: ", 1)[-1]
            return (
                f"connection refused by {self.where}"
                if "refused" in said.lower()
                else f"no connection to {self.where}: {said}"
            )
        if isinstance(exc, ProxyError):
            return f"the proxy to {self.where} failed: {exc.original_error}"
        if isinstance(exc, SSLError):
            return f"TLS failed with {self.where}: {exc}"
        if isinstance(exc, ProtocolError):
            return f"{self.where} broke the connection: {exc.args[-1]}"
        return f"{type(exc).__name__} from {self.where}: {exc}"


def _read(response: Any, limit: int) -> bytes:
    """The answer's body, decoded, read up to one chunk past ``limit`` (never inflated whole)."""
    parts, size = [], 0
    while size <= limit:
        chunk = response.read(CHUNK, decode_content=True)
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    if size > limit:
        response.close()  # the rest is not read: this connection cannot serve another request
    return b"".join(parts)


def _json_object(data: bytes, where: str) -> dict[str, Any]:
    """The answer as a JSON object, or a :class:`ChatError` saying what it is instead."""
    try:
        value = loads(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, jsonstrict's own
        raise ChatError(f"the answer from {where} is not JSON: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(value, dict):
        kind = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
        raise ChatError(f"the answer from {where} is {kind}, not a JSON object")
    return value


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)[:100]


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


def _proxy(base_url: str) -> str | None:
    """The URL of the proxy the environment names for the URL's scheme, unless ``NO_PROXY`` exempts its host."""
    parts = urllib.parse.urlsplit(base_url)
    url = urllib.request.getproxies().get(parts.scheme)
    if not url or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return url if "://" in url else f"http://{url}"
