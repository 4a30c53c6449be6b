"""People's labels in the judges' cache: saved at once under human:NAME, replaced, undone, listed by source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.judging.base import JudgeIdentity, Judgment, Pair
from rankscope.judging.cache import JudgmentCache, pair_key
from rankscope.workflows.collection.labels import all_labels, person, save_label
from rankscope.workflows.collection.layout import CollectionError


def test_labels_are_saved_replaced_undone_and_listed(tmp_path: Path) -> None:
    alice, bob = person("alice"), person("bob.k")
    first, second = Pair("q1", "d1", "tides", "high tide"), Pair("q1", "d2", "tides", "low tide")
    with JudgmentCache(tmp_path) as cache:
        save_label(cache, alice, first, 1, "unsure", 3.04)
        save_label(cache, alice, first, 3, "sure <b>now</b>", 2.0)  # a second grade replaces the first
        save_label(cache, alice, second, 0, "", 1.0)
        save_label(cache, bob, first, 2, "", 5.0)
        judge = JudgeIdentity("openai", "m")
        cache.add_judge(judge)
        key = pair_key(judge, second, reads_ids=False)
        cache.link(judge.key, [("q1", "d2", key)])
        cache.record(judge.key, key, Judgment(2, "ok", "Final score: 2"))
    labels = all_labels(tmp_path)  # read back by a new connection, as after a restart
    assert list(zip(labels["source"], labels["doc_id"], labels["relevance"])) == [
        ("human:alice", "d1", 3), ("human:alice", "d2", 0), ("human:bob.k", "d1", 2), ("openai:m", "d2", 2)
    ]  # fmt: skip
    note = json.loads(labels["raw"][0])
    assert (note["note"], note["seconds"]) == ("sure <b>now</b>", 2.0)
    with JudgmentCache(tmp_path) as cache:
        assert cache.forget(alice.key, "q1", "d1") and not cache.forget(alice.key, "q1", "d1")
        assert sorted(identity["model"] for identity in cache.judges().values()) == ["alice", "bob.k", "m"]
    after = all_labels(tmp_path)
    assert list(zip(after["source"], after["doc_id"])) == [
        ("human:alice", "d2"),
        ("human:bob.k", "d1"),
        ("openai:m", "d2"),
    ]
    with pytest.raises(CollectionError, match="annotator name 'a b'"):
        person("a b")
