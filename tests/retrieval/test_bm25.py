"""BM25 family: formulas against definitions and rank-bm25, re-weighting, ties, persistence."""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rank_bm25

from rankscope.core.errors import NotFittedError
from rankscope.retrieval import counts_retriever
from rankscope.retrieval.base import UnknownDocumentError, document_texts, query_texts
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.counts_retriever import EmptyIndexError
from rankscope.retrieval.params import SpecError
from rankscope.retrieval.rank_bm25_backend import RankBM25


def reference_scores(
    docs: list[list[str]], query: list[str], variant: str, k1: float, b: float, delta: float, epsilon: float
) -> list[float]:
    """Plain-Python transcription of the formulas in retrieval/bm25_weights.py, one document at a time."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(t for d in docs for t in set(d))
    raw_idf = {t: math.log(n - f + 0.5) - math.log(f + 0.5) for t, f in df.items()}
    floor = epsilon * sum(raw_idf.values()) / len(raw_idf)
    out = []
    for doc in docs:
        tfs = Counter(doc)
        norm = 1 - b + b * len(doc) / avgdl
        total = 0.0
        for term in query:
            tf = tfs.get(term, 0)
            if tf == 0:
                continue
            f = df[term]
            if variant == "okapi":
                idf = raw_idf[term] if raw_idf[term] >= 0 else floor
                total += idf * tf * (k1 + 1) / (tf + k1 * norm)
            elif variant == "lucene":
                total += math.log(1 + (n - f + 0.5) / (f + 0.5)) * tf / (tf + k1 * norm)
            elif variant == "bm25l":
                c = tf / norm
                total += math.log((n + 1) / (f + 0.5)) * (k1 + 1) * (c + delta) / (k1 + c + delta)
            else:
                total += math.log((n + 1) / f) * (delta + tf * (k1 + 1) / (k1 * norm + tf))
        out.append(total)
    return out


@pytest.mark.parametrize(
    ("variant", "delta"),
    [("okapi", None), ("lucene", None), ("bm25l", 0.5), ("bm25l", 0.2), ("bm25+", 1.0), ("bm25+", 0.3)],
)
def test_scores_follow_the_formulas(tiny_corpus: pd.DataFrame, variant: str, delta: float | None) -> None:
    model = BM25(variant=variant, k1=1.2, b=0.6, delta=delta).index(tiny_corpus)
    doc_ids, texts = document_texts(tiny_corpus)
    docs = model.analyzer_.tokenize_many(texts)
    for query in ["boundary layer flow", "heat heat", "flow cone xylophone"]:
        expected = reference_scores(docs, model.analyzer_.tokenize(query), variant, 1.2, 0.6, delta or 0.0, 0.25)
        np.testing.assert_allclose(model.score(query, doc_ids), expected, rtol=0, atol=1e-12)


def test_bm25l_hand_computation_and_the_rank_bm25_tf_bug() -> None:
    corpus = pd.DataFrame({"doc_id": ["d1", "d2"], "text": ["apple banana", "apple apple cherry"]})
    model = BM25(variant="bm25l", analyzer="plain").index(corpus)
    # N=2, avgdl=2.5, idf=log(3/2.5); d2: L=0.25+0.75*3/2.5=1.15, c=2/1.15,
    # 2.5*(c+0.5)/(1.5+c+0.5)*idf; d1: L=0.85, c=1/0.85.
    ours = model.score("apple", ["d1", "d2"])
    np.testing.assert_allclose(ours, [0.24056316521424562, 0.27295233066536806], rtol=0, atol=1e-12)
    # rank-bm25 0.2.2 multiplies by tf once more: equal for tf=1, doubled for tf=2.
    theirs = rank_bm25.BM25L([["apple", "banana"], ["apple", "apple", "cherry"]]).get_scores(["apple"])
    np.testing.assert_allclose(theirs, ours * np.array([1, 2]), rtol=1e-12)


def _absent_term_bonus(model: BM25, idf: dict[str, float], tokens: list[str]) -> np.ndarray:
    """Sum of rank-bm25's idf (delta = 1) over the query tokens each document lacks."""
    counts = model.counts_
    bonus = np.zeros(counts.n_docs)
    for token in tokens:
        if token in idf:
            term = counts.term_index[token]
            lacking = np.ones(counts.n_docs, dtype=bool)
            lacking[counts.postings[counts.indptr[term] : counts.indptr[term + 1]]] = False
            bonus += idf[token] * lacking
    return bonus


def _rank_bm25_equality(collection, variant: str, reference_cls: type) -> float:
    model = BM25(variant=variant).index(collection.corpus)
    doc_ids, texts = document_texts(collection.corpus)
    reference = reference_cls(model.analyzer_.tokenize_many(texts))
    worst = 0.0
    for text in query_texts(collection.queries)[1]:
        tokens = model.analyzer_.tokenize(text)
        theirs = np.asarray(reference.get_scores(tokens))
        ours = model.score(text, doc_ids)
        if variant == "bm25+":
            # rank-bm25 adds idf * delta for every known query token to every document,
            # also where the term is absent; Lv & Zhai add it only where it is present.
            ours = ours + _absent_term_bonus(model, reference.idf, tokens)
        worst = max(worst, float(np.abs(theirs - ours).max()))
    return worst


@pytest.mark.slow
def test_okapi_equals_rank_bm25_on_every_query(collection) -> None:
    assert _rank_bm25_equality(collection, "okapi", rank_bm25.BM25Okapi) < 1e-6


@pytest.mark.slow
def test_bm25plus_equals_rank_bm25_up_to_its_absent_term_bonus(collection) -> None:
    assert _rank_bm25_equality(collection, "bm25+", rank_bm25.BM25Plus) < 1e-6


def test_set_params_reweights_like_a_fresh_index(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    model = BM25().index(tiny_corpus)
    counts = model.counts_
    model.set_params(variant="bm25l", k1=0.7, b=0.3, delta=0.4)
    assert model.counts_ is counts  # not re-tokenised
    fresh = BM25(variant="bm25l", k1=0.7, b=0.3, delta=0.4).index(tiny_corpus)
    pd.testing.assert_frame_equal(model.search(tiny_queries), fresh.search(tiny_queries))
    with pytest.raises(SpecError, match=r"^bm25: b=1.5 is not allowed; b must be a float in \[0, 1\]$"):
        model.set_params(b=1.5)
    assert model.b == 0.3  # a rejected change leaves the model as it was
    with pytest.raises(
        ValueError,
        match=r"^bm25 has no parameter\(s\) \['k3'\]; known: variant, k1, b, delta, epsilon, analyzer, prf, fb_docs, fb_terms, weight$",
    ):
        model.set_params(k3=1.0)
    with pytest.raises(ValueError, match="analyzer cannot change"):
        model.set_params(analyzer="plain")
    with pytest.raises(SpecError, match=r"delta=0.5 is not allowed; delta applies to bm25l and bm25\+ only"):
        BM25(variant="okapi", delta=0.5)


def test_search_ranks_matching_documents_only(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    run = BM25().index(tiny_corpus).search(tiny_queries, k=2)
    by_query = {q: list(g["doc_id"]) for q, g in run.groupby("query_id")}
    # q1 "boundary layer flow": d1 holds all three terms in 5 words, d2 in 7 words.
    assert by_query["q1"] == ["d1", "d2"]
    # q2 "heat": d4 (4 terms) is shorter than d2 (7 terms); only these two hold "heat".
    assert by_query["q2"] == ["d4", "d2"]
    assert "q3" not in by_query  # out-of-vocabulary: no rows, not arbitrary documents
    assert by_query["q4"] == ["d3", "d2"]  # "cone" only in d3; d2 has "flow" twice
    assert list(run["rank"]) == [1, 2] * 3


def test_ties_at_the_cut_follow_the_documented_rule() -> None:
    corpus = pd.DataFrame({"doc_id": ["a", "c", "b", "e", "d"], "text": ["same words here"] * 5})
    run = BM25().index(corpus).search(pd.DataFrame({"query_id": ["q"], "text": ["words"]}), k=3)
    assert list(run["doc_id"]) == ["e", "d", "c"]  # equal scores: doc_id descending


def test_save_load_is_memory_mapped_and_identical(
    tmp_path: Path, tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame
) -> None:
    model = BM25(variant="lucene", k1=0.9, b=0.4).index(tiny_corpus)
    model.save(tmp_path / "idx")
    loaded = BM25.load(tmp_path / "idx")
    assert isinstance(loaded.counts_.tf, np.memmap)
    assert loaded.get_params() == model.get_params()
    pd.testing.assert_frame_equal(loaded.search(tiny_queries), model.search(tiny_queries))
    loaded.set_params(k1=1.5)  # re-weighting works on the memory-mapped counts
    pd.testing.assert_frame_equal(
        loaded.search(tiny_queries), BM25(variant="lucene", k1=1.5, b=0.4).index(tiny_corpus).search(tiny_queries)
    )


def test_clear_errors(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    with pytest.raises(NotFittedError, match="call index"):
        BM25().search(tiny_queries)
    model = BM25().index(tiny_corpus)
    with pytest.raises(UnknownDocumentError, match="document 'nope' is not in the index"):
        model.score("heat", ["d1", "nope"])
    with pytest.raises(
        ValueError, match=r"^search: k=.* is not allowed; k must be an int in \[1, 9223372036854775807\]$"
    ):
        model.search(tiny_queries, k=0)
    with pytest.raises(
        SpecError, match=r"variant='okapii' is not allowed; variant must be one of okapi, lucene, bm25l, bm25\+$"
    ):
        BM25(variant="okapii")
    only_stopwords = pd.DataFrame({"doc_id": ["a", "b"], "text": ["the of", "and"]})
    for retriever in (BM25(), RankBM25()):
        with pytest.raises(EmptyIndexError, match="no document keeps any term"):
            retriever.index(only_stopwords)
        with pytest.raises(EmptyIndexError, match="empty corpus"):
            retriever.index(only_stopwords.iloc[:0])


@pytest.mark.parametrize("variant", ["okapi", "bm25l", "bm25+"])
def test_rank_bm25_backend_gives_rank_bm25_scores(tiny_corpus: pd.DataFrame, variant: str) -> None:
    backend = RankBM25(variant=variant, k1=1.2, b=0.5).index(tiny_corpus)
    doc_ids, texts = document_texts(tiny_corpus)
    cls = {"okapi": rank_bm25.BM25Okapi, "bm25l": rank_bm25.BM25L, "bm25+": rank_bm25.BM25Plus}[variant]
    direct = cls(backend.analyzer_.tokenize_many(texts), k1=1.2, b=0.5)
    tokens = backend.analyzer_.tokenize("boundary flow flow heat")
    np.testing.assert_allclose(backend.score("boundary flow flow heat", doc_ids), direct.get_scores(tokens), atol=1e-12)


def test_rank_bm25_backend_and_bm25_agree_for_okapi(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    ours = BM25(variant="okapi").index(tiny_corpus).search(tiny_queries)
    theirs = RankBM25().index(tiny_corpus).search(tiny_queries)
    pd.testing.assert_frame_equal(ours[["query_id", "doc_id", "rank"]], theirs[["query_id", "doc_id", "rank"]])
    np.testing.assert_allclose(ours["score"], theirs["score"], atol=1e-12)


def test_missing_rank_bm25_names_the_extra(tiny_corpus: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rank_bm25", None)
    with pytest.raises(ImportError, match=r'pip install "rankscope\[rankbm25\]"'):
        RankBM25().index(tiny_corpus)


@pytest.mark.parametrize("pruned", [True, False])
def test_each_query_searched_on_threads_equals_its_search_alone(
    collection, pruned: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads claiming queries one at a time, each thread's workspace kept from query to query (MaxScore's
    window, or the dense accumulator of exhaustive scoring): every query's rows equal those of a search of that
    query alone, with a fresh workspace, so nothing a query leaves in a workspace reaches a later one."""
    model = BM25().index(collection.corpus)
    if not pruned:
        monkeypatch.setattr(BM25, "_term_bounds", lambda self: None)  # every posting into the dense accumulator
    monkeypatch.setenv(counts_retriever.THREADS_VARIABLE, "2")
    queries = collection.queries
    alone = [model.search(queries.iloc[[i]], k=20) for i in range(len(queries))]
    pd.testing.assert_frame_equal(model.search(queries, k=20), pd.concat(alone, ignore_index=True))


def test_coded_search_on_threads_holds_the_rows_of_one_thread(collection, monkeypatch: pytest.MonkeyPatch) -> None:
    """search_coded keeps positions, search looks doc ids up: on two threads both give one thread's rows."""
    model = BM25().index(collection.corpus)
    alone = model.search(collection.queries, k=15)
    monkeypatch.setenv(counts_retriever.THREADS_VARIABLE, "2")
    pd.testing.assert_frame_equal(model.search(collection.queries, k=15), alone)
    coded = model.search_coded(collection.queries, k=15)
    pd.testing.assert_frame_equal(coded.frame(), alone[["query_id", "doc_id", "score"]], check_dtype=False)


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_a_bad_thread_count_names_the_variable(
    tiny_corpus: pd.DataFrame, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = BM25().index(tiny_corpus)
    monkeypatch.setenv("RANKSCOPE_NUM_THREADS", value)
    with pytest.raises(ValueError, match="RANKSCOPE_NUM_THREADS must be a positive integer"):
        model.search(pd.DataFrame({"query_id": ["q"], "text": ["flow"]}))
