"""Term counts: vocabulary, postings, lengths and query matrices on a hand-checked example."""

from __future__ import annotations

import numpy as np

from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.termcounts import TermCounts, encode


def test_counts_of_a_small_corpus() -> None:
    analyzer = Analyzer(stopwords=None, stemmer=None)
    counts = TermCounts.build(analyzer, ["a", "b", "c"], ["cat dog cat", "dog emu", ""])
    assert list(counts.vocabulary) == ["cat", "dog", "emu"]
    # term-major: cat -> doc 0 (2x); dog -> docs 0, 1; emu -> doc 1
    assert counts.indptr.tolist() == [0, 1, 3, 4]
    assert counts.postings.tolist() == [0, 0, 1, 1]
    assert counts.tf.tolist() == [2.0, 1.0, 1.0, 1.0]
    assert counts.doc_len.tolist() == [3.0, 2.0, 0.0]
    assert counts.df.tolist() == [1, 2, 1]
    query = counts.query_matrix(analyzer, ["dog dog yak", "yak", "emu cat"]).toarray()
    np.testing.assert_array_equal(query, [[0, 2, 0], [0, 0, 0], [1, 0, 1]])


def test_encode_drops_stopwords_and_counts_kept_tokens_per_text() -> None:
    analyzer = Analyzer()  # English stopwords, Snowball
    ids, lengths, vocabulary = encode(analyzer, ["the cats and the dogs", "of", "cats"], None, chunk=1)
    assert vocabulary == ["cat", "dog"]
    assert ids.tolist() == [0, 1, 0] and lengths.tolist() == [2, 0, 1]
    ids, lengths, vocabulary = encode(analyzer, ["dogs yaks"], {"cat": 0, "dog": 1}, chunk=1)
    assert ids.tolist() == [1] and lengths.tolist() == [1] and vocabulary == []


def test_doc_id_rank_is_byte_order() -> None:
    counts = TermCounts.build(Analyzer(), ["d2", "d10", "é", "D1"], ["x1", "x2", "x3", "x4"])
    # byte order: "D1" < "d10" < "d2" < "é"
    assert counts.doc_id_rank.tolist() == [2, 1, 3, 0]
