"""Judging fanned out over a scheduler: chunks of calls as Dask tasks sharing the one cache file give the
labels one process gives, each key asked once; an OpenAI judge travels as its arguments, never its key."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rankscope.judging import OK, Pair, make_judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.pairs import judge_pairs
from rankscope.judging.qrels_judge import QrelsJudge
from tests.needs import needs
from tests.workflows.tiny_collection import small_dataset

pytestmark = needs("distributed")


def _pairs() -> list[Pair]:
    data = small_dataset()
    texts = dict(zip(data.corpus["doc_id"], data.corpus["text"]))
    pairs = [
        Pair(q, d, text, texts[d]) for q, text in zip(data.queries["query_id"], data.queries["text"]) for d in texts
    ]
    return pairs


def test_qrels_judge_on_two_workers_gives_one_process_labels(dask_client, tmp_path: Path) -> None:
    data = small_dataset()
    judge = QrelsJudge(data.qrels, flip=0.3, seed=4)
    pairs = _pairs()
    alone = judge_pairs(judge, pairs, JudgmentCache(tmp_path / "one"))
    cache = JudgmentCache(tmp_path / "tasks")
    spread = judge_pairs(judge, pairs, cache, dask_client)
    assert spread.judgments == alone.judgments and spread.calls == alone.calls == len(pairs) == 480
    assert sum(j.label for j in spread.judgments) > 0 and {j.status for j in spread.judgments} == {OK}
    counts = cache.call_counts(judge.identity.key)  # committed by the tasks, one call per key
    assert len(counts) == len(pairs) and set(counts.values()) == {1}
    again = judge_pairs(judge, pairs, cache, dask_client)
    assert (again.calls, again.cache_hits, again.judgments) == (0, len(pairs), alone.judgments)


@pytest.mark.slow
def test_openai_judge_on_two_workers_asks_each_text_once(dask_client, stub_server, tmp_path: Path) -> None:
    url, log = stub_server.url, stub_server
    judge = make_judge(f"openai:model=m,base_url={url},concurrency=2")
    some = _pairs()[::7]
    pairs = some + [Pair("other", d.doc_id, d.query, d.document) for d in some[:20]]  # same texts: asked once
    alone = judge_pairs(judge, pairs, JudgmentCache(tmp_path / "one"))
    sent = len(log.requests)
    assert sent == alone.calls == alone.distinct < len(pairs)
    spread = judge_pairs(judge, pairs, JudgmentCache(tmp_path / "tasks"), dask_client)
    assert spread.judgments == alone.judgments and len(log.requests) - sent == spread.calls == alone.calls


def test_an_openai_judge_pickles_without_its_key(monkeypatch) -> None:
    monkeypatch.setenv("RS_TEST_KEY", "sk-very-secret-value")
    judge = make_judge("openai:model=m,base_url=http://127.0.0.1:9/v1,key_env=RS_TEST_KEY,seed=3")
    sent = pickle.dumps(judge)
    assert b"sk-very-secret-value" not in sent and b"RS_TEST_KEY" in sent
    back = pickle.loads(sent)  # made again: the key read from this process's environment
    assert back.identity == judge.identity and back._client.headers["Authorization"] == "Bearer sk-very-secret-value"


@pytest.mark.slow
def test_the_judge_workflow_on_a_scheduler_writes_the_same_labels(dask_client, tmp_path: Path) -> None:
    from rankscope.workflows.judge import Study, judge
    from rankscope.workflows.options import Execution

    data, systems = small_dataset(), ["bm25", "tfidf"]
    study = Study(human_sample=4)
    alone = judge(data, systems, "qrels:flip=0.25", depth=6, judgments=tmp_path / "a", study=study)
    spread = judge(data, systems, "qrels:flip=0.25", depth=6, judgments=tmp_path / "b", study=study,
                   execution=Execution(scheduler=dask_client))  # fmt: skip
    assert spread.counts == alone.counts and alone.counts["calls"] > 0
    assert spread.labels.equals(alone.labels) and spread.qrels.equals(alone.qrels)
    assert spread.ppi.means.equals(alone.ppi.means)
