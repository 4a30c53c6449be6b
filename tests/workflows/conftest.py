"""Random judged runs for the property tests of the diagnosis (misses, headroom)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

Case = tuple[pd.DataFrame, pd.DataFrame]


def make_random_case(seed: int) -> Case:
    """Graded qrels (-1..3) and a run with tied scores and unjudged documents, 8 queries over 30 documents."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels, run = [], []
    for q in range(8):
        for d in rng.choice(docs, size=rng.integers(1, 12), replace=False):
            qrels.append((f"q{q}", d, int(rng.integers(-1, 4))))
        for d in rng.choice(docs, size=rng.integers(0, 25), replace=False):
            run.append((f"q{q}", d, float(rng.integers(0, 5))))
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
    )


@pytest.fixture()
def random_case() -> Callable[[int], Case]:
    """``random_case(seed) -> (qrels, run)``."""
    return make_random_case
