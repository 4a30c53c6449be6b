"""The simulation of recall beyond the pool (issue 45's must-show, reduced): on a small made-up collection
its counts are what the design says, and on Cranfield the intervals of R and of each system's
Recall@100 hold the full-judgment values about as often as they say (benchmarks/bench_recall_outside.py
runs the 200 repetitions; docs/recall.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankscope as rs
from rankscope.evaluation.recall_simulation import simulate
from rankscope.retrieval.registry import make_retriever

DOCS = [f"d{i:03d}" for i in range(80)]


def test_the_table_counts_what_was_drawn() -> None:
    rng = np.random.default_rng(0)
    qrels = pd.DataFrame(
        [(f"q{q}", doc, 1) for q in range(5) for doc in rng.choice(DOCS, 6, replace=False)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {
        name: pd.DataFrame(
            [(f"q{q}", doc, 40.0 - i) for q in range(5) for i, doc in enumerate(rng.permutation(DOCS)[:40])],
            columns=["query_id", "doc_id", "score"],
        )
        for name in ("a", "b")
    }
    result = simulate(qrels, runs, DOCS, (0.1,), depth=3, cutoff=20, repetitions=3, cuts=(10,), draws=200)
    table = result.table.set_index("figure")
    assert list(table.index) == [
        "R", "a recall@20", "a mean recall@20", "a pooled recall@20",
        "b recall@20", "b mean recall@20", "b pooled recall@20",
    ]  # fmt: skip
    assert table.loc["R", "intervals"] == 15  # 5 queries, 3 repetitions
    assert table.loc["a mean recall@20", "intervals"] == 3
    assert (table["covered"] <= table["intervals"]).all()
    assert np.allclose(table["coverage"], table["covered"] / table["intervals"])
    pooled = pd.concat(
        [run.groupby("query_id").head(3)[["query_id", "doc_id"]] for run in runs.values()]
    ).drop_duplicates()
    # a tenth of each query's unjudged documents, rounded up per query
    assert table.loc["R", "labels_per_query"] == pytest.approx(
        np.mean([np.ceil(0.1 * (len(DOCS) - n)) for n in pooled.groupby("query_id").size()])
    )


@pytest.mark.slow  # Cranfield indexed twice and 10 estimates: about 30 s
def test_on_cranfield_the_intervals_hold_the_truth(data_dir: Path) -> None:
    """10 samples of 10% outside the depth-10 pool of bm25 and tfidf: R's intervals and each system's
    per-query Recall@100 intervals hold the full-judgment value in at least 93% of the queries, and
    the pooled Recall@100 in at least 8 of the 10 repetitions."""
    data = rs.load_dataset(data_dir / "cranfield")
    queries = data.queries[data.queries["query_id"].isin(data.qrels["query_id"])]
    runs = {spec: make_retriever(spec).index(data.corpus).search(queries, k=1000) for spec in ("bm25", "tfidf")}
    table = simulate(data.qrels, runs, data.corpus["doc_id"], (0.1,), repetitions=10).table.set_index("figure")
    assert table.loc["R", "intervals"] == 10 * 225
    assert table.loc["R", "coverage"] >= 0.93
    for name in runs:
        assert table.loc[f"{name} recall@100", "coverage"] >= 0.93
        assert table.loc[f"{name} pooled recall@100", "covered"] >= 8
