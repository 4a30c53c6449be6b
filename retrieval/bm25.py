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

from collections.abc import Mapping
from typing import Any

from rankscope.retrieval.analysis import ANALYZER
from rankscope.retrieval.bm25_weights import DEFAULT_DELTA, VARIANTS, posting_weights
from rankscope.retrieval.counts_retriever import CountsRetriever
from rankscope.retrieval.params import Param, SpecError
from rankscope.retrieval.registry import register


@register("bm25")
class BM25(CountsRetriever):
    """BM25 with a choice of variant; ``delta`` applies to bm25l (default 0.5) and bm25+ (default 1.0)."""

    parameters = (
        Param("variant", str, "lucene", "the BM25 formula (docs/retrievers.md)", choices=VARIANTS),
        Param("k1", float, 1.5, "term-frequency saturation", low=0),
        Param("b", float, 0.75, "document-length normalisation", low=0, high=1),
        Param(
            "delta",
            float,
            None,
            "bm25l/bm25+ lower bound on a matching term's weight; None: 0.5 for bm25l, 1.0 for bm25+",
            low=0,
            optional=True,
        ),
        Param("epsilon", float, 0.25, "okapi: negative IDFs are replaced by epsilon x mean IDF", low=0),
        ANALYZER,
    )

    @classmethod
    def check_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The table's checks, then: ``delta`` only with a variant that has one."""
        checked = super().check_params(values)
        if checked["delta"] is not None and checked["variant"] not in DEFAULT_DELTA:
            raise SpecError(
                f"{cls.name}: delta={checked['delta']!r} is not allowed; delta applies to "
                f"{' and '.join(DEFAULT_DELTA)} only, not variant {checked['variant']!r}"
            )
        return checked

    def _fit(self) -> None:
        delta = DEFAULT_DELTA.get(self.variant) if self.delta is None else self.delta
        weights = posting_weights(self.counts_, self.variant, self.k1, self.b, delta, self.epsilon)
        self.weights_ = self.counts_.matrix(weights)
