"""Pseudo-relevance feedback: RM3 and Bo1 against feedback models computed by hand on a tiny corpus.

The corpus has 40 documents so that Anserini's "at most 10% of the documents"
rule bites at 4 documents. With b=0 BM25's length normalisation is 1, so a
document's first-pass score for "apple" is idf(apple) * tf / (tf + 1.5):
d01 (tf 2) scores idf * 4/7, d02 (tf 1) idf * 2/5, a ratio of 10 : 7.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankscope.retrieval import prf
from rankscope.retrieval.registry import load_retriever, make_retriever

LONG = "abcdefghijklmnopqrstu"  # 21 characters: too long to be an RM3 feedback term
N_DOCS = 40


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    texts = [f"zeta{i}" for i in range(N_DOCS)]
    texts[1] = "apple apple banana cherry common common common"  # common: in 5 of 40 documents, > 10%
    texts[2] = f"apple banana banana banana date {LONG} {LONG} {LONG} {LONG} {LONG}"
    texts[3] = "banana zeta3"
    for i in range(4, 8):
        texts[i] = f"common zeta{i}"
    return pd.DataFrame({"doc_id": [f"d{i:02d}" for i in range(N_DOCS)], "title": "", "text": texts})


def _bm25(spec: str, corpus: pd.DataFrame):
    return make_retriever(f"bm25:b=0,analyzer=plain,{spec}").index(corpus)


def _vector(retriever, text: str) -> dict[str, float]:
    row = retriever._query_vectors([text])
    vocabulary = retriever.counts_.vocabulary
    return {vocabulary[t]: v for t, v in zip(row.indices, row.data)}


def _idf(df: int) -> float:
    return math.log(1 + (N_DOCS - df + 0.5) / (df + 0.5))


def test_rm3_relevance_model_by_hand(corpus: pd.DataFrame) -> None:
    """fb_docs=2, fb_terms=2. Eligible counts: d01 apple 2, banana 1, cherry 1 (common is in
    5/40 documents); d02 banana 3, apple 1, date 1 (the 21-letter term is too long).
    Pruned to 2 terms (ties to the first in byte order): d01 {apple 2, banana 1} / 3,
    d02 {banana 3, apple 1} / 4. With scores 10 : 7, rm(apple) = 2/3*10 + 1/4*7 = 101/12,
    rm(banana) = 1/3*10 + 3/4*7 = 103/12; scaled to sum 1: 101/204 and 103/204."""
    retriever = _bm25("prf=rm3,fb_docs=2,fb_terms=2", corpus)
    counts = retriever.counts_
    query = counts.query_matrix(retriever.analyzer_, ["apple"])
    rows, docs, scores = prf.first_pass(query, retriever.weights_, counts.doc_id_rank, 2)
    assert list(counts.doc_ids[docs]) == ["d01", "d02"]
    assert scores == pytest.approx([_idf(2) * 4 / 7, _idf(2) * 2 / 5])
    model = prf.relevance_model(counts, rows, docs, scores, 1, fb_terms=2)
    got = {counts.vocabulary[t]: v for t, v in zip(model.indices, model.data)}
    assert got == pytest.approx({"apple": 101 / 204, "banana": 103 / 204}, abs=1e-12)
    # one term per document: d01 -> apple (P 1), d02 -> banana (P 1); rm = {apple 10, banana 7} -> apple
    one = prf.relevance_model(counts, rows, docs, scores, 1, fb_terms=1)
    assert {counts.vocabulary[t]: v for t, v in zip(one.indices, one.data)} == pytest.approx({"apple": 1.0})


def test_rm3_interpolates_with_the_query_counting_unknown_tokens(corpus: pd.DataFrame) -> None:
    """q(apple) = 1/2 (the unknown token counts in the query length, as in Anserini):
    w(apple) = 0.5 * 1/2 + 0.5 * 101/204 = 203/408, w(banana) = 0.5 * 103/204 = 103/408;
    a document's score is sum w(t) * idf(t) * tf / (tf + 1.5)."""
    retriever = _bm25("prf=rm3,fb_docs=2,fb_terms=2,weight=0.5", corpus)
    assert _vector(retriever, "apple kiwiunknown") == pytest.approx({"apple": 203 / 408, "banana": 103 / 408})
    w_apple, w_banana = 203 / 408, 103 / 408
    expected = [
        w_apple * _idf(2) * 2 / 3.5 + w_banana * _idf(3) * 1 / 2.5,  # d01
        w_apple * _idf(2) * 1 / 2.5 + w_banana * _idf(3) * 3 / 4.5,  # d02
        w_banana * _idf(3) * 1 / 2.5,  # d03: found only through the expansion term
        0.0,
    ]
    got = retriever.score("apple kiwiunknown", ["d01", "d02", "d03", "d04"])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    run = retriever.search(pd.DataFrame({"query_id": ["q"], "text": ["apple kiwiunknown"]}), k=10)
    assert list(run["doc_id"]) == ["d01", "d02", "d03"]  # 1.044 > 1.011 > 0.246


def test_bo1_expansion_by_hand(corpus: pd.DataFrame) -> None:
    """Terrier's defaults (3 feedback documents, only d01 and d02 hold apple). Bag: apple tfx 3
    (in 2 documents, F 3), banana tfx 4 (2 documents, F 5); every other term is in one feedback
    document only and not in the query: weight 0. Bo1 w = tfx log2((1+f)/f) + log2(1+f), f = F/40.
    banana weighs most; the parameter-free normaliser is Bo1 with tfx = F = 4."""

    def bo1(tfx: float, cf: float) -> float:
        f = cf / N_DOCS
        return tfx * math.log2((1 + f) / f) + math.log2(1 + f)

    normaliser = bo1(4, 4)
    retriever = _bm25("prf=bo1", corpus)
    expected = {"apple": 1 + bo1(3, 3) / normaliser, "banana": bo1(4, 5) / normaliser}
    assert bo1(4, 5) > bo1(3, 3)
    assert _vector(retriever, "apple") == pytest.approx(expected, rel=1e-12)
    assert retriever.effective_params()["fb_docs"] == 3 and "weight" not in prf.DEFAULTS["bo1"]


def test_weight_one_keeps_the_plain_bm25_ranking(collection) -> None:
    """With weight=1 RM3 is the original query scaled by 1/length: the same ranking as plain BM25."""
    plain = make_retriever("bm25").index(collection.corpus)
    rm3 = make_retriever("bm25:prf=rm3,weight=1").index(collection.corpus)
    queries = collection.queries.head(20)
    a, b = plain.search(queries, k=50), rm3.search(queries, k=50)
    assert (a[["query_id", "doc_id"]].to_numpy() == b[["query_id", "doc_id"]].to_numpy()).all()


def test_feedback_parameters_change_without_reindexing(corpus: pd.DataFrame, tmp_path: Path) -> None:
    retriever = _bm25("prf=rm3,fb_docs=2,fb_terms=2", corpus)
    counts, weights = retriever.counts_, retriever.weights_
    retriever.set_params(fb_terms=1, weight=0.0)
    assert retriever.counts_ is counts and retriever.weights_ is weights  # query side only: nothing re-fitted
    assert _vector(retriever, "apple") == pytest.approx({"apple": 1.0})
    retriever.save(tmp_path / "idx")
    again = load_retriever(tmp_path / "idx")
    assert again.spec() == retriever.spec() and "prf=rm3" in again.spec()
    ids = list(corpus["doc_id"])
    np.testing.assert_array_equal(again.score("apple", ids), retriever.score("apple", ids))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bm25:fb_docs=3", "apply only with prf=rm3 or prf=bo1"),
        ("bm25:prf=bo1,weight=0.3", "weight applies to prf=rm3 only"),
        ("bm25:prf=rm3,weight=1.5", r"weight must be a float in \[0, 1\] or None"),
        ("bm25:prf=rm3,fb_terms=0", r"fb_terms must be an int in \[1, inf\) or None"),
        ("bm25:prf=rm4", "prf must be one of none, rm3, bo1"),
        ("rank_bm25:prf=rm3", "prf"),  # rank-bm25 scores in Python: no feedback there
    ],
)
def test_invalid_feedback_parameters_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_retriever(spec)


def test_top_per_group_breaks_ties_by_term_id() -> None:
    group = np.array([0, 0, 0, 1, 1])
    values = np.array([1.0, 2.0, 1.0, 5.0, 5.0])
    terms = np.array([7, 3, 4, 9, 2])
    assert list(prf.top_per_group(group, values, terms, 2)) == [1, 2, 3, 4]
    assert list(prf.top_per_group(group, values, terms, np.array([1, 1, 1, 1, 1]))) == [1, 4]


def test_a_query_without_known_terms_expands_to_nothing(corpus: pd.DataFrame) -> None:
    for method in ("rm3", "bo1"):
        retriever = _bm25(f"prf={method}", corpus)
        assert retriever._query_vectors(["kiwiunknown", ""]).nnz == 0
        assert isinstance(retriever._query_vectors(["apple"]), sp.csr_matrix)
