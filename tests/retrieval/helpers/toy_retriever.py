"""A small, correct third-party retriever: shared words between query and document, times ``weight``.

Not a test module: the tests load it from this file (``toy_module`` fixture), subclass it
to break one rule at a time, and copy it into a package they pip-install.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankscope.retrieval.base import Retriever, check_k, doc_positions, document_texts, make_run, query_texts
from rankscope.retrieval.params import Param
from rankscope.retrieval.storage import load_index, save_index


class Overlap(Retriever):
    """Score = weight x the number of distinct lower-cased words a document shares with the query."""

    parameters = (Param("weight", float, 1.0, "score multiplier", low=0, closed="neither"),)

    def index(self, corpus: pd.DataFrame) -> Overlap:
        doc_ids, texts = document_texts(corpus)
        self.doc_ids_ = np.asarray(doc_ids, dtype=object)
        self.words_ = [set(text.lower().split()) for text in texts]
        return self

    def _scores(self, text: str) -> np.ndarray:
        words = set(text.lower().split())
        return self.weight * np.array([len(words & doc) for doc in self.words_], dtype=np.float64)

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        self._check_fitted("words_")
        k = check_k(k)
        query_ids, texts = query_texts(queries)
        found_docs, found_scores = [], []
        for text in texts:
            scores = self._scores(text)
            matching = np.flatnonzero(scores > 0)
            found_docs.append(self.doc_ids_[matching])
            found_scores.append(scores[matching])
        run = make_run(query_ids, found_docs, found_scores)  # ordered by the tie rule, ranked 1..n
        return run[run["rank"] <= k].reset_index(drop=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        self._check_fitted("words_")
        positions = doc_positions({d: i for i, d in enumerate(self.doc_ids_)}, doc_ids)
        return self._scores(query)[positions]

    def save(self, directory: str | os.PathLike[str]) -> None:
        self._check_fitted("words_")
        texts = [" ".join(sorted(words)) for words in self.words_]
        save_index(directory, self.name, {"params": self.get_params()}, {"doc_ids": self.doc_ids_, "texts": texts})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Overlap:
        meta, arrays = load_index(directory, cls.name)
        retriever = cls(**meta["params"])
        retriever.doc_ids_ = np.asarray(arrays["doc_ids"], dtype=object)
        retriever.words_ = [set(text.split()) for text in arrays["texts"]]
        return retriever
