"""The anytime-valid confidence sequence of a paired difference (issue 43 item 4): Waudby-Smith & Ramdas's
formulas written out, coverage when looking after every label, and the stopping rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.differences import synthetic_differences  # the benchmarks' IR-like population
from rankscope.core.errors import RankscopeError
from rankscope.evaluation.confidence_sequence import (
    HIGHER,
    LOWER,
    OUT_OF_BUDGET,
    UNDECIDED,
    confidence_sequence,
    monitoring_coverage,
    stopping,
)


def written_out(d: list[float], alpha: float) -> list[tuple[float, float]]:
    """The predictable plug-in empirical-Bernstein sequence, one label at a time (WSR 2023, eq. (13)-(15))."""
    log_term = math.log(2 / alpha)
    mu_before, sigma2_before = 0.5, 0.25
    sum_x = sum_dev = sum_lam = sum_lam_x = sum_vpsi = 0.0
    low, high, found = 0.0, 1.0, []
    for t, value in enumerate(d, 1):
        x = (value + 1) / 2
        lam = min(math.sqrt(2 * log_term / (sigma2_before * t * math.log(1 + t))), 0.5)
        v = 4 * (x - mu_before) ** 2
        sum_lam += lam
        sum_lam_x += lam * x
        sum_vpsi += v * (-math.log(1 - lam) - lam) / 4
        centre, radius = sum_lam_x / sum_lam, (log_term + sum_vpsi) / sum_lam
        low, high = max(low, max(centre - radius, 0.0)), min(high, min(centre + radius, 1.0))
        found.append((2 * low - 1, 2 * high - 1))
        sum_x += x
        mu_before = (0.5 + sum_x) / (t + 1)
        sum_dev += (x - mu_before) ** 2
        sigma2_before = (0.25 + sum_dev) / (t + 1)
    return found


def test_the_sequence_is_the_written_out_formula() -> None:
    d = list(np.random.default_rng(4).uniform(-1, 1, 300) * np.random.default_rng(5).random(300))
    found = confidence_sequence(np.array(d), 0.05)
    expected = np.array(written_out(d, 0.05))
    np.testing.assert_allclose(found.low, expected[:, 0], atol=1e-12)
    np.testing.assert_allclose(found.high, expected[:, 1], atol=1e-12)
    assert np.all(np.diff(found.low) >= 0) and np.all(np.diff(found.high) <= 0)  # the running intersection
    assert found.high[-1] - found.low[-1] < 0.25  # it narrows: 300 labels of spread about 0.3


def test_looking_after_every_label_keeps_the_coverage() -> None:
    """300 sequences of 200 skewed differences: every interval held the mean in at least 95% of them
    (less 3 binomial standard errors), while Student's t looked at after every label (10th on) did far less."""
    found = monitoring_coverage(synthetic_differences(5000, 2), 200, 300, 0.05, seed=7)
    assert found["sequence"] >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 300)
    assert found["t_every_label"] < 0.8 < found["sequence"]
    assert found["wrong_side"] == 0.0


def test_the_stopping_rule_decides_a_clear_difference_and_says_what_an_unclear_one_would_take() -> None:
    better = stopping(np.full(40, 0.5), budget=100)
    assert (better.decision, better.labels, better.needed) == (HIGHER, 40, 40) and better.low > 0
    assert stopping(np.full(40, -0.5), budget=100).decision == LOWER
    rng = np.random.default_rng(9)
    d = rng.choice([-1.0, 0.0, 1.0], size=60, p=[0.3, 0.3, 0.4])
    unclear = stopping(d, budget=100_000)
    assert unclear.decision == UNDECIDED and unclear.low <= 0 <= unclear.high
    assert unclear.needed is not None and unclear.needed > 60
    assert stopping(d, budget=unclear.needed - 1).decision == OUT_OF_BUDGET
    assert stopping(d, budget=unclear.needed).decision == UNDECIDED
    more = np.concatenate([d, rng.choice([-1.0, 0.0, 1.0], size=4 * unclear.needed, p=[0.3, 0.3, 0.4])])
    assert stopping(more, budget=10**6).decision == HIGHER  # the projection was not wildly short
    tied = stopping(np.array([0.2, -0.2] * 10), budget=10**6)
    assert (tied.decision, tied.needed) == (OUT_OF_BUDGET, None)  # a difference of 0 is never decided


@pytest.mark.parametrize(
    ("values", "fragment"),
    [([0.1, 1.5], "label 2: difference 1.5 is not in [-1, 1]"), ([float("nan")], "label 1"), ([], "at least one")],
)
def test_values_outside_the_bounds_are_refused(values: list[float], fragment: str) -> None:
    with pytest.raises(RankscopeError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        confidence_sequence(np.array(values))
