"""A six-document collection with real words, for workflow tests that need real retrievers but no corpus files."""

from __future__ import annotations

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
