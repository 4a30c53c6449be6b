"""Qrels and runs of systems of known quality, for workflow tests that need significant differences
without indexing anything: each system puts a query's relevant documents in its top ranks with its
own probability."""

from __future__ import annotations

import numpy as np
import pandas as pd


def qrels_and_runs(quality: dict[str, float], queries: int = 40, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Qrels (5 relevant documents per query among 30) and one run per system (all 30 ranked): a
    relevant document goes to the top with the system's ``quality`` probability, else anywhere."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {name: [] for name in quality}
    for q in range(queries):
        docs = [f"d{q}_{i}" for i in range(30)]
        relevant = docs[:5]
        qrels += [(f"q{q}", doc, 1) for doc in relevant]
        for name, p in quality.items():
            keys = rng.random(30) + np.where((np.arange(30) < 5) & (rng.random(30) < p), -1.0, 0.0)
            order = np.argsort(keys)
            runs[name] += [(f"q{q}", docs[i], float(30 - r), r + 1) for r, i in enumerate(order)]
    columns = ["query_id", "doc_id", "score", "rank"]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        {name: pd.DataFrame(rows, columns=columns) for name, rows in runs.items()},
    )
