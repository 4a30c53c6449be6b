"""TF-IDF retrieval in two documented variants, scored with sparse matrix products.

- ``cosine`` (default, the better of the two on Cranfield and CISI, see
  ``docs/retrievers-dense-and-fusion.md``): the vector-space model of
  scikit-learn's ``TfidfVectorizer(sublinear_tf=True)``: weight (1 + ln tf) x idf
  with idf = ln((1 + N) / (1 + df)) + 1, document and query vectors L2-normalised,
  score = their cosine. The weighting is scikit-learn's ``TfidfTransformer``
  (``sublinear_tf=True``) applied to the shared analyzer's term counts, redone here
  operation for operation in numpy (:func:`sublinear_tfidf`, bit for bit the same
  weights, tested) because importing scikit-learn costs seconds, more than indexing.
- ``classic``: TF = term count / document length, IDF = ln(N / df),
  score(q, d) = sum over query terms t of TF(t, d) x IDF(t) x count of t in q.

Both keep the parameter-free term counts (:class:`retrieval.termcounts.TermCounts`),
so ``set_params(variant=...)`` re-weights without re-tokenising, and only those
counts are saved. Only documents sharing a term with the query are candidates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankscope.retrieval.analysis import ANALYZER
from rankscope.retrieval.counts_retriever import CountsRetriever
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import register

if TYPE_CHECKING:
    import scipy.sparse as sp

VARIANTS = ("cosine", "classic")


@register("tfidf")
class TfidfRetriever(CountsRetriever):
    """TF-IDF, ``variant="cosine"`` (scikit-learn's sublinear TF-IDF cosine) or ``"classic"``."""

    variant = Param(str, "cosine", "cosine (scikit-learn's sublinear TF-IDF) or classic", choices=VARIANTS)
    analyzer = ANALYZER

    def _fit(self) -> None:
        """Weight the stored counts for the current variant (terms x documents)."""
        import scipy.sparse as sp

        counts = self.counts_
        if self.variant == "classic":
            idf = np.log(counts.n_docs / np.maximum(counts.df, 1))
            term_of_posting = np.repeat(np.arange(counts.n_terms), counts.df)
            values = counts.tf / counts.doc_len[counts.postings] * idf[term_of_posting]
            self.weights_ = counts.matrix(values).copy()  # eliminate_zeros edits it: not the (read-only) saved postings
            self.idf_ = None
        else:
            self.idf_ = smooth_idf(counts.df, counts.n_docs)
            self.weights_ = sp.csr_matrix(sublinear_tfidf(counts.by_doc, self.idf_).T)
        self.weights_.eliminate_zeros()  # terms in every document have classic idf 0: not a match

    def _query_weights(self, query_terms: sp.csr_matrix) -> sp.csr_matrix:
        """Cosine: the query's sublinear TF-IDF vector, as the documents'; classic: its term counts."""
        if self.idf_ is None:
            return query_terms
        return sublinear_tfidf(query_terms, self.idf_)


def smooth_idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """scikit-learn's smoothed idf, ``ln((1 + N) / (1 + df)) + 1``, in its order of operations."""
    idf = np.full(len(df), n_docs + 1, dtype=np.float64)
    idf /= df.astype(np.float64) + 1.0
    np.log(idf, out=idf)
    idf += 1.0
    return idf


def sublinear_tfidf(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """Rows of term counts -> L2-normalised ``(1 + ln tf) x idf`` rows, as scikit-learn's
    ``TfidfTransformer(sublinear_tf=True).transform``: each row's squared norm summed in
    storage order, one term after the other, as its ``inplace_csr_row_normalize_l2`` does,
    so the weights are bitwise scikit-learn's. Rows of zeros stay zero."""
    import scipy.sparse as sp

    out = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    data = out.data
    np.log(data, out=data)
    data += 1.0
    data *= idf[out.indices]
    lengths = np.diff(out.indptr)
    squares = np.zeros(out.shape[0], dtype=np.float64)
    by_length = np.argsort(-lengths, kind="stable")  # the rows still summing at step j are a prefix
    longer = -lengths[by_length]  # ascending
    for j in range(int(lengths.max(initial=0))):
        rows = by_length[: np.searchsorted(longer, -j, side="left")]
        values = data[out.indptr[rows] + j]
        squares[rows] += values * values
    norms = np.sqrt(squares)
    norms[norms == 0.0] = 1.0
    data /= np.repeat(norms, lengths)
    return out
