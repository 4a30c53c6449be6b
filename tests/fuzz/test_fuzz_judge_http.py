"""Fuzz: what a hostile judge server does to ``rankscope judge`` (issue 50 items 1-5).

Each case runs ``rankscope judge`` in-process against a real HTTP server on 127.0.0.1 (the stub server)
that answers a quarter of the prompts in one hostile way and grades the rest: an error status, an
answer trickled a byte every 0.7 s, a gzip or deflate body inflating to 1 GiB, JSON that is a list,
``null``, a number, a string or nested 100,000 deep, bytes that are no UTF-8, no JSON at all. Each
must end with exit 0 and one warning line naming the failed calls' reason (never a traceback, a hang
or a silently dropped failure). A judge spec whose ``base_url`` no request could use is one error
line. A server echoing the ``Authorization`` header in every answer leaves no trace of the key in any
file written. Random bodies under random content encodings are each a failed or invalid judgment
with its reason, never an exception.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.judging import FAILED, INVALID, OK, Pair, make_judge
from rankscope.judging.stub_server import Request, Response, StubServer, completion, compression_bomb, hashed_grade

WORDS = "wing flow shock boundary layer heat transfer pressure drag lift vortex jet nozzle plate cone".split()
KEY = "sk-fuzz-9Kq2LmX7pR4tV8wZ3nB6"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEIR folder of 30 documents over 15 words, 6 queries with two judged documents each."""
    root = tmp_path_factory.mktemp("judge-http") / "data"
    (root / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"d{i}", "title": "", "text": " ".join(WORDS[(i * j + i) % 15] for j in range(9))} for i in range(30)
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{i}", "text": f"{WORDS[i]} {WORDS[i + 3]}"} for i in range(6)]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    judged = "".join(f"q{i}\td{i}\t1\nq{i}\td{i + 1}\t2\n" for i in range(6))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judged)
    return root


HOSTILE: dict[str, tuple[Callable[[Request], Response], str]] = {
    "500": (lambda r: Response(500, b'{"error": "overloaded"}'), "HTTP 500 Internal Server Error from"),
    "429 for ever": (lambda r: Response(429, b"slow down", (("Retry-After", "0"),)), "HTTP 429 Too Many Requests"),
    "trickled": (lambda r: Response(200, completion(r, "Final score: 2"), trickle=0.7), "within 1 s"),
    "trickled body": (
        lambda r: Response(200, completion(r, "Final score: 2"), trickle=0.7, trickle_from=150),
        "within 1 s",
    ),
    "gzip bomb": (
        lambda r: Response(200, compression_bomb("gzip"), (("Content-Encoding", "gzip"),)),
        "larger than 4 MiB",
    ),
    "deflate bomb": (
        lambda r: Response(200, compression_bomb("deflate"), (("Content-Encoding", "deflate"),)),
        "larger than 4 MiB",
    ),
    "list": (lambda r: Response(200, b"[1, 2, 3]"), "is a list, not a JSON object"),
    "null": (lambda r: Response(200, b"null"), "is null, not a JSON object"),
    "number": (lambda r: Response(200, b"-1.5e308"), "is a number, not a JSON object"),
    "string": (lambda r: Response(200, b'"Final score: 3"'), "is a string, not a JSON object"),
    "deep list": (lambda r: Response(200, b"[" * 100_000 + b"]" * 100_000), "nested deeper than"),
    "deep object": (lambda r: Response(200, b'{"a":' * 100_000 + b"0" + b"}" * 100_000), "nested deeper than"),
    "not utf-8": (lambda r: Response(200, b'{"choices": "\xff\xfe"}'), "codec can't decode"),
    "html": (lambda r: Response(200, b"<html><body>502 Bad Gateway</body></html>"), "is not JSON"),
    "duplicate keys": (lambda r: Response(200, b'{"choices": [], "choices": []}'), "is not JSON"),
    "escape codes": (lambda r: Response(503, b"\x1b]0;pwned\x07\x1b[2Jdown"), "HTTP 503 Service Unavailable"),
}


def hostile_quarter(answer: Callable[[Request], Response]) -> Callable[[Request], str | Response]:
    """``answer`` for about a quarter of the prompts (by their hash), a hashed grade for the others."""

    def reply(request: Request) -> str | Response:
        if hashlib.sha256(request.prompt.encode()).digest()[1] % 4 == 0:
            return answer(request)
        return hashed_grade(request)

    return reply


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_answer_is_a_warning_naming_its_reason(data: Path, tmp_path: Path, case: str) -> None:
    answer, fragment = HOSTILE[case]
    if case.endswith("bomb"):
        compression_bomb(case.split()[0])  # made (and cached) before the server's threads need it
    with StubServer(reply=hostile_quarter(answer)) as server:
        spec = f"openai:model=m,base_url={server.url},retries=1,timeout=1"
        argv = ["judge", "--dataset", str(data), "--systems", "bm25", "--judge", spec]
        outcome = run_cli([*argv, "--judgments", str(tmp_path / "cache"), "--quiet"])
    check(outcome, "warning", fragment)
    assert "the judge failed" in outcome.err and "\x1b" not in outcome.err


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1:8000 /v1", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:8000/v1\r\nX-Injected: 1", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:8000/v\t1", "base_url must not hold spaces or control characters"),
        ("http://127.0.0.1:99999/v1", "base_url has a port outside 1-65535"),
        ("http://127.0.0.1:0/v1", "base_url has a port outside 1-65535"),
        ("http://127.0.0.1:-1/v1", "base_url has a port outside 1-65535"),
        ("http://127.0.0.1:8o8o/v1", "base_url has a port outside 1-65535"),
        ("gopher://127.0.0.1/v1", "base_url must be an http:// or https:// URL"),
        ("http:///v1", "base_url must be an http:// or https:// URL"),
    ],
)
def test_a_base_url_no_request_could_use_is_one_error_line(data: Path, tmp_path: Path, url: str, fragment: str) -> None:
    argv = ["judge", "--dataset", str(data), "--systems", "bm25", "--judge", f"openai:model=m,base_url={url}"]
    check(run_cli([*argv, "--judgments", str(tmp_path / "cache")]), "error", fragment)


def test_an_echoing_server_leaves_no_trace_of_the_key(data: Path, tmp_path: Path, monkeypatch) -> None:
    def echo(request: Request) -> str:
        header = request.headers["authorization"]
        return f"{header} {base64.b64encode(header.encode()).decode()}\nFinal score: 1"

    monkeypatch.setenv("RS_FUZZ_KEY", KEY)
    with StubServer(reply=echo) as server:
        spec = f"openai:model=m,base_url={server.url},key_env=RS_FUZZ_KEY,retries=0"
        argv = ["judge", "--dataset", str(data), "--systems", "bm25", "--judge", spec, "--out", str(tmp_path / "out")]
        outcome = run_cli([*argv, "--judgments", str(tmp_path / "cache"), "--quiet"])
    check(outcome, "accepted")
    spelled = [KEY.encode(), base64.b64encode(f"Bearer {KEY}".encode()).rstrip(b"=")]
    written = [path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) > 5 and not [s for s in spelled for content in written if s in content]
    assert KEY not in outcome.out


@pytest.mark.parametrize("seed", range(24))
def test_random_bodies_are_failed_or_invalid_with_a_reason(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.choice([0, 1, 7, 300, 70_000])
    body = bytes(rng.getrandbits(8) for _ in range(size))
    if rng.random() < 0.5:  # sometimes JSON-looking, cut short
        body = json.dumps({"choices": [{"message": {"content": body.hex()}}]}).encode()[: rng.randrange(1, 60)]
    encoding = rng.choice(["", "gzip", "deflate", "br", "identity", "gzip, gzip"])
    headers = (("Content-Encoding", encoding),) if encoding else ()
    status = rng.choice([200, 200, 201, 204, 301, 400, 418, 500])

    def ask() -> None:
        with StubServer(reply=lambda request: Response(status, body, headers)) as server:
            judge = make_judge(f"openai:model=m,base_url={server.url},retries=0,timeout=5")
            (got,) = judge.judge([Pair("q", "d", "query", "passage")])
            judge.close()
        assert got.status in (FAILED, INVALID, OK) and got.raw
        assert got.status != OK or got.label is not None

    check(run_call(ask), "accepted")
