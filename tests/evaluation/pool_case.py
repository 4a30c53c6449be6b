"""Test helper (not a test module): a pool whose leave-one-run-out answer is worked out by hand in
tests/evaluation/test_pool_bias.py: A alone found d2, B alone d3 (both relevant), C nothing relevant."""

from __future__ import annotations

import pandas as pd

QRELS = pd.DataFrame(
    [("q1", "d1", 1), ("q1", "d2", 1), ("q1", "d3", 1), ("q1", "d4", 0), ("q1", "d6", 0)],
    columns=["query_id", "doc_id", "relevance"],
)


def run(*docs: str) -> pd.DataFrame:
    return pd.DataFrame(
        [("q1", doc, float(len(docs) - i)) for i, doc in enumerate(docs)], columns=["query_id", "doc_id", "score"]
    )


RUNS = {"A": run("d1", "d2", "d9"), "B": run("d1", "d3", "d8"), "C": run("d5", "d6", "d1")}
