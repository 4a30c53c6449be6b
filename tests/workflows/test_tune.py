"""tune on a small collection with the real BM25: every grid cell equals a freshly built BM25's score."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.corpora.dataset import Dataset
from rankscope.evaluation import evaluate
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.tune import search_depth, tune

WORDS = "wing flow shock boundary layer heat transfer pressure drag lift vortex jet nozzle plate cone".split()


def small_dataset() -> Dataset:
    rng = np.random.default_rng(3)
    corpus = {f"d{i:02d}": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 25)))) for i in range(40)}
    queries = {f"q{i}": " ".join(rng.choice(WORDS, size=3)) for i in range(12)}
    qrels = {q: {f"d{j:02d}": int(rng.integers(1, 3)) for j in rng.choice(40, size=4, replace=False)} for q in queries}
    return Dataset.from_dicts("small", corpus, queries, qrels)


def fresh_score(data: Dataset, spec: str, metric: str) -> pd.Series:
    run = make_retriever(spec).index(data.corpus).search(data.queries, k=search_depth(metric))
    return evaluate(data.qrels, run, [metric]).wide()[metric]


def test_grid_matches_fresh_indexes_and_cv_is_honest(tmp_path) -> None:
    data = small_dataset()
    result = tune(data, "bm25", "0.5:1.5:0.5", "0.25:0.75:0.25", "ndcg@5", folds=3, seed=1, out=tmp_path)
    assert result.grid[["k1", "b"]].values.tolist() == [[x, y] for x in (0.5, 1.0, 1.5) for y in (0.25, 0.5, 0.75)]
    for point, k1, b, mean in result.grid.itertuples(name=None):
        expected = fresh_score(data, f"bm25:k1={k1},b={b}", "ndcg@5")
        np.testing.assert_allclose(result.per_query[point].to_numpy(), expected.to_numpy(), atol=1e-12)
        assert mean == pytest.approx(expected.mean(), abs=1e-12)
    default = fresh_score(data, "bm25", "ndcg@5").mean()
    assert result.default["score"] == pytest.approx(default, abs=1e-12)
    best = int(np.argmax(result.grid["mean"].to_numpy()))
    assert result.best["score"] == result.grid.loc[best, "mean"]
    assert result.in_sample_gain == pytest.approx(result.grid.loc[best, "mean"] - default)
    # re-derive the cross-validated score: choose on the other folds, score the held-out fold
    held_out = []
    for fold in range(3):
        test = result.cv.folds.index[result.cv.folds == fold]
        train = result.per_query.drop(index=test)
        chosen = int(np.argmax(train.mean().to_numpy()))
        held_out += result.per_query.loc[test, chosen].tolist()
    assert result.cv.mean == pytest.approx(np.mean(held_out))
    assert result.cv_gain == pytest.approx(np.mean(held_out) - default)
    grid = pd.read_csv(tmp_path / "grid.csv")
    assert len(grid) == 9 and grid["mean"].tolist() == pytest.approx(result.grid["mean"].tolist())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cross_validated"]["gain"] == pytest.approx(result.cv_gain)
    assert summary["best"]["k1"] == result.best["k1"]
    for name in ("folds.csv", "heatmap.png", "report.md", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    assert any("k1=" in n for n in result.edge_notes()) == (result.best["k1"] in (0.5, 1.5))
    assert any("b=" in n for n in result.edge_notes()) == (result.best["b"] in (0.25, 0.75))
    text = result.to_text()
    assert f"in-sample gain {result.in_sample_gain:+.4f}" in text
    assert f"cross-validated gain {result.cv_gain:+.4f}" in text


def test_tune_refuses_retrievers_without_k1_and_b() -> None:
    with pytest.raises(RankscopeError, match="no k1 and b parameters"):
        tune(small_dataset(), "tfidf", "1", "0.5")


def test_tune_refuses_bad_grid_before_indexing() -> None:
    with pytest.raises(RankscopeError, match="--k1 '0.2:2.0'"):
        tune(small_dataset(), "bm25", "0.2:2.0")
