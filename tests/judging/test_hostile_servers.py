"""Hostile servers cannot hang or exhaust the judge's HTTP client (issue 50 item 5): real HTTP servers on
127.0.0.1 (the stub server) that trickle their answer a byte every 0.7 s, inflate a 1 MB gzip body to
1 GiB, answer JSON that is no object or is nested 100,000 deep; and base URLs no request could use,
refused when the spec is read. Each call that gets no answer is a ``failed`` judgment whose ``raw`` is
the reason, naming the server.

On the code before: the trickle took a minute per call (a socket timeout bounds each read only), the
bomb was inflated whole before JSON refused it, a list, null or a number was a ``TypeError`` out of
``judge()`` and the deep nesting a ``RecursionError``; the URLs were accepted.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib

import pytest

from rankscope.judging import FAILED, OK, JudgeError, Judgment, Pair, make_judge, parse_judge_spec
from rankscope.judging.chat_http import MAX_ANSWER_BYTES, ChatClient, ChatError
from rankscope.judging.stub_server import Request, Response, StubServer, completion, compression_bomb

PAIR = Pair("q", "d", "query", "passage")


def where(server: StubServer) -> str:
    return server.url.split("/")[2]


def judged(server: StubServer, **options: object) -> Judgment:
    shown = ",".join(f"{k}={v}" for k, v in {"retries": 0, "timeout": 10, **options}.items())
    judge = make_judge(f"openai:model=m,base_url={server.url},{shown}")
    try:
        (got,) = judge.judge([PAIR])
    finally:
        judge.close()
    return got


@pytest.mark.parametrize("trickle_from", [0, 200], ids=["status line on", "body only"])
def test_an_answer_trickled_a_byte_every_0_7_s_ends_at_the_deadline(trickle_from: int) -> None:
    """Each byte comes well inside the 2 s a read may wait: only a deadline on the whole attempt ends it."""

    def trickled(request: Request) -> Response:
        body = completion(request, "Final score: 2")
        return Response(200, body, trickle=0.7, trickle_from=trickle_from)

    with StubServer(reply=trickled) as server:
        at = where(server)
        started = time.monotonic()
        got = judged(server, timeout=2)
        took = time.monotonic() - started
    assert got == Judgment(None, FAILED, f"no complete answer from {at} within 2 s")
    assert 1.9 < took < 4  # the old client waited for all ~400 bytes: 280 s


def test_a_trickled_answer_is_retried_and_each_attempt_is_bounded() -> None:
    with StubServer(reply=lambda request: Response(200, b"{}" * 50, trickle=0.7)) as server:
        at = where(server)
        started = time.monotonic()
        got = judged(server, timeout=1, retries=1)
        took = time.monotonic() - started
        assert len(server.requests) == 2
    assert got.raw == f"no complete answer from {at} within 1 s"
    assert 1.9 < took < 5  # two attempts of 1 s and one backoff of at most 0.5 s


@pytest.mark.slow  # inflates the GiB: 3-9 s of CPU
def test_the_bomb_is_one_gib() -> None:
    unpacker = zlib.decompressobj(31)
    inflated, rest = 0, compression_bomb("gzip")
    while rest:
        inflated += len(unpacker.decompress(rest, 2**24))
        rest = unpacker.unconsumed_tail
    assert unpacker.eof and inflated == 2**30 + 13


@pytest.mark.parametrize("method", ["gzip", "deflate"])
@pytest.mark.parametrize("status", [200, 500])
def test_a_compression_bomb_is_read_no_further_than_the_cap(method: str, status: int) -> None:
    body = compression_bomb(method)  # 1 GiB of zeros after a JSON object's start
    assert len(body) < 1.1 * 2**20
    with StubServer(reply=lambda request: Response(status, body, (("Content-Encoding", method),))) as server:
        at = where(server)
        tracemalloc.start()
        try:
            got = judged(server)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert got.status == FAILED and peak < 4 * MAX_ANSWER_BYTES  # the old client held the whole GiB
    if status == 200:
        assert got.raw == f"the answer from {at} is larger than 4 MiB decoded"
    else:  # the error body's start is quoted, no more of it read
        assert got.raw.startswith(f'HTTP 500 Internal Server Error from {at}: {{"choices": "\x00')


def test_a_small_gzip_answer_is_read() -> None:
    def zipped(request: Request) -> Response:
        return Response(200, gzip.compress(completion(request, "Final score: 3")), (("Content-Encoding", "gzip"),))

    with StubServer(reply=zipped) as server:
        assert judged(server) == Judgment(3, OK, "Final score: 3")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"[1, 2]", "is a list, not a JSON object"),
        (b"null", "is null, not a JSON object"),
        (b"42", "is a number, not a JSON object"),
        (b"1e999", "is a number, not a JSON object"),
        (b'"text"', "is a string, not a JSON object"),
        (b"true", "is a boolean, not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "is not JSON: arrays or objects nested deeper than"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "is not JSON: arrays or objects nested deeper than"),
        (b"\xff\xfe{}", "is not JSON: 'utf-8' codec can't decode byte 0xff"),
        (b"", "is not JSON: Expecting value"),
    ],
    ids=["list", "null", "number", "huge number", "string", "boolean", "deep list", "deep object", "bytes", "empty"],
)
def test_json_that_is_no_object_is_a_failed_call_with_its_reason(body: bytes, said: str) -> None:
    with StubServer(reply=lambda request: Response(200, body)) as server:
        at = where(server)
        got = judged(server)
    assert got.status == FAILED and got.raw.startswith(f"the answer from {at} {said}"), got.raw


def test_an_object_without_choices_is_invalid_and_named() -> None:
    with StubServer(reply=lambda request: Response(200, json.dumps({"choices": [None]}).encode())) as server:
        assert judged(server) == Judgment(None, "invalid", "{'choices': [None]}")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:8000 /v1", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:8000/v1\r\nX-Injected: 1", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:8000/v1\x00", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:99999/v1", "base_url has a port outside 1-65535 or not a number"),
        ("http://127.0.0.1:0/v1", "base_url has a port outside 1-65535 or not a number"),
        ("http://127.0.0.1:http/v1", "base_url has a port outside 1-65535 or not a number"),
        ("file:///etc/passwd", "base_url must be an http:// or https:// URL"),
    ],
)
def test_a_base_url_no_request_could_use_is_refused_when_the_spec_is_read(url: str, said: str) -> None:
    spec = f"openai:model=m,base_url={url}"
    with pytest.raises(JudgeError, match=f"^judge spec .*: {said}, got "):
        parse_judge_spec(spec)
    with pytest.raises(ValueError, match=said):
        ChatClient(url, "k", timeout=1, retries=0)


def test_reasons_name_the_status_line_and_the_server() -> None:
    with StubServer(reply=lambda request: Response(503, b"<h1>down\nfor maintenance</h1>")) as server:
        at = where(server)
        got = judged(server)
    assert got.raw == f"HTTP 503 Service Unavailable from {at}: <h1>down for maintenance</h1>"
    with StubServer() as server:
        closed = server.url
    judge = make_judge(f"openai:model=m,base_url={closed},retries=0,timeout=2")
    assert judge.judge([PAIR])[0].raw == f"connection refused by {closed.split('/')[2]}"
    with pytest.raises(ChatError, match="^connection refused by 127.0.0.1:"):
        ChatClient(closed, "k", timeout=1, retries=0).create({})


def test_a_deadline_that_passed_does_not_name_the_next_failure() -> None:
    """HTTPS connects before the request is sent: an earlier call's fired deadline must not make a refused
    connection read as a timeout."""
    with StubServer(reply=lambda request: Response(200, b"{}" * 50, trickle=0.7)) as server:
        with pytest.raises(ChatError, match="no complete answer"):
            ChatClient(server.url, "k", timeout=1, retries=0).create({})
        closed = server.url.replace("http://", "https://")
    with pytest.raises(ChatError, match="^connection refused by 127.0.0.1:"):
        ChatClient(closed, "k", timeout=1, retries=0).create({})
