"""Fuzz: hostile labels and pairs for the trained judge (issue 44 item 1).

Every case through :class:`~rankscope.judging.trained.TrainedJudge`: a clean one-line error (too
few labels, a grade that is no integer, one pair given two grades, bad settings), or accepted with
every judgment a label 0-3 and its probabilities finite; never NaN, a traceback or a crash.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from harness import check, run_call  # tests/fuzz/harness.py

from rankscope.judging.base import LABELS, OK, Pair
from rankscope.judging.trained import TrainedJudge

TOPICS = ["wing flow", "heat transfer", "shock wave", "boundary layer", "panel flutter", "jet noise"]


def collection() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Six topics, ten documents each (half on topic), a query per topic and labels for all of them."""
    rng = np.random.default_rng(3)
    filler = [f"x{i}" for i in range(30)]
    rows, labels = [], []
    for t, topic in enumerate(TOPICS):
        for i in range(10):
            words = list(rng.choice(filler, size=5)) + (topic.split() if i % 2 == 0 else [])
            rows.append((f"t{t}d{i}", "", " ".join(words)))
            labels.append((f"t{t}", f"t{t}d{i}", 2 if i % 2 == 0 else 0))
    corpus = pd.DataFrame(rows, columns=["doc_id", "title", "text"])
    queries = pd.DataFrame({"query_id": [f"t{t}" for t in range(len(TOPICS))], "text": TOPICS})
    return corpus, queries, pd.DataFrame(labels, columns=["query_id", "doc_id", "relevance"])


ERRORS = {
    "all relevant": (lambda c, q, lab: (c, q, lab.assign(relevance=2)), "too few labels to train"),
    "all irrelevant": (lambda c, q, lab: (c, q, lab.assign(relevance=0)), "too few labels to train"),
    "no labels": (lambda c, q, lab: (c, q, lab.iloc[:0]), "too few labels to train"),
    "labels of unknown queries": (lambda c, q, lab: (c, q, lab.assign(query_id="nowhere")), "too few labels"),
    "NaN grade": (lambda c, q, lab: (c, q, lab.astype({"relevance": object}).assign(relevance=float("nan"))), "row 1"),
    "text grade": (
        lambda c, q, lab: (c, q, lab.astype({"relevance": object}).assign(relevance="high")),
        "not an integer",
    ),
    "two grades for a pair": (
        lambda c, q, lab: (c, q, pd.concat([lab, lab.iloc[:1].assign(relevance=3)])),
        "given two grades",
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_unusable_labels_are_one_line(name: str) -> None:
    change, fragment = ERRORS[name]
    corpus, queries, labels = change(*collection())
    check(run_call(lambda: TrainedJudge(corpus, queries, labels, folds=2, pool=0)), "error", fragment)


@pytest.mark.parametrize("setting", [{"folds": 1}, {"folds": -3}, {"pool": -1}])
def test_bad_settings_are_one_line(setting: dict[str, int]) -> None:
    corpus, queries, labels = collection()
    check(run_call(lambda: TrainedJudge(corpus, queries, labels, **setting)), "error", "is not allowed")


def _judged(judge: TrainedJudge, pairs: list[Pair]) -> None:
    judgments = judge.judge(pairs)
    assert len(judgments) == len(pairs)
    for judgment in judgments:
        assert judgment.status == OK and judgment.label in LABELS
        assert all(np.isfinite(json.loads(judgment.raw)["p"]))


HOSTILE_PAIRS = {
    "empty query": [Pair("t0", "t0d0", "", "")],
    "query of stopwords": [Pair("t0", "t0d1", "the of and", "")],
    "query of unknown words": [Pair("new", "t1d0", "zzz qqq", "")],
    "unlabelled query": [Pair("new", "t2d2", "shock wave", "")],
    "duplicate pairs": [Pair("t3", "t3d0", "boundary layer", "")] * 3,
    "no pairs": [],
}


@pytest.mark.parametrize("name", list(HOSTILE_PAIRS))
def test_hostile_pairs_get_finite_labels(name: str) -> None:
    corpus, queries, labels = collection()
    corpus.loc[0, "text"] = ""  # a document with no text at all
    check(
        run_call(lambda: _judged(TrainedJudge(corpus, queries, labels, folds=2, pool=0), HOSTILE_PAIRS[name])),
        "accepted",
    )


def test_a_query_with_no_labels_but_in_the_queries_is_judged() -> None:
    corpus, queries, labels = collection()
    unlabelled = labels[labels.query_id != "t5"]
    judge = TrainedJudge(corpus, queries, unlabelled, folds=2, pool=0)
    judgment = judge.ask(Pair("t5", "t5d0", "jet noise", ""))
    assert judgment.status == OK and json.loads(judgment.raw)["fold"] == "all"
