"""tune on a small collection with the real BM25: every grid cell equals a freshly built BM25's score."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.corpora.dataset import Dataset
from rankscope.evaluation import evaluate
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.options import Execution
from rankscope.workflows.tune.workflow import search_depth, tune
from tests.workflows.tiny_collection import small_dataset

GRID = {"k1": "0.5:1.5:0.5", "b": "0.25:0.75:0.25"}


def fresh_score(data: Dataset, spec: str, metric: str) -> pd.Series:
    run = make_retriever(spec).index(data.corpus).search(data.queries, k=search_depth(metric))
    return evaluate(data.qrels, run, [metric]).wide()[metric]


def test_grid_matches_fresh_indexes_and_cv_is_honest(tmp_path) -> None:
    data = small_dataset()
    result = tune(
        data,
        "bm25",
        params={"k1": "0.5:1.5:0.5", "b": "0.25:0.75:0.25"},
        metric="ndcg@5",
        folds=3,
        execution=Execution(seed=1),
        out=tmp_path,
    )
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
    # re-derive the cross-validated score under each of the 5 fold seeds (1..5), independently:
    # folds drawn by a seeded permutation, chosen on the other folds, scored on the held-out fold
    ids = sorted(result.per_query.index)
    seed_means = []
    for seed in range(1, 6):
        fold_of = pd.Series(0, index=ids)
        fold_of.iloc[np.random.default_rng(seed).permutation(len(ids))] = np.arange(len(ids)) % 3
        held_out = []
        for fold in range(3):
            test = fold_of.index[fold_of == fold]
            train = result.per_query.drop(index=test)
            chosen = int(np.argmax(train.mean().to_numpy()))
            held_out += result.per_query.loc[test, chosen].tolist()
        seed_means.append(np.mean(held_out))
    assert result.repeated.seeds == (1, 2, 3, 4, 5)
    assert result.cv.mean == pytest.approx(seed_means[0])  # the first fold seed is the execution's
    assert result.cv_gain == pytest.approx(np.mean(seed_means) - default)
    assert result.gain.seed_sd == pytest.approx(np.std(seed_means, ddof=1))
    assert result.gain.seed_gains == pytest.approx([m - default for m in seed_means])
    grid = pd.read_csv(tmp_path / "grid.csv")
    assert len(grid) == 9 and grid["mean"].tolist() == pytest.approx(result.grid["mean"].tolist())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cross_validated"]["gain"] == pytest.approx(result.cv_gain)
    timing = summary["timing"]  # indexed once in this process; each of the 9 points timed
    assert len(timing["index_seconds"]) == 1 and timing["grid_points"] == 9 == len(result.timing.point_s)
    spent = timing["grid_point_seconds"]
    assert 0 < spent["min"] <= spent["mean"] <= spent["max"] and spent["mean"] == pytest.approx(
        np.mean(result.timing.point_s)
    )
    assert f"a grid point {spent['mean']:.2f} s on average" in result.to_text()
    assert summary["best"]["k1"] == result.best["k1"]
    for name in ("folds.csv", "heatmap.svg", "report.md", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    assert any("k1=" in n for n in result.edge_notes()) == (result.best["k1"] in (0.5, 1.5))
    assert any("b=" in n for n in result.edge_notes()) == (result.best["b"] in (0.25, 0.75))
    text = result.to_text()
    assert f"in-sample gain {result.in_sample_gain:+.4f}" in text
    assert f"cross-validated gain {result.cv_gain:+.4f}" in text
    assert f"sd {result.gain.seed_sd:.4f} over 5 fold seeds" in text
    assert pd.read_csv(tmp_path / "fold_seeds.csv")["gain"].tolist() == pytest.approx(list(result.gain.seed_gains))


def test_tune_refuses_retrievers_without_k1_and_b() -> None:
    with pytest.raises(RankscopeError, match="no k1 and b parameters"):
        tune(small_dataset(), "tfidf", params={"k1": "1", "b": "0.5"})


def test_tune_refuses_bad_grid_before_indexing() -> None:
    with pytest.raises(RankscopeError, match="--k1 '0.2:2.0'"):
        tune(small_dataset(), "bm25", params={"k1": "0.2:2.0"})


def test_any_numeric_parameter_tunes_and_matches_fresh_retrievers() -> None:
    """RM3's fb_terms (an int) and weight on a 3 x 2 grid: every point equals a freshly built retriever."""
    data = small_dataset()
    params = {"fb_terms": "1:3:1", "weight": "0.2,0.8"}
    result = tune(data, "bm25:prf=rm3,fb_docs=3", metric="ndcg@5", folds=3, execution=Execution(seed=2), params=params)
    assert result.params == ["fb_terms", "weight"]
    assert result.grid[["fb_terms", "weight"]].values.tolist() == [[t, w] for t in (1, 2, 3) for w in (0.2, 0.8)]
    assert result.grid["fb_terms"].dtype.kind == "i"
    for point, terms, weight, _ in result.grid.itertuples(name=None):
        expected = fresh_score(data, f"bm25:prf=rm3,fb_docs=3,fb_terms={terms},weight={weight}", "ndcg@5")
        np.testing.assert_allclose(result.per_query[point].to_numpy(), expected.to_numpy(), atol=1e-12)
    assert result.default == {
        "fb_terms": 10,
        "weight": 0.5,
        "score": pytest.approx(fresh_score(data, "bm25:prf=rm3,fb_docs=3", "ndcg@5").mean(), abs=1e-12),
    }
    gain = result.gain
    assert gain.gain == pytest.approx(result.cv_gain, abs=1e-12) and gain.n_queries == len(result.per_query)
    assert gain.ci_low <= gain.gain <= gain.ci_high
    text = result.to_text()
    assert re.search(r"error bar on it {2,}95% CI \[", text) and "paired randomization test" in text
    # the summary lines align: the metric's column starts at one place, whatever the points' widths
    head = text.splitlines()[1:4]
    assert [line.split()[0] for line in head] == ["defaults", "best", "3-fold"]
    assert len({line.index("ndcg@5 ") for line in head}) == 1
    assert len({line.index("error bar on it") for line in text.splitlines() if "error bar" in line}) == 1


def test_hybrid_fusion_settings_tune_by_re_fusing() -> None:
    data = small_dataset()
    params = {"method": "rrf,combsum", "k": "10,60"}
    result = tune(data, "hybrid:retrievers=bm25+tfidf,depth=20", metric="ndcg@5", folds=2, params=params)
    assert result.grid[["method", "k"]].values.tolist() == [
        ["rrf", 10.0],
        ["rrf", 60.0],
        ["combsum", 10.0],
        ["combsum", 60.0],
    ]
    for point, method, k, _ in result.grid.itertuples(name=None):
        expected = fresh_score(data, f"hybrid:retrievers=bm25+tfidf,depth=20,method={method},k={k}", "ndcg@5")
        np.testing.assert_allclose(result.per_query[point].to_numpy(), expected.to_numpy(), atol=1e-12)
    # RRF's k changes nothing for CombSUM: the best k is on the edge, but no "widen k" note
    combsum = tune(data, "hybrid:retrievers=bm25+tfidf,depth=20", metric="ndcg@5", folds=2, params={"k": "10,60"})
    assert combsum.per_query[0].equals(combsum.per_query[1]) and combsum.best["k"] == 10.0
    assert combsum.edge_notes() == []


def test_hybrid_keeps_sub_runs_until_queries_depth_or_sub_retrievers_change() -> None:
    data = small_dataset()
    hybrid = make_retriever("hybrid:retrievers=bm25+tfidf,depth=20").index(data.corpus)
    calls = []
    for part in hybrid.retrievers_:
        original = part.search
        part.search = lambda queries, k, _search=original: calls.append(k) or _search(queries, k=k)
    first = hybrid.search(data.queries, k=5)
    hybrid.set_params(method="rrf", k=10.0)
    rrf_run = hybrid.search(data.queries, k=5)
    assert len(calls) == 2 and not first.equals(rrf_run)
    hybrid.retrievers_[0].set_params(k1=0.9)  # a changed sub-retriever is searched again
    hybrid.search(data.queries, k=5)
    hybrid.set_params(depth=10)
    hybrid.search(data.queries, k=5)
    assert calls == [20, 20, 20, 20, 10, 10]


def test_tune_refuses_unknown_parameters_and_fractional_counts() -> None:
    with pytest.raises(RankscopeError, match="has no fb_terms parameter to tune"):
        tune(small_dataset(), "tfidf", params={"fb_terms": "1:3:1"})
    with pytest.raises(RankscopeError, match="takes whole numbers, got 1.5"):
        tune(small_dataset(), "bm25:prf=rm3", params={"fb_terms": "1,1.5"})


def test_nested_choice_of_retriever_takes_each_ones_parameters() -> None:
    """bm25 takes k1 (fb_terms is not in effect without prf), RM3 takes both, tfidf neither."""
    data = small_dataset()
    specs = ["bm25", "bm25:prf=rm3,fb_docs=3", "tfidf"]
    params = {"k1": "1,1.5", "fb_terms": "1,2"}
    result = tune(data, specs, metric="ndcg@5", folds=3, execution=Execution(seed=4), params=params)
    rows = [
        tuple(None if pd.isna(v) else v for v in row) for row in result.grid[["retriever", "k1", "fb_terms"]].values
    ]
    assert rows == [
        ("bm25", 1.0, None),
        ("bm25", 1.5, None),
        *[("bm25:prf=rm3,fb_docs=3", k1, t) for k1 in (1.0, 1.5) for t in (1, 2)],
        ("tfidf", None, None),
    ]
    fresh = [
        "bm25:k1=1.0",
        "bm25:k1=1.5",
        *[f"bm25:prf=rm3,fb_docs=3,k1={k1},fb_terms={t}" for k1 in (1.0, 1.5) for t in (1, 2)],
        "tfidf",
    ]
    for point, spec in enumerate(fresh):
        expected = fresh_score(data, spec, "ndcg@5")
        np.testing.assert_allclose(result.per_query[point].to_numpy(), expected.to_numpy(), atol=1e-12)
    assert result.default["retriever"] == "bm25" and result.default["fb_terms"] is None
    assert result.default["score"] == pytest.approx(fresh_score(data, "bm25", "ndcg@5").mean(), abs=1e-12)
    chosen = result.fold_table()["retriever"].tolist()
    assert len(chosen) == 3 and set(chosen) <= set(specs)
    assert "3 retrievers' grids (7 points)" in result.to_text()
    with pytest.raises(RankscopeError, match="listed twice"):
        tune(data, ["bm25", "bm25"])


def test_a_retriever_object_is_tuned_like_its_spec_and_left_untouched() -> None:
    from rankscope.retrieval.bm25 import BM25

    data = small_dataset()
    given = BM25(k1=0.9, b=0.4, variant="okapi")
    before = given.get_params()
    by_object = tune(data, given, params=GRID, metric="ndcg@5", folds=3, execution=Execution(seed=1))
    by_spec = tune(
        data, "bm25:k1=0.9,b=0.4,variant=okapi", params=GRID, metric="ndcg@5", folds=3, execution=Execution(seed=1)
    )
    pd.testing.assert_frame_equal(by_object.grid, by_spec.grid)
    assert by_object.default["score"] == pytest.approx(fresh_score(data, given.spec(), "ndcg@5").mean(), abs=1e-12)
    assert by_object.retriever == given.spec() and "variant=okapi" in by_object.retriever
    assert given.get_params() == before and not hasattr(given, "analyzer_")  # never indexed nor re-parameterised
    with pytest.raises(RankscopeError, match="is a run: it has no retriever to index or tune"):
        tune(data, data.qrels.rename(columns={"relevance": "score"}))
