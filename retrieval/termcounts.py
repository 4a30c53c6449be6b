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

import numpy as np
import scipy.sparse as sp

from retrieval.analysis import Analyzer


@dataclass(frozen=True, eq=False)
class TermCounts:
    """Postings in CSR layout, term-major: documents of term ``t`` are
    ``postings[indptr[t]:indptr[t+1]]`` with counts ``tf[...]`` (ascending document positions)."""

    vocabulary: np.ndarray  # sorted index terms (object array of str)
    doc_ids: np.ndarray  # object array of str, in corpus order
    indptr: np.ndarray  # int64, n_terms + 1
    postings: np.ndarray  # int32 document positions
    tf: np.ndarray  # float64 term counts
    doc_len: np.ndarray  # float64, index terms per document (after stopwords)

    @classmethod
    def build(cls, analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str]) -> TermCounts:
        """Tokenise ``texts`` once and count terms per document."""
        term_ids, doc_pos, vocabulary = encode(analyzer, texts, None)
        n_docs, n_terms = len(texts), len(vocabulary)
        # doc-major matrix with one entry per token; sum_duplicates turns entries into counts
        by_doc = sp.csr_matrix(
            (np.ones(len(term_ids)), (doc_pos, term_ids)), shape=(n_docs, n_terms), dtype=np.float64
        )
        by_doc.sum_duplicates()
        by_term = by_doc.T.tocsr()
        by_term.sort_indices()
        return cls(
            vocabulary=np.asarray(vocabulary, dtype=object),
            doc_ids=np.asarray(doc_ids, dtype=object),
            indptr=by_term.indptr.astype(np.int64),
            postings=by_term.indices.astype(np.int32),
            tf=by_term.data,
            doc_len=np.bincount(doc_pos, minlength=n_docs).astype(np.float64),
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
        return {term: i for i, term in enumerate(self.vocabulary)}

    @cached_property
    def doc_index(self) -> dict[str, int]:
        return {doc: i for i, doc in enumerate(self.doc_ids)}

    @cached_property
    def doc_id_rank(self) -> np.ndarray:
        """Position of each document's id in byte order (the tie-break key)."""
        order = np.argsort(np.asarray(self.doc_ids, dtype=str), kind="stable")
        ranks = np.empty(self.n_docs, dtype=np.int64)
        ranks[order] = np.arange(self.n_docs)
        return ranks

    def doc_terms(self) -> list[dict[str, int]]:
        """Per-document ``{term: count}`` (the shape rank-bm25 keeps); slow, for reference backends."""
        by_doc = self.matrix(self.tf).T.tocsr()
        vocab = self.vocabulary
        return [
            dict(zip(vocab[by_doc.indices[a:b]], by_doc.data[a:b].astype(int).tolist()))
            for a, b in itertools.pairwise(by_doc.indptr)
        ]

    def matrix(self, values: np.ndarray) -> sp.csr_matrix:
        """A term x document CSR matrix with the postings' structure and the given values."""
        return sp.csr_matrix((values, self.postings, self.indptr), shape=(self.n_terms, self.n_docs))

    def query_matrix(self, analyzer: Analyzer, texts: Sequence[str]) -> sp.csr_matrix:
        """Queries x terms, holding how often each known term occurs in each query."""
        term_ids, query_pos, _ = encode(analyzer, texts, self.term_index)
        matrix = sp.csr_matrix(
            (np.ones(len(term_ids)), (query_pos, term_ids)), shape=(len(texts), self.n_terms), dtype=np.float64
        )
        matrix.sum_duplicates()
        return matrix

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> TermCounts:
        return cls(**{name: arrays[name] for name in _FIELDS})


_FIELDS = ("vocabulary", "doc_ids", "indptr", "postings", "tf", "doc_len")


def encode(
    analyzer: Analyzer, texts: Sequence[str], vocabulary: Mapping[str, int] | None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Term ids and text positions of every kept token, and the vocabulary.

    With ``vocabulary=None`` the vocabulary is built (sorted terms); otherwise
    tokens whose term is not in it are dropped (out-of-vocabulary query words).
    """
    split = [analyzer.split(text) for text in texts]
    term_of = analyzer.term_map(set(itertools.chain.from_iterable(split)))
    if vocabulary is None:
        terms = sorted({term for term in term_of.values() if term is not None})
        vocabulary = {term: i for i, term in enumerate(terms)}
    else:
        terms = list(vocabulary)
    token_id = {tok: vocabulary.get(term, -1) if term is not None else -1 for tok, term in term_of.items()}
    lengths = np.fromiter((len(toks) for toks in split), dtype=np.int64, count=len(split))
    ids = np.fromiter(
        (token_id[tok] for toks in split for tok in toks), dtype=np.int64, count=int(lengths.sum())
    )
    positions = np.repeat(np.arange(len(split), dtype=np.int64), lengths)
    keep = ids >= 0
    return ids[keep], positions[keep], terms
