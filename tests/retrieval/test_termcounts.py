"""Term counts: vocabulary, postings, lengths and query matrices on a hand-checked example."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rankscope.retrieval import termcounts
from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.termcounts import TermCounts, encode


def test_counts_of_a_small_corpus() -> None:
    analyzer = Analyzer(stopwords=None, stemmer=None)
    counts = TermCounts.build(analyzer, ["a", "b", "c"], ["cat dog cat", "dog emu", ""])
    assert list(counts.vocabulary) == ["cat", "dog", "emu"]
    # term-major: cat -> doc 0 (2x); dog -> docs 0, 1; emu -> doc 1
    assert counts.indptr.tolist() == [0, 1, 3, 4]
    assert counts.postings.tolist() == [0, 0, 1, 1]
    assert counts.tf.tolist() == [2, 1, 1, 1] and counts.tf.dtype == np.uint16  # stored compact (format 2)
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


def test_counts_are_compact_and_float64_counts_of_format_1_are_checked_as_before() -> None:
    counts = TermCounts.build(Analyzer(stopwords=None, stemmer=None), ["a", "b"], ["cat " * 70_000, "cat dog"])
    assert counts.tf.dtype == np.uint32 and counts.tf.tolist() == [70_000, 1, 1]  # beyond uint16
    old = dataclasses.replace(counts, tf=counts.tf.astype(np.float64))
    old.check()  # a format-1 index: float64 whole counts are valid
    assert old.to_arrays()["tf"].dtype == np.uint32  # and saved compact
    for bad in (np.array([70_000.0, 0.5, 1.5]), np.array([70_000.0, np.nan, 1.0])):
        with pytest.raises(ValueError, match="tf must hold positive whole counts"):
            dataclasses.replace(counts, tf=bad).check()
    with pytest.raises(ValueError, match="tf holds int64"):
        dataclasses.replace(counts, tf=counts.tf.astype(np.int64)).check()


@pytest.mark.parametrize("slice_size", [1, 2, 3, 4, 100])
def test_check_reads_postings_in_slices_and_finds_each_fault_at_any_boundary(
    monkeypatch: pytest.MonkeyPatch, slice_size: int
) -> None:
    monkeypatch.setattr(termcounts, "SLICE", slice_size)
    docs = ["cat dog cat", "dog emu", "", "cat emu emu"]
    counts = TermCounts.build(Analyzer(stopwords=None, stemmer=None), ["a", "b", "c", "d"], docs)
    # cat -> docs 0, 3; dog -> 0, 1; emu -> 1, 3: dog's 0 after cat's 3 is a new term, not a descent
    assert (counts.indptr.tolist(), counts.postings.tolist()) == ([0, 2, 4, 6], [0, 3, 0, 1, 1, 3])
    counts.check()
    faults = {
        "ascending within each term": {"postings": np.array([3, 0, 0, 1, 1, 3], dtype=np.int32)},
        "repeated doc in a term": {"postings": np.array([0, 3, 0, 1, 3, 3], dtype=np.int32)},
        "document positions in": {"postings": np.array([0, 3, 0, 1, 1, 4], dtype=np.int32)},
        "positive whole counts": {"tf": np.array([2, 1, 1, 1, 1, 0], dtype=np.uint16)},
        "sum of term counts": {"doc_len": np.array([3.0, 2.0, 0.0, 4.0])},
    }
    messages = {"repeated doc in a term": "ascending within each term"}
    for fault, change in faults.items():
        with pytest.raises(ValueError, match=messages.get(fault, fault)):
            dataclasses.replace(counts, **change).check()
