"""The BM25 family (okapi, lucene, bm25l, bm25+) over stored term counts.

Fast because the index keeps the parameter-free counts (:mod:`retrieval.termcounts`)
and a term x document weight matrix derived from them: ``set_params(k1=, b=)``
recomputes only the weights (one vectorised pass over the postings), and a batch
of queries is scored as queries x terms (their term counts) times terms x
documents by a compiled kernel that visits only the matching documents' postings
and keeps the top k among those candidates (:mod:`retrieval.topk`).
Formulas: :mod:`retrieval.bm25_weights`. ``prf=rm3`` or ``prf=bo1`` expands each
query by pseudo-relevance feedback from the same counts (:mod:`retrieval.prf`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.retrieval import prf as feedback
from rankscope.retrieval.analysis import ANALYZER
from rankscope.retrieval.bm25_weights import DEFAULT_DELTA, VARIANTS, posting_weights
from rankscope.retrieval.counts_retriever import CountsRetriever
from rankscope.retrieval.params import Param, SpecError
from rankscope.retrieval.registry import register

if TYPE_CHECKING:
    import scipy.sparse as sp


@register("bm25")
class BM25(CountsRetriever):
    """BM25 with a choice of variant; ``delta`` applies to bm25l (default 0.5) and bm25+ (default 1.0).

    ``prf`` (``none``, ``rm3``, ``bo1``) adds pseudo-relevance feedback; ``fb_docs``, ``fb_terms``
    and ``weight`` (RM3 only: of the original query) left None take the method's defaults
    (:data:`retrieval.prf.DEFAULTS`).
    """

    variant = Param(str, "lucene", "the BM25 formula (docs/retrievers.md)", choices=VARIANTS)
    k1 = Param(float, 1.5, "term-frequency saturation", low=0)
    b = Param(float, 0.75, "document-length normalisation", low=0, high=1)
    delta = Param(
        float,
        None,
        "bm25l/bm25+ lower bound on a matching term's weight; None: 0.5 for bm25l, 1.0 for bm25+",
        low=0,
        optional=True,
    )
    epsilon = Param(float, 0.25, "okapi: negative IDFs are replaced by epsilon x mean IDF", low=0)
    analyzer = ANALYZER
    prf = feedback.PRF
    fb_docs = feedback.FB_DOCS
    fb_terms = feedback.FB_TERMS
    weight = feedback.WEIGHT
    query_side = frozenset(p.name for p in feedback.PARAMETERS)

    @classmethod
    def check_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The table's checks, then: ``delta`` only with a variant that has one."""
        checked = super().check_params(values)
        if checked["delta"] is not None and checked["variant"] not in DEFAULT_DELTA:
            raise SpecError(
                f"{cls.name}: delta={checked['delta']!r} is not allowed; delta applies to "
                f"{' and '.join(DEFAULT_DELTA)} only, not variant {checked['variant']!r}"
            )
        if "prf" in checked:
            feedback.check_applicable(checked, cls.name)
        return checked

    def effective_params(self) -> dict[str, Any]:
        """Parameters with the feedback defaults in effect filled in for those left None."""
        params = self.get_params()
        if params.get("prf", "none") != "none":
            params.update(feedback.settings(self.prf, self.fb_docs, self.fb_terms, self.weight))
        return params

    def _query_vectors(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Query term counts, expanded by feedback from a first pass with them when ``prf`` is set."""
        query_terms = super()._query_vectors(texts)
        if self.prf == "none":
            return query_terms
        return feedback.expand(
            self.prf,
            self.counts_,
            self.weights_,
            query_terms,
            self.analyzer_.tokenize_many(texts),
            **feedback.settings(self.prf, self.fb_docs, self.fb_terms, self.weight),
        )

    def _fit(self) -> None:
        self.weights_ = self.counts_.matrix(self.posting_weights())

    def posting_weights(self, term_idf: np.ndarray | None = None, avgdl: float | None = None) -> np.ndarray:
        """Weights of the postings of ``counts_``; a shard passes the whole corpus's idf and average
        length (:mod:`retrieval.sharded`), so they equal the whole index's."""
        delta = DEFAULT_DELTA.get(self.variant) if self.delta is None else self.delta
        return posting_weights(
            self.counts_, self.variant, self.k1, self.b, delta, self.epsilon, term_idf=term_idf, avgdl=avgdl
        )
