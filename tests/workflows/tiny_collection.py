"""Collections with real words for workflow tests that need real retrievers but no corpus files: six
handmade documents (DATA), and forty random ones over fifteen words (small_dataset)."""

from __future__ import annotations

import numpy as np

from rankscope.corpora.dataset import Dataset

TEXTS = {
    "d1": "wing flow over a flat plate",
    "d2": "boundary layer of the wing",
    "d3": "heat transfer in a supersonic flow",
    "d4": "shock waves and heat",
    "d5": "flat plate boundary layer flow",
    "d6": "structural loads on a wing",
}
QUERIES = {"q1": "wing flow", "q2": "heat transfer", "q3": "boundary layer plate"}
QRELS = {"q1": {"d1": 1, "d6": 1}, "q2": {"d3": 2, "d4": 1}, "q3": {"d5": 1, "d2": 1}}
DATA = Dataset.from_dicts("tiny", TEXTS, QUERIES, QRELS)

WORDS = "wing flow shock boundary layer heat transfer pressure drag lift vortex jet nozzle plate cone".split()


def small_dataset() -> Dataset:
    """Forty random documents over fifteen words, twelve queries with four judged documents each (seeded)."""
    rng = np.random.default_rng(3)
    corpus = {f"d{i:02d}": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 25)))) for i in range(40)}
    queries = {f"q{i}": " ".join(rng.choice(WORDS, size=3)) for i in range(12)}
    qrels = {q: {f"d{j:02d}": int(rng.integers(1, 3)) for j in rng.choice(40, size=4, replace=False)} for q in queries}
    return Dataset.from_dicts("small", corpus, queries, qrels)
