"""Why recall failed, on documents whose shared query terms are counted by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.registry import make_retriever
from rankscope.retrieval.snippets import highlight, snippet, word_terms
from rankscope.workflows.diagnose.misses import relevant_ranks
from rankscope.workflows.diagnose.recall_failures import analyzer_of, failure_summary, recall_failures

CORPUS = pd.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4"],
        "title": ["Searching libraries", "", "Cats", ""],
        "text": [
            "retrieval of documents in libraries",
            "indexing methods for catalogues",
            "a study of cats and dogs",
            "library retrieval and indexing evaluation",
        ],
    }
)
QUERIES = pd.DataFrame({"query_id": ["q1"], "text": ["Evaluating library retrieval systems"]})
# q1's analysed terms (english: stopwords out, Snowball stems): evalu, librari, retriev, system -> 4 terms
QRELS = pd.DataFrame(
    [("q1", "d1", 1), ("q1", "d2", 1), ("q1", "d3", 2), ("q1", "d4", 1), ("q1", "d9", 1)],
    columns=["query_id", "doc_id", "relevance"],
)
RUN = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d4"], "score": [1.0]})  # only d4 within the depth
OTHER = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d4"], "score": [2.0, 1.0]})


def test_shared_terms_and_reasons_by_hand() -> None:
    ranks = relevant_ranks(RUN, QRELS, depth=1)
    others = {"other": relevant_ranks(OTHER, QRELS, depth=2)}
    table = recall_failures(ranks, QUERIES, CORPUS, Analyzer(), others).set_index("doc_id")
    assert sorted(table.index) == ["d1", "d2", "d3", "d9"]  # d4 is found: not a recall loss
    assert (table["query_terms"] == 4).all()
    # d1: "libraries" -> librari, "retrieval" -> retriev (title and text both count): 2 of 4
    assert table.loc["d1", ["shared_terms", "reason"]].tolist() == [2, "outscored"]
    assert table.loc["d1", "shared_share"] == 0.5
    # d2 and d3 share nothing; d9 is judged but not in the corpus
    assert table.loc["d2", ["shared_terms", "reason"]].tolist() == [0, "vocabulary mismatch"]
    assert table.loc["d3", "reason"] == "vocabulary mismatch"
    assert table.loc["d9", "reason"] == "not in the corpus"
    # the other system retrieves d2 at rank 1
    assert table.loc["d2", "rank_other"] == 1 and np.isnan(table.loc["d1", "rank_other"])
    summary = failure_summary(table.reset_index())
    assert summary["losses"].to_dict() == {"vocabulary mismatch": 2, "outscored": 1, "not in the corpus": 1}
    assert summary["recovered_by_other"].to_dict() == {"vocabulary mismatch": 1, "outscored": 0, "not in the corpus": 0}
    assert summary["no_shared_term"].to_dict() == {"vocabulary mismatch": 2, "outscored": 0, "not in the corpus": 1}
    assert summary["share"].sum() == pytest.approx(1.0)


def test_the_retrievers_own_analyzer_decides_what_is_shared() -> None:
    unstemmed = make_retriever("bm25:analyzer=english-nostem").index(CORPUS)
    assert analyzer_of(unstemmed).stemmer is None
    assert analyzer_of(None) == Analyzer() and analyzer_of(object()) == Analyzer()
    ranks = relevant_ranks(RUN, QRELS, depth=1)
    table = recall_failures(ranks, QUERIES, CORPUS, analyzer_of(unstemmed)).set_index("doc_id")
    # without stemming "libraries" no longer matches "library": d1 shares only "retrieval" (1 of 4)
    assert table.loc["d1", ["shared_terms", "reason"]].tolist() == [1, "outscored"]
    assert table.loc["d1", "shared_share"] == 0.25


def test_snippet_picks_the_window_with_most_query_terms_and_highlights_them() -> None:
    text = "Nothing here at all. " * 20 + "Library retrieval systems are evaluated. " + "More filler words. " * 10
    terms = set(Analyzer().tokenize("evaluating library retrieval systems"))
    piece, matched = snippet(text, terms, word_terms([text], Analyzer()), words=8)
    assert piece.startswith("… ") and piece.endswith(" …")
    assert "Library retrieval systems are evaluated" in piece
    assert matched == ["Library", "evaluated", "retrieval", "systems"]
    marked = highlight("a <Library> & library", ["Library"], "<mark>", "</mark>", lambda s: s.replace("<", "&lt;"))
    assert marked == "a &lt;<mark>Library</mark>> & library"  # whole words, case as written, rest escaped
