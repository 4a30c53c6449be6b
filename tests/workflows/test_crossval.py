"""Cross-validation over queries picks parameters on training folds only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.workflows.tune.crossval import (
    assign_folds,
    best_column,
    cross_validate,
    fold_seeds,
    repeated_cross_validate,
)
from rankscope.workflows.tune.grid import parse_range


def lucky_grid() -> pd.DataFrame:
    """'good' helps every query by 0.1; 'lucky' helps only q0, by 0.5, and wins in-sample.

    In-sample: lucky 0.625 > good 0.6 > default 0.5. With 2 folds of 2 queries,
    the fold holding q0 out trains on two plain queries and picks good (0.6 each on
    test); the other fold trains with q0, picks lucky, and scores 0.5 twice on its
    test queries. Held-out mean: (0.6 + 0.6 + 0.5 + 0.5) / 4 = 0.55, whatever the split.
    """
    return pd.DataFrame(
        {"default": [0.5] * 4, "good": [0.6] * 4, "lucky": [1.0, 0.5, 0.5, 0.5]},
        index=pd.Index(["q0", "q1", "q2", "q3"], name="query_id"),
    )


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_cv_gain_differs_from_in_sample_gain(seed: int) -> None:
    values = lucky_grid()
    assert best_column(values) == "lucky"
    cv = cross_validate(values, n_folds=2, seed=seed)
    assert cv.mean == pytest.approx(0.55)
    in_sample_gain = values["lucky"].mean() - values["default"].mean()
    assert in_sample_gain == pytest.approx(0.125)
    assert cv.mean - values["default"].mean() == pytest.approx(0.05)
    held_out_q0_fold = cv.folds["q0"]
    choice = cv.choices.set_index("fold")
    assert choice.loc[held_out_q0_fold, "point"] == "good"
    assert choice.loc[1 - held_out_q0_fold, "point"] == "lucky"
    assert choice["n_test"].tolist() == [2, 2]


def test_best_column_ties_go_to_first_in_grid_order() -> None:
    values = pd.DataFrame({"a": [0.2, 0.4], "b": [0.4, 0.2], "c": [0.1, 0.1]})
    assert best_column(values) == "a"


def test_folds_balanced_seeded_and_order_free() -> None:
    ids = [f"q{i}" for i in range(23)]
    folds = assign_folds(ids, 5, seed=3)
    assert sorted(folds.value_counts().tolist()) == [4, 4, 5, 5, 5]
    assert folds.equals(assign_folds(list(reversed(ids)), 5, seed=3))
    assert not folds.equals(assign_folds(ids, 5, seed=4))


def test_fold_count_checked() -> None:
    with pytest.raises(RankscopeError, match="at least 2"):
        assign_folds(["a", "b"], 1)
    with pytest.raises(RankscopeError, match="more than the 2 judged"):
        assign_folds(["a", "b"], 3)


def test_every_query_held_out_exactly_once() -> None:
    rng = np.random.default_rng(0)
    values = pd.DataFrame(rng.random((30, 6)), index=[f"q{i:02d}" for i in range(30)])
    cv = cross_validate(values, n_folds=5, seed=0)
    assert cv.held_out.notna().all()
    for fold, point in zip(cv.choices["fold"], cv.choices["point"]):
        test = cv.folds[cv.folds == fold].index
        train = values.drop(index=test)
        assert point == int(np.argmax(train.mean().to_numpy()))
        np.testing.assert_allclose(cv.held_out[test], values.loc[test, point])


def test_parse_range_inclusive() -> None:
    k1 = parse_range("0.2:2.0:0.1", "k1")
    b = parse_range("0.0:1.0:0.05", "b")
    assert len(k1) == 19 and len(b) == 21
    assert k1[0] == 0.2 and k1[-1] == 2.0 and 1.2 in k1.tolist()
    assert 0.75 in b.tolist() and b[-1] == 1.0
    assert parse_range("0.9", "k1").tolist() == [0.9]


@pytest.mark.parametrize(
    "text, message",
    [
        ("0.2:2.0:0.25", "whole number of steps"),
        ("1:0:0.1", "below start"),
        ("0:1:0", "step must be positive"),
        ("0:1", "start:stop:step"),
        ("0:x:0.1", "'x' is not a number"),
        ("0:inf:0.1", "not a finite number"),
    ],
)
def test_parse_range_refuses_bad_input(text: str, message: str) -> None:
    with pytest.raises(RankscopeError, match=message):
        parse_range(text, "k1")


def test_repeats_equal_independent_single_runs_with_their_seeds() -> None:
    """Repeated CV under seeds 3..6 is four single runs with those seeds: their means, their
    held-out values averaged per query, and the standard deviation of the four means."""
    rng = np.random.default_rng(0)
    ids = pd.Index([f"q{i}" for i in range(30)], name="query_id")
    values = pd.DataFrame(rng.uniform(size=(30, 6)), index=ids, columns=[f"p{j}" for j in range(6)])
    seeds = fold_seeds(3, 4)
    assert seeds == (3, 4, 5, 6)
    repeated = repeated_cross_validate(values, 5, seeds)
    singles = [cross_validate(values, 5, seed) for seed in seeds]
    for run, single in zip(repeated.runs, singles):
        pd.testing.assert_series_equal(run.held_out, single.held_out)
        pd.testing.assert_frame_equal(run.choices, single.choices)
    means = [single.mean for single in singles]
    assert repeated.means.tolist() == means and repeated.mean == pytest.approx(np.mean(means))
    assert repeated.spread == pytest.approx(np.std(means, ddof=1)) and repeated.spread > 0
    average = np.mean([single.held_out.to_numpy() for single in singles], axis=0)
    np.testing.assert_allclose(repeated.held_out.to_numpy(), average)
    assert repeated.held_out.mean() == pytest.approx(repeated.mean)
    assert repeated_cross_validate(values, 5, (3,)).spread is None


def test_fold_seeds_do_not_move_a_choice_every_fold_agrees_on() -> None:
    """Known truth: 'good' beats the rest on every query, so every fold of every seed picks it and
    the gain has no spread over seeds; on pure noise (no column truly better) the seeds disagree."""
    rng = np.random.default_rng(1)
    ids = pd.Index([f"q{i}" for i in range(40)], name="query_id")
    base = rng.uniform(size=40)
    values = pd.DataFrame({"default": base, "worse": base - 0.1, "good": base + 0.05}, index=ids)
    repeated = repeated_cross_validate(values, 5, fold_seeds(0, 5))
    assert repeated.spread == 0 and repeated.mean == pytest.approx(values["good"].mean())
    noise = pd.DataFrame(rng.uniform(size=(40, 20)), index=ids)
    assert repeated_cross_validate(noise, 5, fold_seeds(0, 5)).spread > 0.005
