"""The error bar on a tuned gain, on differences small enough to work out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.workflows.tune.gain import gain_test


def _series(values: list[float]) -> pd.Series:
    return pd.Series(values, index=[f"q{i}" for i in range(len(values))])


def test_three_equal_gains_cannot_be_significant() -> None:
    """3 queries each +0.1: the exact sign-flip test finds 2 of 8 patterns as extreme (p = 0.25),
    every bootstrap resample has mean 0.1, and no test can go below 2/2**3."""
    result = gain_test(_series([0.6, 0.5, 0.4]), _series([0.5, 0.4, 0.3]))
    assert result.p_value == pytest.approx(0.25)
    assert (result.ci_low, result.ci_high) == pytest.approx((0.1, 0.1))
    assert result.gain == pytest.approx(0.1) and not result.significant
    assert result.verdict().startswith("within noise")
    assert "only 3 of 3 queries differ" in result.warning() and "0.2500" in result.warning()


def test_eight_differing_queries_of_ten_can_be_significant() -> None:
    """8 gains of +0.1 and 2 ties: 2**10 sign patterns, the 2**2 tie patterns times the observed
    and its mirror are as extreme: p = 8 / 1024; the smallest possible p is 2 / 2**8."""
    tuned = _series([0.2] * 8 + [0.5, 0.5])
    base = _series([0.1] * 8 + [0.5, 0.5])
    result = gain_test(tuned, base)
    assert result.p_value == pytest.approx(8 / 1024)
    assert result.smallest_p == pytest.approx(2 / 256) and result.warning() is None
    assert result.significant and result.verdict() == "more than noise: a real gain"
    assert result.n_differing == 8 and result.gain == pytest.approx(0.08)


def test_queries_are_paired_by_id_not_position() -> None:
    tuned = pd.Series([0.9, 0.1], index=["b", "a"])
    base = pd.Series([0.1, 0.9], index=["a", "b"])
    assert gain_test(tuned, base).n_differing == 0


def test_a_gain_whose_sign_changes_with_the_fold_seed_is_within_noise() -> None:
    """The same significant test over queries as above; one fold seed of three gave a loss."""
    tuned = _series([0.2] * 8 + [0.5, 0.5])
    base = _series([0.1] * 8 + [0.5, 0.5])
    steady = gain_test(tuned, base, seed_gains=[0.07, 0.08, 0.09])
    assert steady.verdict() == "more than noise: a real gain"
    assert (
        steady.seed_sd == pytest.approx(0.01) and steady.spread() == "sd 0.0100 over 3 fold seeds (+0.0700 to +0.0900)"
    )
    flipping = gain_test(tuned, base, seed_gains=[0.12, 0.13, -0.01])
    assert flipping.significant and not flipping.seed_stable
    assert flipping.verdict() == "within noise: the gain's sign changes with the fold seed"
    assert flipping.to_dict()["seed_gains"] == [0.12, 0.13, -0.01]
    assert gain_test(tuned, base).seed_sd is None and gain_test(tuned, base).spread() == ""
