"""The judgments cache: never pays twice, survives kill -9, exports and imports."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from rankscope.core.errors import FormatError
from rankscope.corpora.trec import read_trec_qrels
from rankscope.judging import FAILED, INVALID, OK, Judgment, Pair, make_judge
from rankscope.judging.cache import FILE_NAME, JudgmentCache, pair_key
from rankscope.judging.callable_judge import CallableJudge
from rankscope.judging.pairs import Outcome, judge_pairs


class Counting:
    """A stub judge function that counts its calls: the label is the document's length mod 4."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, query: str, document: str) -> int | str:
        self.calls.append((query, document))
        if document.startswith("ramble"):
            return "no idea"
        return len(document) % 4


def make_pairs(n: int) -> list[Pair]:
    return [Pair(f"q{i % 5}", f"d{i}", f"query {i % 5}", f"document number {i}") for i in range(n)]


def test_a_second_identical_run_makes_no_call(tmp_path: Path) -> None:
    function = Counting()
    judge = CallableJudge(function, name="stub")
    pairs = make_pairs(40) + [Pair("q9", "r", "query 9", "ramble on")]
    with JudgmentCache(tmp_path) as cache:
        first = judge_pairs(judge, pairs, cache)
        assert (first.calls, first.cache_hits, first.invalid) == (41, 0, 1)
        assert [j.label for j in first.judgments[:40]] == [len(p.document) % 4 for p in pairs[:40]]
        second = judge_pairs(judge, pairs, cache)
    assert (second.calls, second.cache_hits) == (0, 41)
    assert second.judgments == first.judgments and len(function.calls) == 41
    with JudgmentCache(tmp_path) as reopened:  # another process, later: the same
        assert judge_pairs(judge, pairs, reopened).calls == 0
        assert reopened._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_identical_texts_are_judged_once(tmp_path: Path) -> None:
    function = Counting()
    same = [Pair("q1", "d1", "what", "the text"), Pair("q2", "d7", "what", "the text"), Pair("q1", "d2", "what", "x")]
    with JudgmentCache(tmp_path) as cache:
        outcome = judge_pairs(CallableJudge(function, name="stub"), same, cache)
        assert (outcome.calls, outcome.distinct) == (2, 2) and len(function.calls) == 2
        assert outcome.judgments[0] == outcome.judgments[1] == Judgment(0, OK, "0")


def test_a_judge_reading_ids_is_keyed_by_ids(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d7 0\n")
    same = [Pair("q1", "d1", "what", "the text"), Pair("q2", "d7", "what", "the text")]
    with JudgmentCache(tmp_path) as cache:
        outcome = judge_pairs(make_judge(f"qrels:{qrels}"), same, cache)
    assert outcome.calls == 2 and [j.label for j in outcome.judgments] == [1, 0]


def test_another_identity_is_another_key(tmp_path: Path) -> None:
    function = Counting()
    pairs = make_pairs(6)
    with JudgmentCache(tmp_path) as cache:
        judge_pairs(CallableJudge(function, name="stub", version="1"), pairs, cache)
        again = judge_pairs(CallableJudge(function, name="stub", version="2"), pairs, cache)
    assert again.calls == 6 and len(function.calls) == 12
    one, two = (CallableJudge(function, name="stub", version=v).identity for v in "12")
    assert pair_key(one, pairs[0], False) != pair_key(two, pairs[0], False)


def test_failed_calls_are_asked_again_invalid_ones_are_kept(tmp_path: Path) -> None:
    state = {"down": True}

    def flaky(query: str, document: str) -> int | str:
        if document == "boom" and state["down"]:
            raise TimeoutError("server away")
        return "rambling" if document == "ramble" else 2

    judge = CallableJudge(flaky, name="flaky")
    pairs = [Pair("q", d, "q", d) for d in ("boom", "ramble", "fine")]
    with JudgmentCache(tmp_path) as cache:
        first = judge_pairs(judge, pairs, cache)
        assert [j.status for j in first.judgments] == [FAILED, INVALID, OK] and first.failed == 1
        state["down"] = False
        second = judge_pairs(judge, pairs, cache)
        assert (second.calls, second.cache_hits) == (1, 2)
        assert [j.status for j in second.judgments] == [OK, INVALID, OK]
        key = pair_key(judge.identity, pairs[0], False)
        assert cache.call_counts(judge.identity.key)[key] == 2  # both calls counted, one label kept


def test_export_then_import_gives_the_same_labels_and_no_new_call(tmp_path: Path) -> None:
    function = Counting()
    judge = CallableJudge(function, name="stub")
    pairs = make_pairs(12) + [Pair("q7", "r1", "query 7", "ramble")]
    with JudgmentCache(tmp_path / "a") as cache:
        outcome = judge_pairs(judge, pairs, cache)
        assert cache.export(judge.identity, tmp_path / "labels.qrels", tmp_path / "labels.jsonl") == 13
    qrels = read_trec_qrels(tmp_path / "labels.qrels")
    assert len(qrels) == 12  # the invalid reply has no label to give trec_eval
    expected = {(p.query_id, p.doc_id): j.label for p, j in zip(pairs, outcome.judgments) if j.status == OK}
    assert dict(zip(zip(qrels["query_id"], qrels["doc_id"]), qrels["relevance"])) == expected
    first_line = (tmp_path / "labels.jsonl").read_text().splitlines()[0]
    assert '"judge": {"kind": "callable", "model": "stub"' in first_line and '"raw": ' in first_line
    with JudgmentCache(tmp_path / "b") as other:
        assert other.import_jsonl(tmp_path / "labels.jsonl") == 13
        again = judge_pairs(judge, pairs, other)
        other.export(judge.identity, tmp_path / "b.qrels", tmp_path / "b.jsonl")
    assert (again.calls, again.judgments) == (0, outcome.judgments) and len(function.calls) == 13
    assert (tmp_path / "b.jsonl").read_text() == (tmp_path / "labels.jsonl").read_text()
    assert (tmp_path / "b.qrels").read_text() == (tmp_path / "labels.qrels").read_text()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "line 2: not a JSON object"),
        ('{"query_id": "q"}', "line 2: expected the fields query_id, doc_id, label"),
        ("STATUS", "line 2: status 'failed' is not a label (ok or invalid)"),
        ("LABEL", "line 2: a judgment with status 'ok' cannot have label 5"),
    ],
)
def test_a_bad_labels_file_is_refused_whole_with_its_line(tmp_path: Path, line: str, problem: str) -> None:
    with JudgmentCache(tmp_path / "a") as cache:
        judge = CallableJudge(Counting(), name="stub")
        judge_pairs(judge, make_pairs(1), cache)
        cache.export(judge.identity, tmp_path / "x.qrels", tmp_path / "x.jsonl")
    good = (tmp_path / "x.jsonl").read_text().strip()
    bad = {
        "STATUS": good.replace('"status": "ok"', '"status": "failed"').replace('"label": 1', '"label": null'),
        "LABEL": good.replace('"label": 1', '"label": 5'),
    }.get(line, line)
    (tmp_path / "bad.jsonl").write_text(f"{good}\n{bad}\n")
    with JudgmentCache(tmp_path / "b") as other, pytest.raises(FormatError) as caught:
        other.import_jsonl(tmp_path / "bad.jsonl")
    assert problem in str(caught.value) and str(tmp_path / "bad.jsonl") in str(caught.value)
    with JudgmentCache(tmp_path / "b") as other:
        assert other.lookup([pair_key(judge.identity, make_pairs(1)[0], False)]) == {}  # nothing was kept


SCRIPT = """
import sys, time
from pathlib import Path
from rankscope.judging import Pair
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.callable_judge import CallableJudge
from rankscope.judging.pairs import judge_pairs

log = Path(sys.argv[2])

def slow(query, document):
    with log.open("a") as out:
        out.write(document + "\\n")
    time.sleep(0.02)
    return len(document) % 4

pairs = [Pair(f"q{i % 7}", f"d{i}", f"query {i % 7}", f"document {i}") for i in range(150)]
with JudgmentCache(sys.argv[1]) as cache:
    outcome = judge_pairs(CallableJudge(slow, name="slow"), pairs, cache)
print(outcome.calls, outcome.cache_hits)
"""


def test_kill_9_mid_run_loses_no_label_and_judges_no_pair_twice(tmp_path: Path) -> None:
    script = tmp_path / "judge_run.py"
    script.write_text(textwrap.dedent(SCRIPT))
    log, folder = tmp_path / "calls.log", tmp_path / "cache"
    command = [sys.executable, str(script), str(folder), str(log)]
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while (not log.exists() or len(log.read_text().splitlines()) < 50) and time.monotonic() < deadline:
        assert running.poll() is None, running.stderr.read().decode()
        time.sleep(0.01)
    running.send_signal(signal.SIGKILL)
    running.wait()
    assert running.returncode == -signal.SIGKILL
    with sqlite3.connect(folder / FILE_NAME) as db:  # what the killed run had committed
        kept = db.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    asked_before = len(log.read_text().splitlines())
    assert 49 <= kept <= asked_before < 150  # killed mid-run; at most the call in flight was not committed
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    calls, hits = map(int, done.stdout.split())
    assert hits == kept and calls == 150 - kept  # every committed label was used, the rest judged
    with JudgmentCache(folder) as cache:
        counts = cache.call_counts()
    assert len(counts) == 150 and set(counts.values()) == {1}  # from the cache: no pair judged twice
    asked = log.read_text().splitlines()
    assert len(asked) - 150 == asked_before - kept <= 1  # only a call in flight at the kill was made again


def _judging(cache: JudgmentCache, judge: CallableJudge, pairs: list[Pair]) -> dict[str, object]:
    """judge_pairs in a thread (another process sharing the file, as far as the claims go); its outcome when done."""
    found: dict[str, object] = {}
    thread = threading.Thread(target=lambda: found.update(outcome=judge_pairs(judge, pairs, cache)))
    thread.start()
    found["thread"] = thread
    return found


def test_a_key_another_run_claimed_is_waited_for_not_asked(tmp_path: Path) -> None:
    function = Counting()
    judge = CallableJudge(function, name="stub")
    pairs = make_pairs(3)
    keys = [pair_key(judge.identity, pair, False) for pair in pairs]
    with JudgmentCache(tmp_path) as first, JudgmentCache(tmp_path) as second:
        first.add_judge(judge.identity)
        assert first.claim(keys[:2]) == keys[:2] and second.claim(keys[:2]) == []  # taken: not for another
        running = _judging(second, judge, pairs)
        time.sleep(0.3)
        assert function.calls == [(pairs[2].query, pairs[2].document)]  # only the free key was asked
        first.record(judge.identity.key, keys[0], Judgment(2, OK, "2"))
        first.record(judge.identity.key, keys[1], Judgment(None, FAILED, "HTTP 500 from the server"))
        running["thread"].join(10)  # type: ignore[attr-defined]
        outcome = running["outcome"]
        assert isinstance(outcome, Outcome)
        assert (outcome.calls, outcome.cache_hits, len(function.calls)) == (1, 2, 1)
        assert outcome.judgments[:2] == (Judgment(2, OK, "2"), Judgment(None, FAILED, "HTTP 500 from the server"))
        again = judge_pairs(judge, pairs, second)  # a later run asks the failed key again
        assert (again.calls, function.calls[-1]) == (1, (pairs[1].query, pairs[1].document))
        assert first.call_counts() == {keys[0]: 1, keys[1]: 2, keys[2]: 1}


def test_a_claim_no_longer_renewed_is_taken_over_after_its_lease(tmp_path: Path, monkeypatch) -> None:
    from rankscope.judging import cache as cache_module

    monkeypatch.setattr(cache_module, "LEASE_SECONDS", 0.5)
    function = Counting()
    judge = CallableJudge(function, name="stub")
    pairs = make_pairs(2)
    with JudgmentCache(tmp_path) as stalled, JudgmentCache(tmp_path) as other:
        stalled.claim([pair_key(judge.identity, pair, False) for pair in pairs])  # and never answers nor renews
        started = time.monotonic()
        outcome = judge_pairs(judge, pairs, other)
    assert (outcome.calls, len(function.calls)) == (2, 2) and 0.4 < time.monotonic() - started < 10


def test_claims_are_given_up_when_a_run_stops_in_an_error(tmp_path: Path) -> None:
    def broken(query: str, document: str) -> int:
        if document.endswith("3"):
            raise KeyboardInterrupt
        return 1

    with JudgmentCache(tmp_path) as cache:
        with pytest.raises(KeyboardInterrupt):
            judge_pairs(CallableJudge(broken, name="stub"), make_pairs(6), cache)
        assert cache._db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
        assert len(cache.lookup(cache.call_counts())) == 3  # the answers before the stop are kept
