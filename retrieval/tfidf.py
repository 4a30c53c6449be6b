"""TF-IDF retrieval in two documented variants, scored with sparse matrix products.

- ``cosine`` (default, the better of the two on Cranfield and CISI, see
  ``docs/retrievers-dense-and-fusion.md``): the vector-space model of
  scikit-learn's ``TfidfVectorizer(sublinear_tf=True)``: weight (1 + ln tf) x idf
  with idf = ln((1 + N) / (1 + df)) + 1, document and query vectors L2-normalised,
  score = their cosine. The weighting is scikit-learn's own ``TfidfTransformer``
  applied to the shared analyzer's term counts.
- ``classic``: TF = term count / document length, IDF = ln(N / df),
  score(q, d) = sum over query terms t of TF(t, d) x IDF(t) x count of t in q.

Both keep the parameter-free term counts (:class:`retrieval.termcounts.TermCounts`),
so ``set_params(variant=...)`` re-weights without re-tokenising, and only those
counts are saved. Only documents sharing a term with the query are candidates.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rankscope.retrieval.analysis import ANALYZER
from rankscope.retrieval.counts_retriever import CountsRetriever
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import register

VARIANTS = ("cosine", "classic")


@register("tfidf")
class TfidfRetriever(CountsRetriever):
    """TF-IDF, ``variant="cosine"`` (scikit-learn's sublinear TF-IDF cosine) or ``"classic"``."""

    parameters = (
        Param("variant", str, "cosine", "cosine (scikit-learn's sublinear TF-IDF) or classic", choices=VARIANTS),
        ANALYZER,
    )

    def _fit(self) -> None:
        """Weight the stored counts for the current variant (terms x documents)."""
        counts = self.counts_
        if self.variant == "classic":
            idf = np.log(counts.n_docs / np.maximum(counts.df, 1))
            term_of_posting = np.repeat(np.arange(counts.n_terms), counts.df)
            values = counts.tf / counts.doc_len[counts.postings] * idf[term_of_posting]
            self.weights_ = counts.matrix(values)
            self.transformer_ = None
        else:
            from sklearn.feature_extraction.text import TfidfTransformer  # slow to import: only when used

            by_doc = counts.matrix(counts.tf).T.tocsr()
            transformer = TfidfTransformer(sublinear_tf=True).fit(by_doc)
            self.weights_ = sp.csr_matrix(transformer.transform(by_doc).T)
            self.transformer_ = transformer
        self.weights_.eliminate_zeros()  # terms in every document have classic idf 0: not a match

    def _query_weights(self, query_terms: sp.csr_matrix) -> sp.csr_matrix:
        """Cosine: the query's sublinear TF-IDF vector, as the documents'; classic: its term counts."""
        if self.transformer_ is None:
            return query_terms
        return sp.csr_matrix(self.transformer_.transform(query_terms))
