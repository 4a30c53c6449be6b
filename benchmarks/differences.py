"""Populations of per-query differences the interval benchmarks draw from (gate_margin.py,
confidence_sequence_coverage.py): real ones from the collections in ``RANKSCOPE_DATA`` and a synthetic
IR-like one."""

from __future__ import annotations

import numpy as np

from rankscope.evaluation import evaluate
from rankscope.retrieval.registry import make_retriever


def collection_differences(name: str) -> np.ndarray:
    """``tfidf - bm25`` on nDCG@10, per query of collection ``name``."""
    from rankscope.corpora import load_dataset

    data = load_dataset(name)
    values = []
    for spec in ("bm25", "tfidf"):
        run = make_retriever(spec).index(data.corpus).search(data.queries, k=100)
        values.append(evaluate(data.qrels, run, ["ndcg@10"]).per_query.set_index("query_id")["value"])
    return (values[1] - values[0]).dropna().to_numpy()


def synthetic_differences(size: int, seed: int) -> np.ndarray:
    """Half the queries unchanged, 30% small changes around +0.02, 20% large ones in [-0.7, 0.3] (skewed to losses)."""
    rng = np.random.default_rng(seed)
    kind = rng.random(size)
    return np.where(kind < 0.5, 0.0, np.where(kind < 0.8, rng.normal(0.02, 0.05, size), rng.uniform(-0.7, 0.3, size)))
