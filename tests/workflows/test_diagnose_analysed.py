"""Texts analysed once for both systems of a diagnosis: the same recall failures, top results and
headroom as each system analysing alone, each text analysed once per analyzer, analyzers never mixed."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from pandas.testing import assert_frame_equal

from rankscope.retrieval.analysis import Analyzer
from rankscope.workflows.diagnose.analysed import Analysed
from rankscope.workflows.diagnose.drilldown import top_results
from rankscope.workflows.diagnose.headroom import headroom, ideal_values, top_of_run
from rankscope.workflows.diagnose.misses import relevant_ranks
from rankscope.workflows.diagnose.recall_failures import recall_failures

CORPUS = pd.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4", "d5"],
        "title": ["Searching libraries", "", "Cats", "", "Libraries"],
        "text": [
            "retrieval of documents in libraries",
            "indexing methods for catalogues",
            "a study of cats and dogs",
            "library retrieval and indexing evaluation",
            "evaluating the retrieving of library systems, and of libraries",
        ],
    }
)
QUERIES = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["Evaluating library retrieval systems", "cats indexing"]})
QRELS = pd.DataFrame(
    [("q1", "d1", 1), ("q1", "d2", 1), ("q1", "d5", 2), ("q1", "d9", 1), ("q2", "d3", 1), ("q2", "d2", 1)],
    columns=["query_id", "doc_id", "relevance"],
)
FIRST = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d4", "d5", "d3"], "score": [2.0, 1.0, 1.0]})
SECOND = pd.DataFrame({"query_id": ["q1", "q2", "q2"], "doc_id": ["d1", "d2", "d4"], "score": [1.0, 2.0, 1.0]})
NOSTEM = Analyzer(stemmer=None)


class Counting(Analyzer):
    """The default analyzer, counting the texts it is given (equal to Analyzer(): the same settings)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        given = list(texts)
        self.texts += given
        return super().tokenize_many(given)


def test_shared_analysis_equals_each_system_alone_and_reads_each_text_once() -> None:
    counting = Counting()
    analysed = Analysed(CORPUS, QUERIES)
    for run in (FIRST, SECOND):
        ranked = top_of_run(run, 2)
        ranks = relevant_ranks(run, QRELS, depth=2)
        for analyzer in (counting, NOSTEM):  # the second system analyses alike, then differently
            fresh = Analyzer(stemmer=analyzer.stemmer)
            shared = recall_failures(ranks, QUERIES, CORPUS, analyzer, analysed=analysed)
            assert_frame_equal(shared, recall_failures(ranks, QUERIES, CORPUS, fresh))
            shared = top_results(ranked, QRELS, CORPUS, QUERIES, analyzer, n=2, analysed=analysed)
            assert_frame_equal(shared, top_results(ranked, QRELS, CORPUS, QUERIES, fresh, n=2))
    # d2 is a recall loss of both systems: its text (no title) analysed once; every query and document
    # text (the texts with a space; snippets' words come one by one) analysed once
    assert counting.texts.count("indexing methods for catalogues") == 1
    texts = [t for t in counting.texts if " " in t]
    assert len(texts) == len(set(texts)) and set(QUERIES["text"]) <= set(texts)
    # the stemmed and unstemmed terms are kept apart
    assert analysed.document_terms(["d5"], Analyzer())["d5"] >= {"librari", "retriev"}
    assert analysed.document_terms(["d5"], NOSTEM)["d5"] >= {"libraries", "retrieving"}


def test_headroom_with_shared_ideal_values_equals_headroom_alone() -> None:
    metrics = ["ndcg@2", "recall@2", "map"]
    ideal = ideal_values(QRELS, metrics)
    for run in (FIRST, SECOND):
        shared = headroom(QRELS, run, metrics, depth=2, ideal=ideal)
        alone = headroom(QRELS, run, metrics, depth=2)
        assert_frame_equal(shared.per_query, alone.per_query)
        assert_frame_equal(shared.summary, alone.summary)
    assert ideal.loc[("q1", "ndcg@2")] == 1.0
