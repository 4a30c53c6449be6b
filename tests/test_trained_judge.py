"""The trained judge: cross-fitted by query, deterministic whatever the batch, refusing too few labels."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from rankscope.judging.base import INVALID, OK, JudgeError, Pair
from rankscope.judging.trained import TrainedJudge

WORDS = [f"w{i}" for i in range(40)]


def handmade(queries: int = 20, docs: int = 120) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A small corpus, queries of three words, and graded labels: 2 for a document holding two or more
    of the query's words, 0 otherwise (labels given for every document sharing a word with the query)."""
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(WORDS, size=6)) for _ in range(docs)]
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(docs)], "title": "", "text": texts})
    query_words = [list(rng.choice(WORDS, size=3, replace=False)) for _ in range(queries)]
    table = pd.DataFrame({"query_id": [f"q{i}" for i in range(queries)], "text": [" ".join(w) for w in query_words]})
    rows = []
    for q, words in zip(table.query_id, query_words):
        for d, text in zip(corpus.doc_id, texts):
            held = sum(word in text.split() for word in words)
            if held:
                rows.append((q, d, 2 if held >= 2 else 0))
    return corpus, table, pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def pairs_of(corpus: pd.DataFrame, queries: pd.DataFrame, query_ids: list[str]) -> list[Pair]:
    texts = dict(zip(queries.query_id, queries.text))
    documents = dict(zip(corpus.doc_id, corpus.text))
    return [Pair(q, d, texts[q], documents[d]) for q in query_ids for d in corpus.doc_id[:30]]


def test_a_query_is_judged_by_a_model_that_never_saw_its_labels() -> None:
    """Inverting q0's labels (relevant exactly where the words are absent: a signal only a model that saw
    q0 could exploit) leaves q0's probabilities unchanged, and changes those of a query in another fold."""
    corpus, queries, labels = handmade()
    planted = labels.copy()
    mine = planted.query_id == "q0"
    planted.loc[mine, "relevance"] = np.where(planted.loc[mine, "relevance"] > 0, 0, 3)
    honest, leaked = TrainedJudge(corpus, queries, labels), TrainedJudge(corpus, queries, planted)
    own = pairs_of(corpus, queries, ["q0"])
    assert [j.raw for j in honest.judge(own)] == [j.raw for j in leaked.judge(own)]
    other = next(q for q in queries.query_id if honest.fold(q) != honest.fold("q0"))
    moved = pairs_of(corpus, queries, [other])
    assert [j.raw for j in honest.judge(moved)] != [j.raw for j in leaked.judge(moved)]
    assert json.loads(honest.judge(own)[0].raw)["fold"] == honest.fold("q0")


def test_labels_do_not_depend_on_batch_order_or_company() -> None:
    corpus, queries, labels = handmade()
    judge = TrainedJudge(corpus, queries, labels)
    pairs = pairs_of(corpus, queries, ["q0", "q3", "q5"])
    together = judge.judge(pairs)
    assert judge.judge(pairs[::-1]) == together[::-1]
    assert [judge.ask(pair) for pair in pairs[::7]] == together[::7]
    assert TrainedJudge(corpus, queries, labels).judge(pairs) == together  # a new fit, the same labels
    assert all(j.status == OK for j in together)


def test_the_judge_learns_the_planted_rule() -> None:
    """Relevant pairs (two or more query words) get a higher P(relevant) than the rest, as the labels say."""
    corpus, queries, labels = handmade()
    judge = TrainedJudge(corpus, queries, labels)
    truth = {(q, d): r for q, d, r in labels.itertuples(index=False)}
    pairs = pairs_of(corpus, queries, list(queries.query_id))
    relevant = np.array([truth.get((p.query_id, p.doc_id), 0) >= 1 for p in pairs])
    p_relevant = np.array([1 - json.loads(j.raw)["p"][0] for j in judge.judge(pairs)])
    assert p_relevant[relevant].mean() > p_relevant[~relevant].mean() + 0.2


def test_an_unlabelled_query_is_judged_by_the_model_of_all_labels() -> None:
    corpus, queries, labels = handmade()
    judge = TrainedJudge(corpus, queries, labels[labels.query_id != "q1"])
    judgment = judge.ask(pairs_of(corpus, queries, ["q1"])[0])
    assert json.loads(judgment.raw)["fold"] == "all"
    assert judge.ask(pairs_of(corpus, queries, ["q2"])[0]).raw != judgment.raw


def test_too_few_labels_are_refused_in_one_line() -> None:
    corpus, queries, labels = handmade()
    few = labels[labels.query_id.isin(["q0", "q1"])]
    with pytest.raises(JudgeError, match="too few labels to train") as caught:
        TrainedJudge(corpus, queries, few, pool=0)
    assert "\n" not in str(caught.value)


def test_identity_follows_the_labels_and_names_the_training() -> None:
    corpus, queries, labels = handmade()
    first, again = TrainedJudge(corpus, queries, labels), TrainedJudge(corpus, queries, labels.iloc[::-1])
    assert first.identity.key == again.identity.key
    changed = labels.copy()
    changed.loc[0, "relevance"] = 3 - changed.loc[0, "relevance"]
    assert TrainedJudge(corpus, queries, changed).identity.key != first.identity.key
    assert TrainedJudge(corpus, queries, labels, seed=1).identity.key != first.identity.key
    assert first.identity.kind == "trained" and "bm25" in first.shares


def test_a_document_outside_the_corpus_is_invalid() -> None:
    corpus, queries, labels = handmade()
    judgment = TrainedJudge(corpus, queries, labels).ask(Pair("q0", "nowhere", "w1 w2", "text"))
    assert judgment.status == INVALID and "nowhere" in judgment.raw


@pytest.mark.slow
def test_on_cranfield_the_pooled_pairs_are_ranked_better_than_chance() -> None:
    if not os.environ.get("RANKSCOPE_DATA"):
        pytest.skip("RANKSCOPE_DATA is not set")
    from sklearn.metrics import roc_auc_score

    from rankscope.corpora.load import load_dataset

    data = load_dataset("cranfield")
    judge = TrainedJudge(data.corpus, data.queries, data.qrels)
    judged = data.queries[data.queries.query_id.isin(set(data.qrels.query_id))]
    run = judge.features.retrievers["tfidf"].search(judged, k=10)
    texts = dict(zip(data.queries.query_id, data.queries.text))
    truth = {(q, d): r for q, d, r in zip(data.qrels.query_id, data.qrels.doc_id, data.qrels.relevance)}
    pairs = [Pair(q, d, texts[q], "") for q, d in zip(run.query_id, run.doc_id)]
    relevant = [truth.get((p.query_id, p.doc_id), 0) >= 1 for p in pairs]
    p_relevant = [1 - json.loads(j.raw)["p"][0] for j in judge.judge(pairs)]
    assert roc_auc_score(relevant, p_relevant) > 0.6
