"""A judge that fails says so, and why (issue 50 item 2): each failed call keeps its reason (the status
line, a timeout, a refused connection with host:port), a run where some failed warns with their count
and first reasons, and one where every call failed ends with exit code 3, for ``rankscope judge`` and
for ``compare --judge`` (which before exited 0, scoring on the human labels alone without a word);
``compare --judge`` shows each system's failed@10 beside judge_share@10.

Before: ``rankscope judge`` printed only ``failed N`` and exited 0; the reasons were urllib3's
exception texts, kept in the cache's calls table as a status only.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.judging import FAILED, OK, Judgment
from rankscope.judging.pairs import Outcome
from rankscope.judging.stub_server import Request, Response, StubServer, hashed_grade


def closed_port_url() -> str:
    with StubServer() as server:
        return server.url  # nothing listens there once the server is shut


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch) -> None:
    """compare --judge keeps its labels in the user cache: this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def judge_argv(data: Path, spec: str, command: str = "judge") -> list[str]:
    if command == "judge":
        return ["judge", "--dataset", str(data), "--systems", "bm25", "tfidf", "--judge", spec, "--quiet"]
    argv = ["compare", "--dataset", str(data), "--retrievers", "bm25", "tfidf", "--judge", spec]
    return [*argv, "--metrics", "ndcg@10", "--quiet"]


def half_broken(request: Request) -> str | Response:
    """HTTP 500 for about a quarter of the prompts (by their hash), a grade for the rest."""
    if hashlib.sha256(request.prompt.encode()).digest()[1] % 4 == 0:
        return Response(500, b'{"error": "model overloaded"}')
    return hashed_grade(request)


@pytest.mark.parametrize(
    ("server", "options", "reason"),
    [
        ("closed", "", "connection refused by {where}"),
        ("500", "", 'HTTP 500 Internal Server Error from {where}: {{"error": "down"}}'),
        ("slow", ",timeout=0.3", "no complete answer from {where} within 0.3 s"),
    ],
)
@pytest.mark.parametrize("command", ["judge", "compare"])
def test_every_call_failing_is_exit_3_with_the_reason(
    beir, tmp_path: Path, capsys, command: str, server: str, options: str, reason: str
) -> None:
    data = beir()

    def answer(request: Request) -> str | Response:
        if server == "slow":
            time.sleep(0.6)
        return Response(500, b'{"error": "down"}')

    with StubServer(reply=answer) as stub:
        url = closed_port_url() if server == "closed" else stub.url
        spec = f"openai:model=m,base_url={url},retries=0{options}"
        code = main(judge_argv(data, spec, command))
    err = capsys.readouterr().err
    said = reason.format(where=url.split("/")[2])
    assert code == 3, err
    assert err.startswith(f"rankscope {command}: error: the judge failed all ") and err.count("\n") == 1
    assert f"calls, so no label came from it: {said} (" in err


@pytest.mark.parametrize("command", ["judge", "compare"])
def test_some_calls_failing_warns_with_count_and_reason(beir, tmp_path: Path, capsys, command: str) -> None:
    data = beir(documents=40, queries=8)
    out = tmp_path / "out"
    with StubServer(reply=half_broken) as stub:
        spec = f"openai:model=m,base_url={stub.url},retries=0"
        code = main([*judge_argv(data, spec, command), "--out", str(out)])
        failed = sum(isinstance(half_broken(r), Response) for r in stub.requests)
        asked = len(stub.requests)
        where = stub.url.split("/")[2]
    printed = capsys.readouterr()
    assert code == 0 and 0 < failed < asked
    warning = (
        f"the judge failed {failed} of {asked} calls (their pairs stay unjudged and are asked again next run): "
        f'HTTP 500 Internal Server Error from {where}: {{"error": "model overloaded"}} ({failed} calls)'
    )
    if command == "judge":  # a warning line on stderr
        assert f"rankscope judge: warning: {warning}" in printed.err.splitlines()
    else:  # beside compare's tables, wrapped as they are
        assert f"warning: {warning}" in " ".join(printed.out.split())
    summary = json.loads((out / "summary.json").read_text())
    assert warning in summary["warnings"]
    assert "model overloaded" in (out / "report.html").read_text()
    systems = summary["systems"]
    assert sum(row["failed@10"] for row in systems.values()) > 0  # compare shows it beside judge_share@10
    if command == "compare":
        assert {"judge_share@10", "invalid@10", "failed@10"} <= set(next(iter(systems.values())))


def test_reasons_are_counted_most_frequent_first_in_one_printable_line() -> None:
    failures = ("HTTP 500 from h:1: busy", "connection refused by h:1", "HTTP 500 from h:1: busy", "x\x1b[2J\ny")
    judgments = tuple(Judgment(None, FAILED, reason) for reason in failures) + (Judgment(1, OK, "1"),)
    outcome = Outcome(judgments, calls=5, cache_hits=0, distinct=5, estimated_tokens=0, failures=failures)
    assert outcome.reasons() == "HTTP 500 from h:1: busy (2 calls); connection refused by h:1 (1 call); x y (1 call)"
    assert outcome.reasons(shown=1) == "HTTP 500 from h:1: busy (2 calls); and 2 other reasons"
    assert outcome.failure_warning() == (
        "the judge failed 4 of 5 calls (their pairs stay unjudged and are asked again next run): " + outcome.reasons()
    )
    assert Outcome((), 0, 3, 3, 0).failure_warning() is None  # all from the cache: nothing failed
