"""A dataset's texts as analyzers see them, each analysed once for every system that analyses alike.

diagnose's two systems mostly share their analyzer (bm25 and tfidf both analyse with ``english``) and
explain and show mostly the same documents: the relevant documents both miss (recall failures) and the
documents in both top results (the drill-down's snippets, where one document also heads many queries).
:class:`Analysed` keeps, per analyzer, the queries' and documents' terms and the documents' words, so
each text is read and analysed once whichever system or query asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pandas as pd

from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.base import document_texts
from rankscope.retrieval.snippets import Words, texts_as_words

T = TypeVar("T")


class Analysed:
    """The texts of ``corpus`` and ``queries``, analysed on demand and kept per analyzer (equal analyzers,
    by their settings, share)."""

    def __init__(self, corpus: pd.DataFrame, queries: pd.DataFrame) -> None:
        self._corpus = corpus
        self._bodies = dict(zip(corpus["doc_id"], corpus["text"]))
        self._queries = dict(zip(queries["query_id"], queries["text"]))
        self._indexed: dict[str, str] | None = None
        self._kept: dict[tuple[str, Analyzer], dict[str, Any]] = {}

    def query_terms(self, query_ids: Iterable[str], analyzer: Analyzer) -> dict[str, set[str]]:
        """Each query's distinct terms (none for a query without a text)."""

        def analyse(ids: list[str]) -> list[set[str]]:
            return [set(terms) for terms in analyzer.tokenize_many(self._queries.get(q, "") for q in ids)]

        return self._each("query terms", query_ids, analyzer, analyse)

    def document_terms(self, doc_ids: Iterable[str], analyzer: Analyzer) -> dict[str, set[str]]:
        """Each document's distinct terms as a retriever indexes it (title and body); a document the corpus
        lacks is left out."""
        if self._indexed is None:
            self._indexed = dict(zip(*document_texts(self._corpus)))
        indexed = self._indexed

        def analyse(ids: list[str]) -> list[set[str]]:
            return [set(terms) for terms in analyzer.tokenize_many(indexed[d] for d in ids)]

        return self._each("document terms", [d for d in doc_ids if d in indexed], analyzer, analyse)

    def words(self, doc_ids: Iterable[str], analyzer: Analyzer) -> dict[str, Words]:
        """Each document's body as :class:`~rankscope.retrieval.snippets.Words` for its snippets (an empty
        text for a document the corpus lacks)."""
        return self._each(
            "words", doc_ids, analyzer, lambda ids: texts_as_words([self._bodies.get(d, "") for d in ids], analyzer)
        )

    def _each(
        self, kind: str, ids: Iterable[str], analyzer: Analyzer, analyse: Callable[[list[str]], list[T]]
    ) -> dict[str, T]:
        """``analyse`` of the ids not kept yet, then every id's value."""
        kept = self._kept.setdefault((kind, analyzer), {})
        wanted = list(dict.fromkeys(ids))
        new = [i for i in wanted if i not in kept]
        if new:
            kept.update(zip(new, analyse(new)))
        return {i: kept[i] for i in wanted}
