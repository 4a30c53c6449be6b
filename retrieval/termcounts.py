"""Term counts of a corpus: the parameter-free part of a bag-of-words index.

Everything BM25 needs that does not depend on k1, b or delta: the vocabulary,
term-major postings (for each term, the documents holding it and how often),
document lengths and document frequencies. Keeping these lets a retriever
re-weight for new parameters without re-tokenising, and they are what is saved.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from rankscope.core.fileio import release_pages
from rankscope.core.progress import progress_slices
from rankscope.retrieval.analysis import Analyzer

if TYPE_CHECKING:
    import scipy.sparse as sp


@dataclass(frozen=True, eq=False)
class TermCounts:
    """Postings in CSR layout, term-major: documents of term ``t`` are
    ``postings[indptr[t]:indptr[t+1]]`` with counts ``tf[...]`` (ascending document positions)."""

    vocabulary: np.ndarray  # sorted index terms (object array of str)
    doc_ids: np.ndarray  # object array of str, in corpus order
    indptr: np.ndarray  # int64, n_terms + 1
    postings: np.ndarray  # int32 document positions
    tf: np.ndarray  # term counts: uint16, uint32 if one exceeds 65,535 (float64 in an index of format 1)
    doc_len: np.ndarray  # float64, index terms per document (after stopwords)

    @classmethod
    def build(cls, analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str]) -> TermCounts:
        """Tokenise ``texts`` once and count terms per document."""
        vocabulary, by_term, doc_len = count_postings(analyzer, texts, desc="indexing")
        return cls(
            vocabulary=np.asarray(vocabulary, dtype=object),
            doc_ids=np.asarray(doc_ids, dtype=object),
            indptr=by_term.indptr.astype(np.int64),
            postings=by_term.indices.astype(np.int32),
            tf=compact_counts(by_term.data),
            doc_len=doc_len.astype(np.float64),
        )

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    @property
    def n_terms(self) -> int:
        return len(self.vocabulary)

    @cached_property
    def df(self) -> np.ndarray:
        """Document frequency of each term."""
        return np.diff(self.indptr)

    @cached_property
    def term_index(self) -> dict[str, int]:
        """Term -> row of the postings; built on first use, as a loaded index may only ever re-weight."""
        return {term: i for i, term in enumerate(self.vocabulary)}

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """Doc id -> corpus position, for ``score`` (built on first use)."""
        return {doc: i for i, doc in enumerate(self.doc_ids)}

    @cached_property
    def doc_id_rank(self) -> np.ndarray:
        """Position of each document's id in byte order (the tie-break key)."""
        return doc_id_ranks(self.doc_ids)

    @cached_property
    def by_doc(self) -> sp.csr_matrix:
        """Documents x terms counts (document-major), for reading whole documents (feedback)."""
        import scipy.sparse as sp

        return sp.csr_matrix(self.matrix(self.tf.astype(np.float64)).T)

    @cached_property
    def collection_frequency(self) -> np.ndarray:
        """How often each term occurs in the whole corpus."""
        return np.bincount(np.repeat(np.arange(self.n_terms), self.df), weights=self.tf, minlength=self.n_terms)

    def doc_terms(self) -> list[dict[str, int]]:
        """Per-document ``{term: count}`` (the shape rank-bm25 keeps); slow, for reference backends."""
        by_doc = self.by_doc
        vocab = self.vocabulary
        return [
            dict(zip(vocab[by_doc.indices[a:b]], by_doc.data[a:b].astype(int).tolist()))
            for a, b in itertools.pairwise(by_doc.indptr)
        ]

    def matrix(self, values: np.ndarray) -> sp.csr_matrix:
        """A term x document CSR matrix with the postings' structure and the given values."""
        import scipy.sparse as sp

        return sp.csr_matrix((values, self.postings, self.indptr), shape=(self.n_terms, self.n_docs))

    def query_matrix(self, analyzer: Analyzer, texts: Sequence[str]) -> sp.csr_matrix:
        """Queries x terms, holding how often each known term occurs in each query."""
        term_ids, lengths, _ = encode(analyzer, texts, self.term_index, desc="analysing queries")
        matrix = _count_matrix(term_ids, lengths, self.n_terms).astype(np.float64)
        matrix.sum_duplicates()
        return matrix

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The fields as named arrays: what :func:`retrieval.storage.save_index` writes (counts compact,
        also those of an index of format 1)."""
        return {**{name: getattr(self, name) for name in _FIELDS}, "tf": compact_counts(self.tf)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> TermCounts:
        """Inverse of :meth:`to_arrays`; the arrays may stay memory-mapped. Checked by :meth:`check`."""
        missing = [name for name in _FIELDS if name not in arrays]
        if missing:
            raise ValueError(f"missing array(s) {missing}")
        counts = cls(**{name: arrays[name] for name in _FIELDS})
        counts.check()
        return counts

    def check(self) -> None:
        """Raise ValueError unless the arrays hold a consistent index (a saved one may be damaged or edited).

        Shapes and dtypes, offsets from 0 that never decrease, postings in range and ascending
        within a term, counts that are positive integers, document lengths that equal the sum
        of their counts, a sorted vocabulary and unique document ids: O(postings), no re-analysis.
        """
        import pandas as pd

        n_terms, n_docs = len(self.vocabulary), len(self.doc_ids)
        expected = {
            "indptr": (np.int64, n_terms + 1),
            "postings": (np.int32, None),
            "doc_len": (np.float64, n_docs),
        }
        for name, (dtype, length) in expected.items():
            array = getattr(self, name)
            if array.dtype != dtype or array.ndim != 1 or (length is not None and len(array) != length):
                raise ValueError(
                    f"{name} holds {array.dtype} {list(array.shape)}, expected {np.dtype(dtype)} of {length}"
                )
        if self.tf.dtype not in _COUNT_DTYPES or self.tf.ndim != 1:
            raise ValueError(f"tf holds {self.tf.dtype} {list(self.tf.shape)}, expected uint16, uint32 or float64")
        indptr, postings, tf = self.indptr, self.postings, self.tf
        if indptr[0] != 0 or indptr[-1] != len(postings) or len(tf) != len(postings) or (np.diff(indptr) < 0).any():
            raise ValueError("indptr must start at 0, never decrease and end at the number of postings (= of tf)")
        self._check_postings(n_docs)
        vocabulary = np.asarray(self.vocabulary, dtype=object)  # not str: one long term would widen every one
        if n_terms > 1 and not (vocabulary[1:] > vocabulary[:-1]).all():
            raise ValueError("vocabulary must be sorted without repeats")
        if len(pd.unique(np.asarray(self.doc_ids, dtype=object))) != n_docs:
            raise ValueError("doc_ids must be unique")

    def _check_postings(self, n_docs: int) -> None:
        """The checks of :meth:`check` that read every posting, :data:`SLICE` postings at a time (their
        pages given back after each), so checking a saved index of hundreds of millions of postings
        holds a few times 32 MB of temporaries, not several bytes per posting."""
        indptr, postings, tf = self.indptr, self.postings, self.tf
        term_starts = indptr[:-1][np.diff(indptr) > 0]  # where each term's postings begin, ascending
        lengths = np.zeros(n_docs, dtype=np.float64)
        last = -1  # the previous slice's last posting
        for start in range(0, len(postings), SLICE):
            stop = min(start + SLICE, len(postings))
            docs = np.asarray(postings[start:stop], dtype=np.int64)
            counts = tf[start:stop]
            if docs.min() < 0 or docs.max() >= n_docs:
                raise ValueError(f"postings must be document positions in [0, {n_docs})")
            ascending = np.diff(docs, prepend=last) > 0
            begin, end = np.searchsorted(term_starts, [start, stop])
            ascending[term_starts[begin:end] - start] = True  # a term's first posting follows nothing
            if not ascending.all():
                raise ValueError("postings must be ascending within each term")
            whole = counts.dtype.kind == "u" or (np.isfinite(counts).all() and (counts == np.floor(counts)).all())
            if not (whole and (counts >= 1).all()):
                raise ValueError("tf must hold positive whole counts")
            lengths += np.bincount(docs, weights=counts, minlength=n_docs)  # whole numbers: exact in any order
            last = int(docs[-1])
            release_pages(postings[start:stop], tf[start:stop])
        if not np.array_equal(lengths, self.doc_len):
            raise ValueError("doc_len must equal each document's sum of term counts")


def count_postings(
    analyzer: Analyzer, texts: Sequence[str], desc: str, chunk: int = 4096
) -> tuple[list[str], sp.csc_matrix, np.ndarray]:
    """Sorted vocabulary, term-major counts (documents x terms CSC: a column's documents ascending,
    repeats summed into counts) and kept tokens per text: the counting both :meth:`TermCounts.build`
    and the streaming builder (:mod:`retrieval.streaming`) do."""
    term_ids, doc_len, vocabulary = encode(analyzer, texts, None, chunk=chunk, desc=desc)
    by_term = _count_matrix(term_ids, doc_len, len(vocabulary)).tocsc()  # docs x terms, column = term
    by_term.sum_duplicates()  # tocsc keeps documents in order within a term; this merges repeats into counts
    return vocabulary, by_term, doc_len


def _count_matrix(term_ids: np.ndarray, lengths: np.ndarray, n_terms: int) -> sp.csr_matrix:
    """Texts x terms CSR with one entry of 1 per token (repeats not yet summed)."""
    import scipy.sparse as sp

    indptr = np.concatenate([[0], np.cumsum(lengths)])
    data = np.ones(len(term_ids), dtype=np.float32)
    return sp.csr_matrix((data, term_ids, indptr), shape=(len(lengths), n_terms))


SLICE = 1 << 22
"""Postings handled at a time by every pass over a whole index (the checks here, BM25 weighting in
:mod:`retrieval.bm25_weights`, the streaming merge in :mod:`retrieval.streaming`): their temporaries
stay a few times 32 MB at any index size, and a memory-mapped index is never resident whole."""

_FIELDS = ("vocabulary", "doc_ids", "indptr", "postings", "tf", "doc_len")
_COUNT_DTYPES = (np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.float64))  # float64: index format 1


def compact_counts(counts: np.ndarray) -> np.ndarray:
    """Whole counts as stored (index format 2): uint16, or uint32 if one exceeds 65,535 (a quarter and
    half of float64's 8 bytes; uint32 holds any count of a document under 4 billion tokens)."""
    if counts.dtype in (np.uint16, np.uint32):
        return counts
    wide = counts.size and counts.max() > np.iinfo(np.uint16).max
    return counts.astype(np.uint32 if wide else np.uint16)


def encode(
    analyzer: Analyzer,
    texts: Sequence[str],
    vocabulary: Mapping[str, int] | None,
    chunk: int = 4096,
    desc: str = "analysing",
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Term ids of every kept token (texts concatenated), kept tokens per text, and the vocabulary built.

    With ``vocabulary=None`` the vocabulary is built (sorted terms); otherwise
    tokens whose term is not in it are dropped (out-of-vocabulary query words)
    and the returned vocabulary is empty.
    Texts are analysed ``chunk`` at a time, their tokens coded without a Python string per token
    (:meth:`Analyzer.word_codes`), so memory follows the number of tokens times 4 bytes.
    On a terminal a bar named ``desc`` counts the texts done, one update per chunk.
    """
    found: dict[str, int] = {}  # when building: term -> id in order of first sight
    id_chunks, lengths = [], []
    for piece in progress_slices(texts, chunk, desc=desc, unit="text"):
        codes, per_text, distinct = analyzer.word_codes(piece)  # no Python object per token
        term_of, terms = analyzer.term_codes(distinct)  # Python work per distinct token only
        if vocabulary is None:
            term_ids = np.fromiter((found.setdefault(t, len(found)) for t in terms), dtype=np.int32, count=len(terms))
        else:
            term_ids = np.fromiter(map(vocabulary.get, terms, itertools.repeat(-1)), dtype=np.int32, count=len(terms))
        ids = np.append(term_ids, np.int32(-1))[term_of][codes]  # -1: a stopword (term_of -1) or an unknown term
        text_of = np.repeat(np.arange(len(per_text)), per_text)
        kept = ids >= 0
        lengths.append(np.bincount(text_of[kept], minlength=len(per_text)))
        id_chunks.append(ids[kept])
    all_ids = np.concatenate([np.empty(0, dtype=np.int32), *id_chunks])
    all_lengths = np.concatenate([np.empty(0, dtype=np.int64), *lengths]).astype(np.int64)
    if vocabulary is not None:
        return all_ids, all_lengths, []
    terms = sorted(found)
    sorted_id = np.empty(len(found), dtype=np.int32)
    sorted_id[np.fromiter(map(found.__getitem__, terms), dtype=np.int64, count=len(terms))] = np.arange(len(terms))
    return sorted_id[all_ids], all_lengths, terms


def doc_id_ranks(doc_ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Position of each id in byte order: the tie-break key of :mod:`retrieval.topk`.

    numpy orders ``str`` by code point, which is the byte order of their UTF-8 (the
    order of the reference, :func:`corpora.schema.sort_run`; tested in tests/test_tie_rule.py).
    """
    order = np.argsort(np.asarray(doc_ids, dtype=str), kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks
