"""``pisa``: BM25 on a PISA index (the engine compiled inside the ``pyterrier-pisa`` wheel; no Java).

PISA tokenises and stems the documents itself (``stemmer``: porter2, krovetz or none) and
removes stopwords from queries only (``stops``: Terrier's list, Lucene's or none), so its
document lengths count stopwords. Its BM25 (Robertson's, with k1 + 1 in the numerator and
idf = log((N - df + 0.5) / (df + 0.5)) floored at 1e-6, so a term in half the documents or more
weighs nothing) is scored in float32 by block-max WAND, which finds the exact top k.
``k1`` and ``b`` are given at query time: ``tune`` never re-indexes
(PISA derives per-k1/b score bounds once per setting, in milliseconds on these collections).
Install: ``pip install "rankscope[pisa]"`` (docs/engines.md).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.retrieval.counts_retriever import search_threads
from rankscope.retrieval.engines.common import EngineRetriever, Hits, engine_output
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import register

STEMMERS = ("porter2", "krovetz", "none")
STOPWORDS = ("terrier", "lucene", "none")
_INDEX_FILES: tuple[str, ...] = (
    "fwd",
    "fwd.doclex",
    "fwd.documents",
    "fwd.termlex",
    "fwd.terms",
    "fwd.urls",
    "inv.docs",
)
_INDEX_FILES += ("inv.freqs", "inv.sizes", "pt_meta.json")


@register("pisa")
class PisaRetriever(EngineRetriever):
    """BM25 by the PISA engine over its own index; ``k1``/``b`` at query time."""

    k1 = Param(float, 0.9, "term-frequency saturation (PISA's and Anserini's default 0.9)", low=0)
    b = Param(float, 0.4, "document-length normalisation (default 0.4)", low=0, high=1)
    stemmer = Param(str, "porter2", "PISA's stemmer, applied when indexing", choices=STEMMERS)
    stops = Param(str, "terrier", "stopwords removed from queries", choices=STOPWORDS)
    index_side = frozenset({"stemmer"})

    @classmethod
    def unavailable(cls) -> str | None:
        if importlib.util.find_spec("pyterrier_pisa") is None:
            return 'the pisa retriever needs pyterrier-pisa: pip install "rankscope[pisa]"'
        return None

    def _build(self, folder: Path, texts: Sequence[str]) -> None:
        pisa = _pisa()
        docs = ({"docno": str(i), "text": text} for i, text in enumerate(texts))
        with engine_output("PISA"):
            pisa.PisaIndex(str(folder), stemmer=self.stemmer, threads=1).indexer("text").index(docs)

    def _open(self) -> None:
        self.engine_: Any = None  # the PisaRetrieve transformer, made on first search

    def _index_files(self) -> list[Path]:
        return [self.engine_dir_ / name for name in _INDEX_FILES]

    def _hits(self, texts: Sequence[str], depth: int) -> list[Hits]:
        import pandas as pd

        queries = pd.DataFrame({"qid": [str(i) for i in range(len(texts))], "query": list(texts)})
        with engine_output("PISA"):
            engine = self._transformer()
            engine.num_results = depth
            engine.threads = search_threads()
            found = engine.transform(queries)
        rows = found["qid"].astype(int).to_numpy()
        positions = found["docno"].astype(np.int64).to_numpy()
        scores = found["score"].to_numpy(dtype=np.float64)
        order = np.argsort(rows, kind="stable")
        bounds = np.searchsorted(rows[order], np.arange(len(texts) + 1))
        return [(positions[order[a:b]], scores[order[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]

    def _transformer(self) -> Any:
        """The PISA transformer for the current ``k1``, ``b`` and ``stops`` (PISA re-prepares on a change)."""
        pisa = _pisa()
        if self.engine_ is None:
            index = pisa.PisaIndex(str(self.engine_dir_), stemmer=self.stemmer, threads=1)
            self.engine_ = pisa.PisaRetrieve(index, scorer="bm25", bm25_k1=self.k1, bm25_b=self.b, stops=self.stops)
        self.engine_.retr_args = {"bm25_k1": float(self.k1), "bm25_b": float(self.b)}
        self.engine_.stops = pisa.PisaStopwords(self.stops)
        return self.engine_


def _pisa() -> Any:
    """pyterrier_pisa, imported on first use (slow: it imports PyTerrier, which starts no JVM)."""
    import pyterrier_pisa

    return pyterrier_pisa
