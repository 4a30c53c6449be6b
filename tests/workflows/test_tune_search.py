"""tune --search optuna: one TPE study per training fold (held-out queries never seen), seeded, same folds
and points as the grid; on a small space it finds the grid's optimum."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.workflows.options import Execution, Search  # noqa: E402
from rankscope.workflows.tune.crossval import assign_folds  # noqa: E402
from rankscope.workflows.tune.model_search import optuna_search  # noqa: E402
from rankscope.workflows.tune.result import heatmap_plot  # noqa: E402
from rankscope.workflows.tune.workflow import tune  # noqa: E402
from tests.needs import needs
from tests.workflows.tiny_collection import small_dataset  # noqa: E402

pytestmark = needs("optuna")


def test_each_folds_study_sees_only_its_training_queries() -> None:
    # 9 queries in 3 folds; fold 0's queries score 3x at x, the others -x: on all queries x = 9 is
    # best (mean x/3), but without fold 0 every x loses, so fold 0's study must choose x = 0
    space = {"x": list(range(10))}
    folds = assign_folds([f"q{i}" for i in range(9)], 3, seed=0)
    in_fold_0 = (folds == 0).to_numpy()

    def score(point: tuple[int, ...]) -> pd.Series:
        return pd.Series(np.where(in_fold_0, 3.0, -1.0) * point[0], index=folds.index)

    outcome = optuna_search(space, score, [folds], trials=20, seed=0)
    assert len(outcome.chosen) == 1 and outcome.chosen[0][0] == (0,)
    assert max(outcome.values, key=lambda p: outcome.values[p].mean()) == (9,)  # the in-sample study found it
    # folds 1 and 2 train on fold 0 (3x) and one other fold (-x): mean x, so they choose x = 9
    assert outcome.chosen[0][1] == outcome.chosen[0][2] == (9,)
    assert list(outcome.values) == sorted(outcome.values)


@pytest.mark.slow
def test_optuna_is_deterministic_and_finds_the_grid_optimum(tmp_path) -> None:
    data = small_dataset()
    params = {"k1": "0.5:1.5:0.5", "b": "0.25:0.75:0.25"}
    grid = tune(data, "bm25", metric="ndcg@5", folds=3, execution=Execution(seed=1), params=params)
    first = tune(
        data,
        "bm25",
        metric="ndcg@5",
        folds=3,
        execution=Execution(seed=1),
        params=params,
        search=Search("optuna", 20),
        out=tmp_path,
    )
    again = tune(
        data, "bm25", metric="ndcg@5", folds=3, execution=Execution(seed=1), params=params, search=Search("optuna", 20)
    )
    pd.testing.assert_frame_equal(first.grid, again.grid)
    pd.testing.assert_frame_equal(first.cv.choices, again.cv.choices)
    # the same points, folds and defaults as the grid: each scored point equals the grid's
    assert first.cv.folds.equals(grid.cv.folds) and first.default == grid.default
    for point, k1, b, mean in first.grid.itertuples(name=None):
        row = grid.grid.index[(grid.grid["k1"] == k1) & (grid.grid["b"] == b)].item()
        pd.testing.assert_series_equal(first.per_query[point], grid.per_query[row], check_names=False)
        assert mean == grid.grid.loc[row, "mean"]
    assert first.best == grid.best
    # each fold's choice is scored on its held-out queries only; none can beat the grid's best on the fold's training queries
    for fold, point, train_mean in first.cv.choices[["fold", "point", "train_mean"]].itertuples(index=False):
        test = first.cv.folds.index[first.cv.folds == fold]
        pd.testing.assert_series_equal(first.cv.held_out.loc[test], first.per_query.loc[test, point], check_names=False)
        assert train_mean <= grid.per_query.drop(index=test).mean().max() + 1e-12
    # 20 trials per study reach all 9 points here (12 reach 6): the fold choices are then the grid's too
    assert len(first.grid) == 9
    pd.testing.assert_series_equal(first.cv.held_out, grid.cv.held_out)
    assert first.to_dict()["search"] == {"method": "optuna", "sampler": "TPE", "studies": 16, "trials": 20, "seed": 1}
    # one study per fold of each of the 5 fold seeds, one on all queries
    assert "searched by optuna TPE (16 studies of 20 trials, 9 points scored)" in first.to_text()
    assert "a 3 x 3 grid (9 points)" in first.to_text()
    assert (tmp_path / "grid.csv").exists() and (tmp_path / "summary.json").exists()


def test_a_large_grid_is_searched_not_scored_whole() -> None:
    data = small_dataset()
    params = {"k1": "0.2:2.0:0.1", "b": "0.0:1.0:0.05"}  # 399 points, 4 x 3 trials: a true search
    one = tune(
        data, "bm25", metric="ndcg@5", folds=3, execution=Execution(seed=1), params=params, search=Search("optuna", 3)
    )
    two = tune(
        data, "bm25", metric="ndcg@5", folds=3, execution=Execution(seed=2), params=params, search=Search("optuna", 3)
    )
    assert len(one.grid) <= 12 and not one.grid[["k1", "b"]].equals(two.grid[["k1", "b"]])
    assert heatmap_plot(one) is None  # a search scores some points of the grid: no heatmap of holes


def test_bad_search_settings_are_refused_before_any_work() -> None:
    data = small_dataset()
    with pytest.raises(RankscopeError, match="--search must be one of grid, optuna"):
        tune(data, "bm25", search="random")
    with pytest.raises(RankscopeError, match="--trials must be at least 1"):
        tune(data, "bm25", search=Search("optuna", 0))
    with pytest.raises(RankscopeError, match="with --retrievers use the grid"):
        tune(data, ["bm25", "tfidf"], search="optuna")
    with pytest.raises(RankscopeError, match="--scheduler and --workers are for the grid"):
        tune(data, "bm25", search="optuna", execution=Execution(scheduler="local:2"))
