"""The BM25 family (okapi, lucene, bm25l, bm25+) over stored term counts.

Fast because the index keeps the parameter-free counts (:mod:`retrieval.termcounts`)
and a term x document weight matrix derived from them: ``set_params(k1=, b=)``
recomputes only the weights (one vectorised pass over the postings), and a batch
of queries is scored with one sparse product, queries x terms times terms x
documents, whose stored entries are exactly the matching documents; top-k is
then selected among those candidates only (:mod:`retrieval.topk`).
Formulas: :mod:`retrieval.bm25_weights`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from retrieval.analysis import Analyzer
from retrieval.base import check_k, make_run, query_texts
from retrieval.bm25_weights import DEFAULT_DELTA, VARIANTS, check_params, posting_weights
from retrieval.counts_retriever import CountsRetriever
from retrieval.registry import register
from retrieval.topk import top_k_rows

BATCH_CANDIDATES = 2_000_000
"""Upper bound on candidate scores held at once (about 24 MB): queries are scored in
batches whose summed posting-list lengths stay under it (one query may exceed it alone)."""


@register("bm25")
class BM25(CountsRetriever):
    """BM25 with a choice of variant; ``delta`` applies to bm25l (default 0.5) and bm25+ (default 1.0)."""

    variants: tuple[str, ...] = VARIANTS

    def __init__(
        self,
        variant: str = "lucene",
        k1: float = 1.5,
        b: float = 0.75,
        delta: float | None = None,
        epsilon: float = 0.25,
        analyzer: str | Analyzer = "english",
    ) -> None:
        check_params(variant, k1, b, delta, self.variants)
        self.variant = variant
        self.k1 = k1
        self.b = b
        self.delta = delta
        self.epsilon = epsilon
        self.analyzer = analyzer

    def _fit(self) -> None:
        delta = DEFAULT_DELTA.get(self.variant) if self.delta is None else self.delta
        weights = posting_weights(self.counts_, self.variant, self.k1, self.b, delta, self.epsilon)
        self.weights_ = self.counts_.matrix(weights)

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        """Top ``k`` matching documents per query (a query matching nothing gets no rows)."""
        self._check_fitted("weights_")
        k = check_k(k)
        query_ids, texts = query_texts(queries)
        query_terms = self.counts_.query_matrix(self.analyzer_, texts)
        doc_ids, rank = self.counts_.doc_ids, self.counts_.doc_id_rank
        found_docs: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        for start, stop in _batches(query_terms, self.counts_.df):
            scores = self._scores(query_terms[start:stop])
            positions, values = top_k_rows(scores, k, rank)
            found_docs.extend(doc_ids[p] for p in positions)
            found_scores.extend(values)
        return make_run(query_ids, found_docs, found_scores, ordered=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """BM25 scores of the given documents for one query text (0 where no term matches)."""
        self._check_fitted("weights_")
        positions = self._doc_positions(doc_ids)
        row = self._scores(self.counts_.query_matrix(self.analyzer_, [query]))
        return np.asarray(row[:, positions].toarray()[0], dtype=np.float64)

    def _scores(self, query_terms: sp.csr_matrix) -> sp.csr_matrix:
        return (query_terms @ self.weights_).tocsr()


def _batches(query_terms: sp.csr_matrix, df: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) row ranges whose candidate upper bounds (sum of query terms' df) fit the budget."""
    bound = (query_terms != 0).astype(np.int64) @ df.astype(np.int64)
    ends = np.cumsum(bound)
    cuts, start = [], 0
    while start < len(bound):
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + BATCH_CANDIDATES, side="right")), start + 1)
        cuts.append((start, stop))
        start = stop
    return cuts
