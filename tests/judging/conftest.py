"""A stub OpenAI-compatible chat-completions server on 127.0.0.1, run in a thread for the duration of a test.

Its answer depends on a word in the query (the prompt carries it): ``RATE`` is refused once with 429
and ``Retry-After: 2``, then answered; ``SLOW`` sleeps past the client's timeout; ``RAMBLE`` gets a
reply with no grade; ``SEVEN`` a grade outside 0-3; ``JUNK`` a body that is not JSON; ``ECHOKEY`` a
401 quoting the Authorization header; anything else ``Final score: N`` with N the query's length mod 4.
Every request is recorded (arrival time, body, headers) and the most requests in flight at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class StubLog:
    requests: list[dict] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    refused: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0

    def count(self, word: str) -> int:
        return sum(word in r["body"]["messages"][1]["content"] for r in self.requests)


def query_of(prompt: str) -> str:
    return re.search(r"^Query: (.*)$", prompt, re.MULTILINE).group(1)


def make_handler(log: StubLog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with log.lock:
                log.requests.append(
                    {"time": time.monotonic(), "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}}
                )
                log.in_flight += 1
                log.most_in_flight = max(log.most_in_flight, log.in_flight)
            try:
                self.answer(body)
            finally:
                with log.lock:
                    log.in_flight -= 1

        def answer(self, body: dict) -> None:
            query = query_of(body["messages"][1]["content"])
            if log.delay:
                time.sleep(log.delay)
            if "RATE" in query and query not in log.refused:
                log.refused.add(query)
                self.send(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "2"})
                return
            if "SLOW" in query:
                time.sleep(2.0)
            if "JUNK" in query:
                self.send(200, b"<html>not json</html>")
                return
            if "ECHOKEY" in query:
                said = json.dumps({"error": {"message": f"bad key {self.headers.get('Authorization')}"}})
                self.send(401, said.encode())
                return
            text = f"Final score: {len(query) % 4}"
            if "RAMBLE" in query:
                text = "The passage seems somewhat related, I would say it is relevant."
            elif "SEVEN" in query:
                text = "Final score: 7"
            reply = {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            self.send(200, json.dumps(reply).encode())

    return Handler


@pytest.fixture()
def stub_server() -> Iterator[tuple[str, StubLog]]:
    """(base_url, log) of a running stub server; shut down after the test."""
    log = StubLog()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(log))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", log
    finally:
        server.shutdown()
        server.server_close()
