"""BM25 family term weights, computed per posting from stored counts.

A document's score for a query is the sum, over query tokens (repeats count),
of the weight of that term in the document; documents without the term get 0.
With ``L = 1 - b + b * dl / avgdl`` (dl = index terms in the document):

========  ===========================================  ==============================================
variant   IDF                                          weight(t, d), tf > 0
========  ===========================================  ==============================================
okapi     log((N - df + 0.5) / (df + 0.5)); negative   idf * tf (k1 + 1) / (tf + k1 L)
          values replaced by epsilon * mean IDF
          (rank-bm25's BM25Okapi floor)
lucene    log(1 + (N - df + 0.5) / (df + 0.5))         idf * tf / (tf + k1 L)   (Lucene >= 8 drops k1 + 1)
bm25l     log((N + 1) / (df + 0.5))                    idf * (k1 + 1)(c + delta) / (k1 + c + delta), c = tf / L
bm25+     log((N + 1) / df)                            idf * (tf (k1 + 1) / (k1 L + tf) + delta)
========  ===========================================  ==============================================

bm25l and bm25+ follow Lv & Zhai (CIKM 2011, "When documents are very long,
BM25 fails!"): delta is added only for query terms the document contains.
rank-bm25 0.2.2 differs on both: its BM25L multiplies once more by tf, and its
BM25Plus adds ``idf * delta`` for every query term to every document, a
per-query constant plus a bonus for *missing* terms (see docs/retrievers.md).
"""

from __future__ import annotations

import numpy as np

from rankscope.core.fileio import release_pages
from rankscope.retrieval.termcounts import SLICE, TermCounts

VARIANTS = ("okapi", "lucene", "bm25l", "bm25+")
DEFAULT_DELTA = {"bm25l": 0.5, "bm25+": 1.0}
"""rank-bm25's defaults for delta; okapi and lucene have no delta."""


def idf(variant: str, df: np.ndarray, n_docs: int, epsilon: float = 0.25) -> np.ndarray:
    """Inverse document frequency of each term under ``variant``."""
    df = np.asarray(df, dtype=np.float64)
    if variant == "okapi":
        values = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        if len(values):
            values[values < 0] = epsilon * values.mean()
        return values
    if variant == "lucene":
        return np.log1p((n_docs - df + 0.5) / (df + 0.5))
    if variant == "bm25l":
        return np.log(n_docs + 1) - np.log(df + 0.5)
    if variant == "bm25+":
        return np.log((n_docs + 1) / df)
    raise ValueError(f"unknown BM25 variant {variant!r}; known: {', '.join(VARIANTS)}")


def posting_weights(
    counts: TermCounts,
    variant: str,
    k1: float,
    b: float,
    delta: float | None,
    epsilon: float,
    *,
    term_idf: np.ndarray | None = None,
    avgdl: float | None = None,
) -> np.ndarray:
    """Weight of every posting of ``counts`` (aligned with ``counts.postings``), computed a slice at a time.

    ``term_idf`` and ``avgdl`` default to those of ``counts``; a shard of a corpus passes the whole
    corpus's (:mod:`retrieval.sharded`), so its weights are the ones the whole index would hold.
    """
    if term_idf is None:
        term_idf = idf(variant, counts.df, counts.n_docs, epsilon)
    if avgdl is None:
        avgdl = counts.doc_len.mean() if counts.n_docs else 0.0
    length_norm = 1.0 - b + b * counts.doc_len / avgdl if avgdl > 0 else np.full(counts.n_docs, 1.0 - b)
    weights = np.empty(len(counts.postings), dtype=np.float64)
    for start in range(0, len(weights), SLICE):
        stop = min(start + SLICE, len(weights))
        first, last = np.searchsorted(counts.indptr, [start, stop - 1], side="right") - 1  # terms of the slice
        bounds = np.clip(counts.indptr[first : last + 2], start, stop)
        per_posting_idf = np.repeat(term_idf[first : last + 1], np.diff(bounds))
        norm = length_norm[counts.postings[start:stop]]
        tf = counts.tf[start:stop].astype(np.float64)  # stored compact (uint16/uint32)
        weights[start:stop] = _formula(variant, per_posting_idf, tf, norm, k1, delta)
        release_pages(counts.postings[start:stop], counts.tf[start:stop])  # a mapped index is not kept resident
    return weights


def _formula(
    variant: str, per_posting_idf: np.ndarray, tf: np.ndarray, norm: np.ndarray, k1: float, delta: float | None
) -> np.ndarray:
    if variant == "okapi":
        return per_posting_idf * (tf * (k1 + 1) / (tf + k1 * norm))
    if variant == "lucene":
        return per_posting_idf * (tf / (tf + k1 * norm))
    if variant == "bm25l":
        ctd = tf / norm
        return per_posting_idf * ((k1 + 1) * (ctd + delta) / (k1 + ctd + delta))
    return per_posting_idf * (delta + tf * (k1 + 1) / (k1 * norm + tf))
