"""rank-bm25 itself as a backend, for users who want its exact scores (``rank_bm25`` in specs).

Same parameters, analysis, candidates and tie rule as :class:`retrieval.bm25.BM25`,
but scores come from rank-bm25's ``BM25Okapi``, ``BM25L`` and ``BM25Plus``,
bugs included (its BM25L multiplies by tf once too often; its BM25Plus adds
``idf * delta`` for absent query terms too). It scores every document for each
query in Python, so it is slow: use it to reproduce results, not at scale.
Needs the ``rankbm25`` extra. The saved index holds the term counts, from which
rank-bm25's model is rebuilt on load (rank-bm25 only uses counts and lengths).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.extras import require_extra
from rankscope.core.progress import progress
from rankscope.retrieval.base import QueryInput, check_k, doc_positions, make_run, query_texts
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.bm25_weights import DEFAULT_DELTA
from rankscope.retrieval.params import changed
from rankscope.retrieval.registry import register
from rankscope.retrieval.topk import top_k

if TYPE_CHECKING:
    import pandas as pd


def _rank_bm25_model(
    variant: str, documents: list[list[str]], k1: float, b: float, delta: float | None, epsilon: float
) -> Any:
    rank_bm25 = require_extra("rank_bm25", "rankbm25", "the rank_bm25 retriever")
    if variant == "okapi":
        return rank_bm25.BM25Okapi(documents, k1=k1, b=b, epsilon=epsilon)
    if variant == "bm25l":
        return rank_bm25.BM25L(documents, k1=k1, b=b, delta=delta)
    return rank_bm25.BM25Plus(documents, k1=k1, b=b, delta=delta)


@register("rank_bm25")
class RankBM25(BM25):
    """rank-bm25's BM25Okapi (``okapi``), BM25L (``bm25l``) or BM25Plus (``bm25+``)."""

    parameters = tuple(
        p
        for p in changed(BM25.parameters, "variant", default="okapi", choices=("okapi", "bm25l", "bm25+"))
        if p.name not in BM25.query_side
    )
    """BM25's, but only the variants rank-bm25 has (it has no lucene), okapi by default, and no feedback."""

    def _fit(self) -> None:
        delta = DEFAULT_DELTA.get(self.variant) if self.delta is None else self.delta
        documents = [[term for term, n in doc.items() for _ in range(n)] for doc in self.counts_.doc_terms()]
        self.model_ = _rank_bm25_model(self.variant, documents, self.k1, self.b, delta, self.epsilon)

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """Top ``k`` per query among documents holding a query term, scored by rank-bm25."""
        self._check_fitted("model_")
        k = check_k(k)
        query_ids, texts = query_texts(queries)
        counts = self.counts_
        found_docs, found_scores = [], []
        tokenized = self.analyzer_.tokenize_many(texts)
        for tokens in progress(tokenized, desc="searching (rank-bm25)", total=len(tokenized), unit="query"):
            candidates = self._candidates(tokens)
            values = np.asarray(self.model_.get_scores(tokens), dtype=np.float64)[candidates]
            chosen = top_k(values, candidates, k, counts.doc_id_rank)
            found_docs.append(counts.doc_ids[candidates[chosen]])
            found_scores.append(values[chosen])
        return make_run(query_ids, found_docs, found_scores, ordered=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """rank-bm25's scores of the given documents (``get_batch_scores``)."""
        self._check_fitted("model_")
        positions = doc_positions(self.counts_.doc_index, doc_ids)
        tokens = self.analyzer_.tokenize(query)
        return np.asarray(self.model_.get_batch_scores(tokens, positions.tolist()), dtype=np.float64)

    def _candidates(self, tokens: list[str]) -> np.ndarray:
        counts = self.counts_
        terms = [counts.term_index[t] for t in set(tokens) if t in counts.term_index]
        if not terms:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate([counts.postings[counts.indptr[t] : counts.indptr[t + 1]] for t in terms]))
