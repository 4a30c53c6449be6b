"""The stub chat-completions server (:class:`rankscope.judging.stub_server.StubServer`) with replies that
test a client's handling of what servers do, chosen by a word in the query (the prompt carries it):
``RATE`` is refused once with 429 and ``Retry-After: 2``, then answered; ``SLOW`` sleeps past the
client's timeout; ``RAMBLE`` gets a reply with no grade; ``SEVEN`` a grade outside 0-3; ``JUNK`` a body
that is not JSON; ``ECHOKEY`` a 401 quoting the Authorization header; anything else ``Final score: N``
with N the query's length mod 4.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rankscope.judging.stub_server import Request, Response, StubServer


def query_of(prompt: str) -> str:
    match = re.search(r"^Query: (.*)$", prompt, re.MULTILINE)
    assert match is not None
    return match.group(1)


def tricky_reply() -> object:
    refused: set[str] = set()

    def reply(request: Request) -> str | Response:
        query = query_of(request.prompt)
        if "RATE" in query and query not in refused:
            refused.add(query)
            return Response(429, b'{"error": {"message": "slow down"}}', (("Retry-After", "2"),))
        if "SLOW" in query:
            time.sleep(2.0)
        if "JUNK" in query:
            return Response(200, b"<html>not json</html>")
        if "ECHOKEY" in query:
            said = json.dumps({"error": {"message": f"bad key {request.headers.get('authorization')}"}})
            return Response(401, said.encode())
        if "RAMBLE" in query:
            return "The passage seems somewhat related, I would say it is relevant."
        if "SEVEN" in query:
            return "Final score: 7"
        return f"Final score: {len(query) % 4}"

    return reply


@pytest.fixture()
def stub_server() -> Iterator[StubServer]:
    """A running stub server with the replies above; shut down after the test."""
    with StubServer(reply=tricky_reply()) as server:  # type: ignore[arg-type]
        yield server


WORDS = "wing flow shock boundary layer heat transfer pressure drag lift vortex jet nozzle plate cone".split()


def write_beir(root: Path, documents: int = 30, queries: int = 6) -> Path:
    """A BEIR folder of seeded documents over :data:`WORDS`, with two judged documents per query."""
    (root / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"d{i}", "title": "", "text": " ".join(WORDS[(i * j + i) % 15] for j in range(9))}
        for i in range(documents)
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    asked = [{"_id": f"q{i}", "text": f"{WORDS[i]} {WORDS[i + 3]}"} for i in range(queries)]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in asked))
    judged = "".join(f"q{i}\td{i}\t1\nq{i}\td{i + 1}\t2\n" for i in range(queries))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judged)
    return root


@pytest.fixture()
def beir(tmp_path: Path) -> Callable[..., Path]:
    """``beir(documents=30, queries=6)``: a BEIR folder under the test's temporary folder (:func:`write_beir`)."""
    return lambda documents=30, queries=6: write_beir(tmp_path / "data", documents, queries)
