"""The judge's HTTP client (rankscope.judging.chat_http) against the stub server: requests really in
flight at once, retries of 5xx and of dropped answers, Retry-After in its three spellings, the
tokens servers report, proxies from the environment, and a base URL it cannot use."""

from __future__ import annotations

import email.utils
import re
import threading
import time

import pytest

from rankscope.judging import OK, JudgeError, Pair, make_judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.chat_http import ChatClient, HTTPStatusError, _retry_after
from rankscope.judging.pairs import judge_pairs
from rankscope.judging.stub_server import Request, Response, StubServer, hashed_grade


def pairs(n: int) -> list[Pair]:
    return [Pair(f"q{i}", f"d{i}", f"query {i}", f"passage {i}") for i in range(n)]


def test_sixteen_requests_are_in_flight_together() -> None:
    """Each answer waits until 16 requests are held at once: a client sending fewer at a time times
    the barrier out and every pair fails."""
    barrier = threading.Barrier(16, timeout=20)

    def reply(request: Request) -> str:
        barrier.wait()
        return hashed_grade(request)

    with StubServer(reply=reply) as server:
        judge = make_judge(f"openai:model=m,base_url={server.url},concurrency=16,retries=0,timeout=30")
        got = judge.judge(pairs(32))
        assert [j.status for j in got] == [OK] * 32
        assert server.most_in_flight == 16
        judge.close()


def test_server_errors_and_dropped_answers_are_retried() -> None:
    seen: list[str] = []

    def reply(request: Request) -> str | Response:
        seen.append(request.prompt)
        if seen.count(request.prompt) == 1 and "query 0" in request.prompt:
            return Response(503, b'{"error": "busy"}', (("Retry-After", "0.1"),))
        if seen.count(request.prompt) == 1 and "query 1" in request.prompt:
            return Response(200, b'{"choices": [')  # cut short: not JSON, not retried (the server answered)
        return hashed_grade(request)

    with StubServer(reply=reply) as server:
        judge = make_judge(f"openai:model=m,base_url={server.url},retries=2")
        first, second, third = judge.judge(pairs(3))
        assert first.status == OK and len(server.requests) == 4  # 503 then answered
        where = server.url.split("/")[2]
        assert second.raw == f"the answer from {where} is not JSON: Expecting value: line 1 column 14 (char 13)"
        assert third.status == OK


def test_an_error_status_after_the_retries_names_status_and_body() -> None:
    with StubServer(reply=lambda request: Response(500, b'{"error": "broken"}')) as server:
        client = ChatClient(server.url, "k", timeout=5, retries=1)
        started = time.monotonic()
        said = f'HTTP 500 Internal Server Error from {server.url.split("/")[2]}: {{"error": "broken"}}'
        with pytest.raises(HTTPStatusError, match=re.escape(said)):
            client.create({"model": "m", "messages": [{"role": "user", "content": "x"}]})
        assert len(server.requests) == 2 and time.monotonic() - started >= 0.37  # one backoff, 0.5 s less 25 %
        client.close()


def test_retry_after_in_seconds_milliseconds_and_as_a_date() -> None:
    def headers(**values: str) -> email.message.Message:
        message = email.message.Message()
        for name, value in values.items():
            message[name.replace("_", "-")] = value
        return message

    assert _retry_after(headers(retry_after="2")) == 2.0
    assert _retry_after(headers(retry_after_ms="1500", retry_after="9")) == 1.5
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 < _retry_after(headers(retry_after=in_ten)) <= 10
    for useless in ("0", "-3", "61", "soon"):  # none, past, beyond the 60 s honoured, not a number or date
        assert _retry_after(headers(retry_after=useless)) is None


def test_tokens_the_server_reports_are_counted(tmp_path) -> None:
    with StubServer() as server:
        judge = make_judge(f"openai:model=m,base_url={server.url},concurrency=4")
        outcome = judge_pairs(judge, pairs(10), JudgmentCache(tmp_path))
        reported = [r.body for r in server.requests]
    # the stub's usage: every message's characters // 4, plus the reply's // 4 ("Final score: N" is 14)
    expected = sum(sum(len(m["content"]) for m in body["messages"]) // 4 + 3 for body in reported)
    assert outcome.tokens == expected == sum(j.tokens for j in outcome.judgments)
    assert outcome.calls == 10 and outcome.seconds > 0 and outcome.calls_per_second > 0
    again = judge_pairs(judge, pairs(10), JudgmentCache(tmp_path))
    assert (again.calls, again.cache_hits, again.tokens) == (0, 10, 0)


def test_a_proxy_from_the_environment_carries_plain_http(monkeypatch) -> None:
    with StubServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.url.split(':')[2].split('/')[0]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        judge = make_judge("openai:model=m,base_url=http://judge.invalid:8000/v1,retries=0")
        (got,) = judge.judge(pairs(1))
        assert got.status == OK
        assert [r.path for r in proxy.requests] == ["http://judge.invalid:8000/v1/chat/completions"]
        monkeypatch.setenv("NO_PROXY", "judge.invalid")
        assert (
            make_judge("openai:model=m,base_url=http://judge.invalid:8000/v1,retries=0").judge(pairs(1))[0].status
            == "failed"
        )
        assert len(proxy.requests) == 1


def test_a_base_url_that_is_not_http_is_refused_in_one_line() -> None:
    with pytest.raises(JudgeError, match="base_url must be an http:// or https:// URL, got 'ftp://x/v1'"):
        make_judge("openai:model=m,base_url=ftp://x/v1")
