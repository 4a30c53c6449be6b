"""The judges: the OpenAI-compatible one against a real stub server on 127.0.0.1, the callable and qrels
judges, the strict reply parser and the spec strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.judging import FAILED, INVALID, OK, JudgeError, Judgment, Pair, make_judge, parse_judge_spec
from rankscope.judging.callable_judge import CallableJudge
from rankscope.judging.prompt import PROMPT_HASH, TEMPLATE, messages, parse_label


def pair(query: str, document: str = "some passage", qid: str = "q", did: str = "d") -> Pair:
    return Pair(qid, did, query, document)


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("Final score: 2", 2),
        ("final score: 0", 0),
        ("##final score: 3", 3),
        ("**Final Score:** 1", 1),
        ("The intent is X.\nMatch is good.\nFinal score = 3", 3),
        ("2", 2),
        (" 1.\n", 1),
        ("Final score: 3\nFinal score: 3", 3),
        ("", None),
        ("relevant", None),
        ("Final score: 4", None),  # outside the scale
        ("Final score: 7", None),
        ("Final score: 2\nFinal score: 3", None),  # two answers are none
        ("I would give it a 2 or a 3", None),  # a digit in prose is no answer
        ("score: two", None),
        ("Final score:", None),
        ("12", None),
        # not one whole grade: read as 2, 0, 1, 2 before (issue 50 item 3)
        ("Final score: 2.5", None),
        ("Final score: 0.9", None),
        ("Final score: 1-2", None),
        ("Final score: 2,5", None),
        ("Final score: 1 - 2", None),
        ("Final score: 1 or 2", None),
        ("Final score: 2/3", None),
        ("Final score: \u0663", None),  # an Arabic-Indic three: a digit to re's \d, not to the scale
        ("0.9", None),
        ("Final score: 2.", 2),
        ("Final score: 2, the passage answers it", 2),
        ("Final score: 3 (highly relevant)", 3),
    ],
)
def test_the_parser_reads_a_grade_or_nothing(reply: str, label: int | None) -> None:
    assert parse_label(reply) == label


def test_prompt_follows_the_published_structure_and_is_hashed() -> None:
    user = messages("what is X", "X is Y")[1]["content"]
    for part in ("3 =", "2 =", "1 =", "0 =", "intent", "match", "trustworthy", "Final score:"):
        assert part in user
    assert "Query: what is X" in user and "Passage: X is Y" in user
    assert len(PROMPT_HASH) == 16 and TEMPLATE.count("{query}") == 1


def test_openai_judge_labels_sends_temperature_0_and_a_seed(stub_server, monkeypatch) -> None:
    url, log = stub_server.url, stub_server
    monkeypatch.setenv("STUB_KEY", "sk-secret-123")
    judge = make_judge(f"openai:model=stub-model,base_url={url},key_env=STUB_KEY,seed=7,concurrency=2")
    pairs = [pair("a" * n, qid=f"q{n}") for n in range(1, 9)]
    got = judge.judge(pairs)
    assert got == [Judgment(n % 4, OK, f"Final score: {n % 4}") for n in range(1, 9)]
    assert len(log.requests) == 8
    body = log.requests[0].body
    assert (body["model"], body["temperature"], body["seed"], body["max_tokens"]) == ("stub-model", 0.0, 7, 64)
    asked = {r.body["messages"][1]["content"] for r in log.requests}
    assert asked == {messages(p.query, p.document)[1]["content"] for p in pairs}
    assert body["messages"][0] == messages("", "")[0]
    assert {r.headers["authorization"] for r in log.requests} == {"Bearer sk-secret-123"}
    assert 1 <= log.most_in_flight <= 2
    for shown in (repr(judge), str(judge.identity), str(judge.identity.to_dict()), judge.identity.key):
        assert "sk-secret" not in shown
    assert "STUB_KEY" not in judge.identity.key  # the key's variable is no part of the identity either
    judge.close()


def test_concurrency_is_bounded(stub_server) -> None:
    url, log = stub_server.url, stub_server
    log.delay = 0.2
    judge = make_judge(f"openai:model=m,base_url={url},concurrency=3")
    assert [j.status for j in judge.judge([pair(f"q{i}") for i in range(9)])] == [OK] * 9
    assert log.most_in_flight <= 3


def test_429_with_retry_after_is_waited_out_then_answered(stub_server) -> None:
    url, log = stub_server.url, stub_server
    judge = make_judge(f"openai:model=m,base_url={url}")
    (got,) = judge.judge([pair("RATE me")])
    assert got == Judgment(len("RATE me") % 4, OK, "Final score: 3")
    first, second = log.requests
    # the client's own backoff is under 0.5 s before the first retry: a 2 s gap is the server's Retry-After
    assert second.time - first.time >= 1.9


def test_a_timeout_is_retried_then_failed(stub_server) -> None:
    url, log = stub_server.url, stub_server
    judge = make_judge(f"openai:model=m,base_url={url},timeout=0.3,retries=1")
    (got,) = judge.judge([pair("SLOW one")])
    assert got.status == FAILED and got.label is None
    assert got.raw == f"no complete answer from {url.split('/')[2]} within 0.3 s"
    assert sum("SLOW" in prompt for prompt in log.prompts()) == 2  # the first try and one retry


def test_garbage_replies_are_invalid_never_zero(stub_server) -> None:
    url = stub_server.url
    judge = make_judge(f"openai:model=m,base_url={url},retries=0")
    ramble, seven, junk, fine = judge.judge([pair("RAMBLE"), pair("SEVEN"), pair("JUNK"), pair("abcd")])
    assert ramble == Judgment(None, INVALID, "The passage seems somewhat related, I would say it is relevant.")
    assert seven == Judgment(None, INVALID, "Final score: 7")
    assert junk.status == FAILED  # no reply at all: asked again next run
    assert junk.raw == f"the answer from {url.split('/')[2]} is not JSON: Expecting value: line 1 column 1 (char 0)"
    assert fine == Judgment(0, OK, "Final score: 0")


def test_a_server_quoting_the_key_has_it_scrubbed(stub_server, monkeypatch) -> None:
    url = stub_server.url
    monkeypatch.setenv("STUB_KEY", "sk-secret-456")
    judge = make_judge(f"openai:model=m,base_url={url},key_env=STUB_KEY,retries=0")
    (got,) = judge.judge([pair("ECHOKEY")])
    assert got.status == FAILED and "sk-secret-456" not in got.raw and "***" in got.raw


def test_a_server_that_is_not_there_fails_each_pair() -> None:
    judge = make_judge("openai:model=m,base_url=http://127.0.0.1:9/v1,retries=0,timeout=2")
    assert judge.judge([pair("x"), pair("y")]) == [Judgment(None, FAILED, "connection refused by 127.0.0.1:9")] * 2


def test_the_identity_changes_with_what_changes_labels(stub_server) -> None:
    url = stub_server.url
    base = make_judge(f"openai:model=m,base_url={url}").identity
    same = make_judge(f"openai:model=m,base_url={url},concurrency=9,timeout=5,retries=1").identity
    assert base.key == same.key  # how the calls are made is not what they answer
    for change in ("model=n", "seed=1", "temperature=0.5", "max_tokens=10", "grammar=1"):
        options = f"base_url={url}," + (change if change.startswith("model") else f"model=m,{change}")
        assert make_judge(f"openai:{options}").identity.key != base.key
    assert base.prompt_hash == PROMPT_HASH


def test_grammar_constrains_the_reply_only_when_asked(stub_server) -> None:
    """grammar=1 sends llama.cpp's GBNF of the template's last line (the stub ignores it, so the reply is
    read by the same parser); without it nothing extra is sent, and the identity of grammar=0 is the
    identity judges had before the option existed (their cached labels stay)."""
    url, log = stub_server.url, stub_server
    pairs = [pair("a" * n, qid=f"q{n}") for n in range(1, 5)]
    constrained = make_judge(f"openai:model=m,base_url={url},grammar=1")
    assert constrained.judge(pairs) == [Judgment(n % 4, OK, f"Final score: {n % 4}") for n in range(1, 5)]
    assert {r.body["grammar"] for r in log.requests} == {'root ::= "Final score: " [0-3]'}
    assert dict(constrained.identity.parameters)["grammar"] == 'root ::= "Final score: " [0-3]'
    free = make_judge(f"openai:model=m,base_url={url}")
    free.judge(pairs[:1])
    assert "grammar" not in log.requests[-1].body and "grammar" not in dict(free.identity.parameters)
    assert make_judge(f"openai:model=m,base_url={url},grammar=0").identity == free.identity
    for reply, grade in grammar_language():  # every reply the grammar allows is read as its grade
        assert parse_label(reply) == grade


def grammar_language() -> list[tuple[str, int]]:
    """The replies FINAL_SCORE_GRAMMAR allows, read off its text (a quoted literal, then a digit range)."""
    import re

    from rankscope.judging.prompt import FINAL_SCORE_GRAMMAR

    literal, low, high = re.fullmatch(r'root ::= "([^"]*)" \[(\d)-(\d)\]', FINAL_SCORE_GRAMMAR).groups()
    return [(f"{literal}{grade}", grade) for grade in range(int(low), int(high) + 1)]


def test_callable_judge_takes_labels_or_replies_and_records_failures() -> None:
    def grade(query: str, document: str) -> int | str:
        if query == "boom":
            raise RuntimeError("model fell over")
        return {"int": 2, "text": "Final score: 1", "bad": "dunno", "big": 9}[query]

    judge = CallableJudge(grade, name="rule", version="3")
    got = judge.judge([pair(q) for q in ("int", "text", "bad", "big", "boom")])
    assert got == [
        Judgment(2, OK, "2"),
        Judgment(1, OK, "Final score: 1"),
        Judgment(None, INVALID, "dunno"),
        Judgment(None, INVALID, "9"),
        Judgment(None, FAILED, "RuntimeError: model fell over"),
    ]
    assert (judge.identity.kind, judge.identity.model, judge.identity.prompt_version) == ("callable", "rule", "3")


def write_qrels(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in rows))
    return path


def test_qrels_judge_answers_from_the_file_and_flips_a_seeded_share(tmp_path: Path) -> None:
    rows = [(f"q{i % 50}", f"d{i}", [0, 1, 2, 5][i % 4]) for i in range(4000)]
    path = write_qrels(tmp_path / "q.txt", rows)
    truth = make_judge(f"qrels:{path}")
    pairs = [Pair(q, d, "", "") for q, d, _ in rows] + [Pair("q1", "unknown", "", "")]
    labels = [j.label for j in truth.judge(pairs)]
    assert labels == [min(r, 3) for _, _, r in rows] + [0]  # clamped to the scale; a missing pair is 0
    noisy = make_judge(f"qrels:{path},flip=0.2,seed=5")
    flipped = [j.label for j in noisy.judge(pairs)]
    changed = [(a, b) for a, b in zip(labels, flipped) if a != b]
    assert 0.17 < len(changed) / len(pairs) < 0.23  # 4001 draws of p=0.2: 0.2 +- 4.7 standard errors
    assert all(b == (0 if a > 0 else 1) for a, b in changed)
    assert [j.label for j in noisy.judge(pairs[::-1])] == flipped[::-1]  # not the order of the calls
    other_seed = make_judge(f"qrels:{path},flip=0.2,seed=6")
    assert [j.label for j in other_seed.judge(pairs)] != flipped
    assert len({truth.identity.key, noisy.identity.key, other_seed.identity.key}) == 3
    assert truth.reads_ids and not CallableJudge(len).reads_ids


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "judge spec must be a non-empty string like 'openai:model=M,base_url=U', got ''"),
        ("gpt4", "judge spec 'gpt4': unknown judge 'gpt4'; known: openai, qrels"),
        ("openai:base_url=http://x", "judge spec 'openai:base_url=http://x': openai needs model=..."),
        (
            "openai:model=m,temp=0",
            "judge spec 'openai:model=m,temp=0': openai has no option 'temp'; known: model, base_url, key_env, temperature, seed, max_tokens, concurrency, timeout, retries, grammar",
        ),
        ("openai:model=m,seed=x", "judge spec 'openai:model=m,seed=x': seed=x is not allowed; seed must be an integer"),
        (
            "openai:model=m,temperature=nan",
            "judge spec 'openai:model=m,temperature=nan': temperature=nan is not allowed; temperature must be a number in [0.0, 2.0]",
        ),
        (
            "openai:model=m,concurrency=0",
            "judge spec 'openai:model=m,concurrency=0': concurrency=0 is not allowed; concurrency must be an integer in [1, 256]",
        ),
        ("openai:model=m,model=n", "judge spec 'openai:model=m,model=n': option 'model' given twice"),
        ("openai:model=m,oops", "judge spec 'openai:model=m,oops': expected key=value, got 'oops'"),
        ("openai:model=", "judge spec 'openai:model=': model= is not allowed; model must be a non-empty string"),
        ("qrels:", "judge spec 'qrels:': give the qrels file (qrels:PATH); only rankscope judge has a dataset's own"),
        (
            "qrels:x.txt,flip=1.5",
            "judge spec 'qrels:x.txt,flip=1.5': flip=1.5 is not allowed; flip must be a number in [0.0, 1.0]",
        ),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(JudgeError) as caught:
        make_judge(spec)
    assert str(caught.value) == message


def test_spec_values_are_typed_and_a_model_may_hold_a_colon() -> None:
    kind, options = parse_judge_spec("openai:model=llama3:8b,base_url=http://h/v1,seed=3,temperature=0")
    assert kind == "openai" and options["model"] == "llama3:8b" and options["seed"] == 3
    assert options["temperature"] == 0.0 and options["key_env"] == ""
    assert parse_judge_spec("qrels:a/b.txt,seed=2") == ("qrels", {"path": "a/b.txt", "flip": 0.0, "seed": 2})


def test_an_unset_key_variable_is_refused(monkeypatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(JudgeError, match="NO_SUCH_KEY_VAR"):
        make_judge("openai:model=m,base_url=http://127.0.0.1:9/v1,key_env=NO_SUCH_KEY_VAR")


def test_a_long_reply_is_read_whole_and_kept_cut_saying_so() -> None:
    """A 1 MB reply whose grade is on its last line: the grade is read, 4,000 characters are kept (the
    whole reply was kept before: 8 such replies made an 8 MB cache)."""
    from rankscope.judging.kept_text import MAX_KEPT_CHARS
    from rankscope.judging.stub_server import StubServer

    reply = "x" * 1_000_000 + "\nFinal score: 2"
    with StubServer(reply=lambda request: reply) as server:
        (got,) = make_judge(f"openai:model=m,base_url={server.url},retries=0").judge([pair("q")])
    assert got.label == 2 and got.status == OK
    assert got.raw == "x" * MAX_KEPT_CHARS + f" [... {len(reply) - MAX_KEPT_CHARS:,} more characters not kept]"
