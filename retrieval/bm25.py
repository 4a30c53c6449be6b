"""The BM25 family (okapi, lucene, bm25l, bm25+) over stored term counts.

Fast because the index keeps the parameter-free counts (:mod:`retrieval.termcounts`)
and a term x document weight matrix derived from them: ``set_params(k1=, b=)``
recomputes only the weights (one vectorised pass over the postings), and a batch
of queries is scored as queries x terms (their term counts) times terms x
documents by a compiled kernel that visits only the matching documents' postings
and keeps the top k among those candidates (:mod:`retrieval.topk`).
Formulas: :mod:`retrieval.bm25_weights`.
"""

from __future__ import annotations

from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.bm25_weights import DEFAULT_DELTA, VARIANTS, check_params, posting_weights
from rankscope.retrieval.counts_retriever import CountsRetriever
from rankscope.retrieval.registry import register


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
