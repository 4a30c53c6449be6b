"""Features of (query, document) pairs that rankscope computes itself, for the trained judge.

For each query, every asked document is scored at once by each lexical retriever
(:meth:`~rankscope.retrieval.base.Retriever.score`), and the query is searched once per retriever
for the document's rank and for the query's score distribution (its top 1,000 scores' mean and
spread: a z-score compares a pair with the rest of its query). Term features read the
analysed texts: the share of the query's terms the document holds (plain and IDF-weighted, in
the whole text and in the title alone), the share of the query's adjacent term pairs it holds,
its length and the query's. Every feature of a pair depends on the query text, the document and
the corpus only, never on which other pairs are asked with it, so a judge reading them keeps the
cache's promise (a pair's label does not depend on the batch). An empty text gives zeros, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

RETRIEVERS = {"bm25": "bm25", "tfidf": "tfidf", "rm3": "bm25:prf=rm3"}
"""The retrievers whose scores are features: name -> spec (``rm3``: BM25 with pseudo-relevance feedback)."""

SEARCH_DEPTH = 1000
"""How deep each query is searched: a document below it has rank ``SEARCH_DEPTH + 1``."""

NAMES: tuple[str, ...] = (
    *(f"{name}{suffix}" for name in RETRIEVERS for suffix in ("", "_z", "_log_rank")),
    "coverage",
    "idf_coverage",
    "title_idf_coverage",
    "bigram_coverage",
    "log_doc_length",
    "query_terms",
)


class Searched(NamedTuple):
    """What one retriever's search found for one query: ranks and scores by doc id, the scores' mean and spread."""

    ranks: dict[str, int]
    scores: dict[str, float]
    mean: float
    spread: float
    complete: bool
    """Fewer than the search depth found: every document it lacks matches no query term and scores 0."""


class PairFeatures:
    """The retrievers and term statistics of one corpus; :meth:`of_query` gives a query's feature rows."""

    def __init__(self, corpus: pd.DataFrame) -> None:
        from rankscope.retrieval.base import document_texts
        from rankscope.retrieval.registry import make_retriever

        self.retrievers: dict[str, Any] = {  # Retriever: retrieval is imported inside functions only
            name: make_retriever(spec).index(corpus) for name, spec in RETRIEVERS.items()
        }
        self.analyzer = self.retrievers["bm25"].analyzer_
        doc_ids, texts = document_texts(corpus)
        self.position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
        self.terms = [self.analyzer.tokenize(text) for text in texts]
        self.title_terms = [frozenset(self.analyzer.tokenize(str(title))) for title in corpus["title"]]
        document_frequency: dict[str, int] = {}
        for terms in self.terms:
            for term in set(terms):
                document_frequency[term] = document_frequency.get(term, 0) + 1
        self.n_docs = len(doc_ids)
        self.idf = {term: math.log((self.n_docs + 1) / (df + 0.5)) for term, df in document_frequency.items()}

    def knows(self, doc_id: str) -> bool:
        return doc_id in self.position

    def of_queries(self, asked: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
        """For each (query, doc_ids) asked (documents all in the corpus), one row of :data:`NAMES` per
        document; each retriever searches all the queries in one batch."""
        import pandas as pd

        texts = list(dict.fromkeys(query for query, _ in asked if query.strip()))
        table = pd.DataFrame({"query_id": [str(i) for i in range(len(texts))], "text": texts})
        searched = {
            name: _by_query(retriever.search(table, k=SEARCH_DEPTH), texts) if texts else {}
            for name, retriever in self.retrievers.items()
        }
        return [self._rows(query, doc_ids, searched) for query, doc_ids in asked]

    def _rows(self, query: str, doc_ids: Sequence[str], searched: dict[str, dict[str, Searched]]) -> np.ndarray:
        columns: list[np.ndarray] = []
        for name, retriever in self.retrievers.items():
            found = searched[name].get(query, Searched({}, {}, 0.0, 1.0, True))
            scores = np.array([found.scores.get(doc_id, np.nan) for doc_id in doc_ids], dtype=float)
            missing = np.flatnonzero(np.isnan(scores))
            if found.complete:
                scores[missing] = 0.0
            elif len(missing):  # below the search depth: scored by the retriever
                scores[missing] = retriever.score(query, [doc_ids[int(i)] for i in missing])
            columns += [
                scores,
                (scores - found.mean) / found.spread,
                np.log([found.ranks.get(doc_id, SEARCH_DEPTH + 1) for doc_id in doc_ids]),
            ]
        query_terms = list(dict.fromkeys(self.analyzer.tokenize(query)))
        query_idf = [self.idf.get(term, math.log(self.n_docs + 1)) for term in query_terms]
        bigrams = set(zip(query_terms, query_terms[1:]))
        term_rows = [self._terms(query_terms, query_idf, bigrams, self.position[doc_id]) for doc_id in doc_ids]
        features = np.column_stack([*columns, np.array(term_rows, dtype=float).reshape(len(doc_ids), 6)])
        return np.nan_to_num(features, nan=0.0, posinf=0.0, neginf=0.0)

    def _terms(
        self, query_terms: list[str], query_idf: list[float], bigrams: set[tuple[str, str]], position: int
    ) -> list[float]:
        terms = self.terms[position]
        held = set(terms)
        matched = [weight for term, weight in zip(query_terms, query_idf) if term in held]
        titled = [weight for term, weight in zip(query_terms, query_idf) if term in self.title_terms[position]]
        total = sum(query_idf) or 1.0
        pairs = set(zip(terms, terms[1:])) if bigrams else set()
        return [
            len(matched) / max(len(query_terms), 1),
            sum(matched) / total,
            sum(titled) / total,
            len(bigrams & pairs) / max(len(bigrams), 1),
            math.log1p(len(terms)),
            float(len(query_terms)),
        ]


def _by_query(run: pd.DataFrame, texts: list[str]) -> dict[str, Searched]:
    """Query text -> what its search found (the run's query ids are positions in ``texts``)."""
    hits: dict[str, tuple[dict[str, int], dict[str, float]]] = {}
    for position, doc_id, rank, score in zip(
        run["query_id"].tolist(), run["doc_id"].tolist(), run["rank"].tolist(), run["score"].tolist()
    ):
        ranks, scores = hits.setdefault(texts[int(position)], ({}, {}))
        ranks[doc_id], scores[doc_id] = rank, score
    found = {}
    for text, (ranks, scores) in hits.items():
        values = np.fromiter(scores.values(), dtype=float, count=len(scores))
        found[text] = Searched(
            ranks, scores, float(values.mean()), float(values.std()) or 1.0, len(ranks) < SEARCH_DEPTH
        )
    return found
