"""A stand-in OpenAI-compatible chat-completions server on 127.0.0.1: try a judging pipeline, test it,
or measure its throughput without a model.

:class:`StubServer` is a real HTTP server (the standard library's, one thread per connection, HTTP/1.1
keep-alive as real servers speak it) that answers every ``POST`` after a fixed ``delay``; what it
answers is a function of the request (:data:`Reply`), by default ``Final score: N`` with N from a
hash of the last message, so a repeated question gets the same grade. It records each request
(arrival time, JSON body, headers) and the most requests it held at once, which is what a test of
a client's concurrency or retries reads. It lives in the package, not under ``tests/``, because
the benchmarks and a user's own tests need it as much as rankscope's tests do; it imports nothing
beyond the standard library.

    with StubServer(delay=0.05) as server:
        judge = make_judge(f"openai:model=stub,base_url={server.url},concurrency=32")
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Response:
    """An answer other than a chat completion: a status, a raw body and headers (errors, junk, a gzip
    bomb with ``Content-Encoding: gzip``). ``trickle`` > 0 sends the answer one byte every ``trickle``
    seconds from byte ``trickle_from`` on (0: from the status line; the bytes before go at once), as a
    hostile or broken server does."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    trickle: float = 0.0
    trickle_from: int = 0


@dataclass(frozen=True)
class Request:
    """One request the server received: when (``time.monotonic``), its JSON body, its headers (lower-cased)
    and the target of its request line (a path, or the absolute URL a client sends through a proxy)."""

    time: float
    body: dict[str, Any]
    headers: dict[str, str]
    path: str = ""

    @property
    def prompt(self) -> str:
        """The last message's text (the user turn of a judge's prompt)."""
        return str(self.body["messages"][-1]["content"])


Reply = Callable[[Request], "str | Response"]
"""What the server answers a request: the assistant's text (sent as a chat completion) or a :class:`Response`."""


def hashed_grade(request: Request) -> str:
    """The default reply: ``Final score: N``, N from the SHA-256 of the prompt (the same question, the same grade)."""
    return f"Final score: {hashlib.sha256(request.prompt.encode()).digest()[0] % 4}"


def completion(request: Request, text: str) -> bytes:
    """A chat-completion body carrying ``text``, with a ``usage`` of about 4 characters a token."""
    prompt_tokens = sum(len(str(m.get("content", ""))) for m in request.body.get("messages", [])) // 4
    completion_tokens = max(1, len(text) // 4)
    return json.dumps(
        {
            "id": "stub",
            "object": "chat.completion",
            "created": 0,
            "model": request.body.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


@functools.cache  # the same bytes for every request that sends one
def compression_bomb(encoding: str = "gzip", mebibytes: int = 1024, start: bytes = b'{"choices": "') -> bytes:
    """A body for ``Content-Encoding: encoding`` (gzip, or deflate: raw, as browsers read it) that inflates to
    ``start`` and ``mebibytes`` MiB of zeros from about 1 kB a MiB: one MiB of zeros compressed once and
    repeated, each copy ending in a full flush so the repeats continue the stream (0.3 s for 1 GiB)."""
    zeros = bytes(2**20)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = packer.compress(start + zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    raw = first + again * (mebibytes - 1) + packer.flush()
    if encoding == "deflate":
        return raw
    crc = zlib.crc32(start)
    for _ in range(mebibytes):
        crc = zlib.crc32(zeros, crc)
    size = (len(start) + mebibytes * 2**20) % 2**32
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw + struct.pack("<II", crc, size)


@dataclass
class StubServer:
    """Serves :data:`Reply` answers after ``delay`` seconds; ``url`` is the base URL a client takes (``.../v1``).

    A context manager: started on entry (a free port on 127.0.0.1), shut down on exit.
    """

    reply: Reply = hashed_grade
    delay: float = 0.0
    requests: list[Request] = field(default_factory=list)
    most_in_flight: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub server is not running (use it as a context manager)")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.request_queue_size = 256  # a burst of new connections is queued, not refused
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def prompts(self) -> list[str]:
        """Every request's prompt, in arrival order."""
        with self._lock:
            return [r.prompt for r in self.requests]

    def _arrived(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self._in_flight)

    def _left(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timed out, killed) is what clients do, not an error to print."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: a client's pooled connections are reused
        disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (Nagle + delayed ACK)

        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = Request(time.monotonic(), json.loads(raw), headers, self.path)
            stub._arrived(request)
            try:
                if stub.delay:
                    time.sleep(stub.delay)
                answer = stub.reply(request)
                if isinstance(answer, str):
                    answer = Response(200, completion(request, answer))
                if answer.trickle:
                    self.trickle(answer)
                    return
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            finally:
                stub._left()

        def trickle(self, answer: Response) -> None:
            """The whole answer, one byte every ``answer.trickle`` seconds from byte ``trickle_from`` on."""
            reason = self.responses.get(answer.status, ("",))[0]
            headers = [("Content-Type", "application/json"), *answer.headers, ("Content-Length", str(len(answer.body)))]
            head = f"HTTP/1.1 {answer.status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
            whole = head.encode("latin-1") + answer.body
            self.wfile.write(whole[: answer.trickle_from])
            for at in range(answer.trickle_from, len(whole)):
                time.sleep(answer.trickle)
                self.wfile.write(whole[at : at + 1])

    return Handler
