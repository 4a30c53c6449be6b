"""TF-IDF: the classic variant against a hand computation, the cosine one against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from rankscope.corpora import load_dataset
from rankscope.retrieval.analysis import get_analyzer
from rankscope.retrieval.tfidf import TfidfRetriever, smooth_idf, sublinear_tfidf

FRUIT = pd.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4"],
        "title": ["", "", "", ""],
        "text": ["apple banana apple egg banana", "banana cherry egg", "cherry cherry date egg", "egg"],
    }
)


def test_classic_scores_equal_a_hand_computation() -> None:
    retriever = TfidfRetriever(variant="classic", analyzer="plain").index(FRUIT)
    run = retriever.search(pd.DataFrame({"query_id": ["q"], "text": ["apple cherry cherry egg"]}))
    # N = 4; df: apple 1, cherry 2, egg 4 (idf ln 1 = 0: no evidence). TF = count / length.
    expected = {
        "d1": (2 / 5) * math.log(4 / 1) * 1,  # apple, query count 1
        "d2": (1 / 3) * math.log(4 / 2) * 2,  # cherry, query count 2
        "d3": (2 / 4) * math.log(4 / 2) * 2,
    }
    assert dict(zip(run["doc_id"], run["score"])) == pytest.approx(expected, rel=1e-12)
    assert list(run["doc_id"]) == ["d3", "d1", "d2"]  # d4 holds only "egg" (idf 0): not a candidate
    np.testing.assert_allclose(retriever.score("apple cherry cherry egg", ["d4", "d2"]), [0.0, expected["d2"]])


def _sklearn_cosine(corpus: pd.DataFrame, queries: list[str], analyzer: str) -> np.ndarray:
    tokenize = get_analyzer(analyzer).tokenize
    texts = [f"{t}\n{x}" if t else x for t, x in zip(corpus["title"], corpus["text"])]
    vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True)
    docs = vectorizer.fit_transform(texts)
    return cosine_similarity(vectorizer.transform(queries), docs)


def _assert_cosine_matches_sklearn(corpus: pd.DataFrame, queries: pd.DataFrame, analyzer: str) -> None:
    retriever = TfidfRetriever(variant="cosine", analyzer=analyzer).index(corpus)
    expected = _sklearn_cosine(corpus, list(queries["text"]), analyzer)
    run = retriever.search(queries, k=len(corpus))
    doc_pos = {d: i for i, d in enumerate(corpus["doc_id"])}
    for qi, qid in enumerate(queries["query_id"]):
        found = run[run["query_id"] == qid]
        got = np.zeros(len(corpus))
        got[[doc_pos[d] for d in found["doc_id"]]] = found["score"]
        np.testing.assert_allclose(got, expected[qi], rtol=1e-10, atol=1e-12)
        assert (found["score"] > 0).all()  # only documents sharing a term are returned


def test_cosine_scores_equal_sklearn_on_a_small_corpus(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    _assert_cosine_matches_sklearn(tiny_corpus, tiny_queries, "english")
    _assert_cosine_matches_sklearn(
        FRUIT, pd.DataFrame({"query_id": ["a", "b"], "text": ["egg", "apple apple date"]}), "plain"
    )


@pytest.mark.slow
def test_cosine_scores_equal_sklearn_on_cranfield(data_dir) -> None:
    dataset = load_dataset(str(data_dir / "cranfield"))
    _assert_cosine_matches_sklearn(dataset.corpus, dataset.queries, "english")


def test_sublinear_tfidf_is_sklearns_transformer_bit_for_bit(data_dir) -> None:
    # rows of very different lengths (the norm is summed term after term, as sklearn's Cython
    # loop does), an empty row, and CISI's real counts: every weight and idf identical, not close
    rng = np.random.default_rng(7)
    lengths = [0, 1, 3, 40, 250]
    rows = [rng.choice(300, size=n, replace=False) for n in lengths]
    counts = sp.csr_matrix(
        (rng.integers(1, 9, size=sum(lengths)).astype(np.float64), np.concatenate(rows), np.cumsum([0, *lengths])),
        shape=(len(lengths), 300),
    )
    counts.sort_indices()
    cisi = TfidfRetriever().index(load_dataset(str(data_dir / "cisi")).corpus).counts_
    for matrix in (counts, cisi.by_doc):
        df = np.diff(matrix.tocsc().indptr)
        reference = TfidfTransformer(sublinear_tf=True).fit(matrix)
        idf = smooth_idf(df, matrix.shape[0])
        assert np.array_equal(idf, reference.idf_)
        ours, theirs = sublinear_tfidf(matrix, idf), sp.csr_matrix(reference.transform(matrix))
        assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
        assert np.array_equal(ours.data, theirs.data)
    assert sublinear_tfidf(counts, idf=np.ones(300))[0].nnz == 0  # the empty row stays empty


def test_changing_the_variant_reweights_the_stored_counts(
    tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame
) -> None:
    retriever = TfidfRetriever(variant="cosine").index(tiny_corpus)
    retriever.set_params(variant="classic")
    fresh = TfidfRetriever(variant="classic").index(tiny_corpus)
    pd.testing.assert_frame_equal(retriever.search(tiny_queries), fresh.search(tiny_queries))
    assert not retriever.search(tiny_queries).equals(TfidfRetriever().index(tiny_corpus).search(tiny_queries))


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="variant must be one of"):
        TfidfRetriever(variant="bm25")
    with pytest.raises(ValueError, match="variant must be one of"):
        TfidfRetriever().set_params(variant="okapi")


def test_scoring_on_two_threads_gives_the_same_run(
    tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = TfidfRetriever().index(tiny_corpus)
    whole = retriever.search(tiny_queries)
    monkeypatch.setenv("RANKSCOPE_NUM_THREADS", "2")
    pd.testing.assert_frame_equal(retriever.search(tiny_queries), whole)
    assert len(whole) > 0
