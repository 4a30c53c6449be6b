"""Fuzz: ``collection judge`` against a judge that fails every call, a folder without a pool (or not a
collection), a second process judging the same collection at once, and a run killed with SIGKILL mid-way
then run again: every pooled pair is asked once in all, what was committed is never asked again, and
every refusal is one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

from rankscope.judging.cache import JudgmentCache, pair_key
from rankscope.judging.spec import make_judge
from rankscope.judging.stub_server import Request, Response, StubServer, hashed_grade
from rankscope.workflows.collection.ingest import init_collection
from rankscope.workflows.collection.judge_pool import judge_collection
from rankscope.workflows.collection.layout import collection_dataset
from rankscope.workflows.judge.pool import pairs_to_judge
from tests.workflows.collection.labelled import sampled_collection
from tests.workflows.tiny_collection import QUERIES, TEXTS, small_dataset

pytestmark = pytest.mark.slow  # real processes started, killed and run again: seconds each


def _pairs(folder: Path) -> set[tuple[str, str]]:
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype=str)
    return set(zip(pool["query_id"], pool["doc_id"]))


def _labelled(folder: Path, spec: str) -> int:
    """How many of the pool's pairs the cache in ``folder`` holds an answer of ``spec``'s judge for (by key:
    a killed run committed its answers but had not yet linked them to their ids)."""
    judge = make_judge(spec)
    pairs = pairs_to_judge(
        pd.DataFrame(sorted(_pairs(folder)), columns=["query_id", "doc_id"]), collection_dataset(folder)
    )
    with JudgmentCache(folder) as cache:
        return len(cache.lookup({pair_key(judge.identity, pair, judge.reads_ids) for pair in pairs}))


def _bigger(root: Path) -> Path:
    """The small dataset's 40 documents and 12 questions, pooled by bm25 at depth 10 (about 100 pairs)."""
    data = small_dataset()
    texts = dict(zip(data.corpus["doc_id"], data.corpus["text"]))
    return sampled_collection(root, texts, dict(zip(data.queries["query_id"], data.queries["text"])), 10, 10)


def test_a_judge_failing_calls_is_one_line_and_a_rerun_asks_only_those(tmp_path: Path) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3, budget=4)
    broken = {"q1", "q2", "q3"}  # the questions whose pairs the server fails

    def reply(request: Request) -> str | Response:
        failing = any(QUERIES[q] in request.prompt for q in broken)
        return Response(500, b'{"error": "\x1b[31mbroken"}') if failing else hashed_grade(request)

    with StubServer(reply=reply) as server:
        spec = f"openai:model=stub,base_url={server.url},retries=0"
        outcome = run_cli(["--quiet", "collection", "judge", str(folder), "--judge", spec])
        # every call failed: the judge's own exit status (3), one line with the reason, no traceback
        assert outcome.code == 3 and not outcome.crashed and len(outcome.err.splitlines()) == 1
        assert "error: the judge failed all 8 calls, so no label came from it: HTTP 500" in outcome.err
        assert "\x1b" not in outcome.err  # the server's text is shown, its escape sequences are not
        assert _labelled(folder, spec) == 0 and len(server.requests) == 8
        broken.discard("q1")  # q1's 3 pairs answered now, q2's 2 and q3's 3 still failing
        outcome = run_cli(["--quiet", "collection", "judge", str(folder), "--judge", spec])
        check(outcome, "warning", "the judge failed 5 of 8 calls")
        assert "question q2: no label from the judge (of its 2 pooled pairs, 2 calls failed" in outcome.out
        assert _labelled(folder, spec) == 3 and len(server.requests) == 16
        broken.clear()
        again = judge_collection(folder, spec)
        assert (again.outcome.calls, again.outcome.cache_hits, again.unlabelled, _labelled(folder, spec)) == (
            5,
            3,
            {},
            8,
        )


def test_a_folder_without_a_pool_or_not_a_collection_is_one_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("wing flow over a flat plate\n")
    questions = tmp_path / "q.txt"
    questions.write_text("wing flow\n")
    folder = tmp_path / "collection"
    init_collection(folder, [docs], queries=questions)
    spec = "openai:model=stub,base_url=http://127.0.0.1:9"  # never reached: refused before any call
    check(
        run_cli(["collection", "judge", str(folder), "--judge", spec]),
        "error",
        "no pool yet; run: rankscope collection pool",
    )
    check(run_cli(["collection", "judge", str(docs), "--judge", spec]), "error", "not a collection (no ingest.json)")
    check(run_cli(["collection", "judge", str(folder), "--judge", "openai:model=m,tempo=1"]), "error", "tempo")
    (folder / "pool.json").write_text("{not json")
    check(run_cli(["collection", "judge", str(folder), "--judge", spec]), "error", "pool.json: not valid JSON")


def _judge_process(folder: Path, spec: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "rankscope.cli", "--quiet", "collection", "judge", str(folder), "--judge", spec]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_judging_at_once_ask_each_pair_once(tmp_path: Path) -> None:
    folder = _bigger(tmp_path)
    pairs = _pairs(folder)
    with StubServer(delay=0.02) as server:
        spec = f"openai:model=stub,base_url={server.url},concurrency=2"
        first, second = _judge_process(folder, spec), _judge_process(folder, spec)
        results = [process.communicate(timeout=300) for process in (first, second)]
        assert (first.returncode, second.returncode) == (0, 0), results
        asked = [(r.prompt) for r in server.requests]
    assert len(asked) == len(pairs) == len(set(asked))  # every pair asked once, by one of the two
    assert _labelled(folder, spec) == len(pairs)


def test_a_run_killed_mid_way_is_continued_by_the_next(tmp_path: Path) -> None:
    folder = _bigger(tmp_path)
    pairs = _pairs(folder)
    with StubServer(delay=0.05) as server:
        spec = f"openai:model=stub,base_url={server.url},concurrency=1"
        process = _judge_process(folder, spec)
        deadline = time.monotonic() + 120
        while len(server.requests) < len(pairs) // 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        committed = _labelled(folder, spec)
        assert 0 < committed < len(pairs), committed
        assert run_cli(["--quiet", "collection", "export", str(folder)]).code == 0  # what was committed, by its ids
        assert json.loads((folder / "collection.json").read_text())["labels"] == {"openai:stub": committed}
        again = judge_collection(folder, spec)
    assert (again.outcome.cache_hits, again.outcome.calls) == (committed, len(pairs) - committed)
    assert _labelled(folder, spec) == len(pairs) and again.unlabelled == {}


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{not json", "collection.json, line 1: not valid JSON"), ("[1, 2]", "not a collection's provenance")],
)
def test_a_damaged_collection_json_is_one_line_in_every_report(tmp_path: Path, text: str, problem: str) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3, budget=4)
    with StubServer() as server:
        judge_collection(folder, f"openai:model=stub,base_url={server.url}")
    assert run_cli(["--quiet", "collection", "export", str(folder)]).code == 0
    (folder / "collection.json").write_text(text)
    argv = ["--quiet", "compare", "--dataset", str(folder), "--retrievers", "bm25", "tfidf", "--metrics", "ndcg@10"]
    check(run_cli(argv), "error", problem)
