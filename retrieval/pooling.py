"""Pooling word vectors into text vectors: mean, IDF-weighted mean and SIF.

A text is given as a row of a sparse count matrix over the embedding
vocabulary (words the model does not know are simply absent), so pooling a
whole corpus is two sparse-dense products instead of a Python loop.

- ``mean``: the average of the word vectors of the text's tokens (repeats count).
- ``idf``: the average weighted by idf(w) = ln((1 + N) / (1 + df(w))) + 1, the
  smoothed IDF of scikit-learn, so that a word in every document still counts a
  little and a word absent from the corpus (pretrained vectors) gets the largest weight.
- ``sif``: smooth inverse frequency (Arora, Liang and Ma 2017): the sum of
  a / (a + p(w)) v_w divided by the number of known tokens, with p(w) the word's
  share of all corpus tokens and a = 1e-3; then the projection on the first
  principal component of the *document* vectors (first right singular vector,
  uncentred, as in the paper's code) is removed from documents and queries alike.

Vectors are then L2-normalised so that an inner product is a cosine; a text with
no known word stays the zero vector and is reported as empty by the callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

POOLINGS = ("mean", "idf", "sif")
SIF_A = 1e-3
"""Arora et al.'s recommended smoothing parameter a."""


def word_weights(
    pooling: str,
    term_counts: np.ndarray,
    doc_freqs: np.ndarray,
    n_docs: int,
    total_tokens: int,
    a: float = SIF_A,
) -> np.ndarray:
    """Per-word weight, aligned with the embedding vocabulary.

    ``term_counts``/``doc_freqs`` are each word's occurrences and document
    frequency in the corpus; ``total_tokens`` counts every corpus token, known
    to the model or not (the denominator of p(w)).
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {list(POOLINGS)}, got {pooling!r}")
    if pooling == "mean":
        return np.ones(len(term_counts), dtype=np.float64)
    if pooling == "idf":
        return np.log((1.0 + n_docs) / (1.0 + np.asarray(doc_freqs, dtype=np.float64))) + 1.0
    probability = np.asarray(term_counts, dtype=np.float64) / max(total_tokens, 1)
    return a / (a + probability)


def pool(counts: sp.csr_matrix, vectors: np.ndarray, weights: np.ndarray, pooling: str) -> np.ndarray:
    """Unnormalised text vectors (float64), one row per row of ``counts``; empty rows are zero."""
    import scipy.sparse as sp

    weighted = sp.csr_matrix(counts.multiply(weights[np.newaxis, :]))
    summed = np.asarray(weighted @ np.asarray(vectors, dtype=np.float64))
    # SIF divides by the number of tokens; the means divide by the sum of their weights.
    source = counts if pooling == "sif" else weighted
    denominator = np.asarray(source.sum(axis=1), dtype=np.float64).ravel()
    safe = np.where(denominator > 0, denominator, 1.0)
    return summed / safe[:, np.newaxis]


def first_component(doc_vectors: np.ndarray) -> np.ndarray:
    """Unit first right singular vector of the (non-empty) document vectors, sign fixed for determinism."""
    rows = doc_vectors[np.any(doc_vectors != 0, axis=1)]
    if len(rows) == 0:
        return np.zeros(doc_vectors.shape[1], dtype=np.float64)
    # the top eigenvector of the d x d Gram matrix is the first right singular vector, without the n x d U
    _, eigenvectors = np.linalg.eigh(rows.T @ rows)
    component = eigenvectors[:, -1]
    pivot = int(np.argmax(np.abs(component)))
    return component if component[pivot] >= 0 else -component


def remove_component(vectors: np.ndarray, component: np.ndarray) -> np.ndarray:
    """``v - (v . u) u`` for every row (a new array)."""
    return vectors - np.outer(vectors @ component, component)


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; zero rows stay zero (never NaN)."""
    norms = np.linalg.norm(vectors, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    return vectors / safe[:, np.newaxis]
