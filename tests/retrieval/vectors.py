"""Test helpers (not a test module): seeded vectors and exact search, for the dense retriever's tests and
the workflows' tests of approximate indexes."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd


def random_vectors(texts: list[str], dim: int = 24) -> np.ndarray:
    """A fixed random vector per text (seeded by the text), for approximate-search tests."""
    seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
    return np.vstack([np.random.default_rng(s).normal(size=dim) for s in seeds])


def brute_force(doc_vectors: np.ndarray, query_vectors: np.ndarray, doc_ids: list[str], k: int) -> list[list[str]]:
    """Exact top k per query by the tie rule (score descending, then doc_id descending)."""
    scores = query_vectors @ doc_vectors.T
    tops = []
    for row in scores:
        order = sorted(range(len(doc_ids)), key=lambda i: (-round(row[i], 9), [-ord(c) for c in doc_ids[i]]))
        tops.append([doc_ids[i] for i in order[:k]])
    return tops


def unit(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1."""
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def word2vec_training_hash(corpus: pd.DataFrame) -> str:
    """SHA-256 of the vectors a small Word2Vec trains on ``corpus``: equal in every process when training
    is deterministic (imported by a child process from this folder, so it imports nothing of tests')."""
    from rankscope.retrieval.word2vec import Word2VecRetriever

    retriever = Word2VecRetriever(epochs=5, vector_size=16).index(corpus)
    return hashlib.sha256(retriever.keyed_vectors_.vectors.tobytes()).hexdigest()
