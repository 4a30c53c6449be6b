"""Finite-population PPI and cross-fitted PPI++: equal to the formula written out query by query, exactly
unbiased and with an exactly unbiased variance over every possible sample of a small population, exact
when every query is labelled; the coverage warning follows the simulation's table."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t

from rankscope.core.errors import RankscopeError
from rankscope.evaluation import ppi_simulation
from rankscope.evaluation.ppi import coverage_warning, ppi_intervals, ppipp_mean
from rankscope.evaluation.ppi_finite import crossfit_lambda, finite_ppi_mean
from tests.evaluation.finite_reference import finite_interval, leave_one_out_slopes

TOL = 1e-12


def _population(seed: int, size: int, judge: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.beta(2, 3, size)
    f = {
        "good": np.clip(y + rng.normal(0.1, 0.1, size), 0, 1),
        "anti": 1 - y,  # PPI++'s weight clips at 0
        "shrunk": 0.3 * y,  # the slope is over 1: clipped at 1
        "constant": np.full(size, 0.4),
    }[judge]
    return y, f


@pytest.mark.parametrize("judge", ["good", "anti", "shrunk", "constant"])
@pytest.mark.parametrize(("n", "size"), [(2, 9), (3, 9), (7, 40), (25, 60), (60, 60)])
def test_equal_to_the_written_out_formula(judge: str, n: int, size: int) -> None:
    y, f = _population(n + size, size, judge)
    for lam in (1.0, None, 0.0):
        interval, weight = finite_ppi_mean(y[:n], f[:n], f[n:], lam=lam, confidence=0.9)
        expected = finite_interval(y[:n], f[:n], f[n:], lam, confidence=0.9)
        assert (float(interval.estimate), float(interval.low), float(interval.high)) == pytest.approx(expected, abs=TOL)
    slopes = crossfit_lambda(y[:n], f[:n])
    assert slopes == pytest.approx(leave_one_out_slopes(y[:n], f[:n]), abs=TOL)
    if judge in ("anti", "constant") or n == 2:
        assert set(slopes) == {0.0}
    elif judge == "shrunk":
        assert set(slopes) == {1.0}


def _every_sample(y: np.ndarray, f: np.ndarray, n: int, lam: float | None) -> pd.DataFrame:
    """The estimate and interval from every one of the C(M, n) samples (each with its queries first)."""
    rows = []
    for chosen in itertools.combinations(range(len(y)), n):
        rest = [i for i in range(len(y)) if i not in chosen]
        interval, _ = finite_ppi_mean(y[list(chosen)], f[list(chosen)], f[rest], lam=lam)
        rows.append((float(interval.estimate), float(interval.low), float(interval.high)))
    return pd.DataFrame(rows, columns=["estimate", "low", "high"])


@pytest.mark.parametrize("judge", ["good", "anti"])
def test_exactly_unbiased_over_every_sample(judge: str) -> None:
    """Over all 126 samples of 4 of 9 queries, the mean estimate is the population mean to 1e-12, for PPI and
    for the cross-fitted PPI++; ppi-python's PPI++, its weight fitted on the queries it corrects, is off."""
    y, f = _population(1, 9, judge)
    truth = y.mean()
    for lam in (1.0, None):
        assert _every_sample(y, f, 4, lam)["estimate"].mean() == pytest.approx(truth, abs=TOL)
    if judge == "good":
        biased = [
            float(ppipp_mean(y[list(c)], f[list(c)], f[[i for i in range(9) if i not in c]])[0].estimate)
            for c in itertools.combinations(range(9), 4)
        ]
        assert abs(np.mean(biased) - truth) > 1e-3


def test_the_tables_are_unbiased_and_finite_population_corrected() -> None:
    """Through ppi_intervals (what judge and compare report), over all 126 samples of 4 of 9 queries: PPI++'s
    mean estimate is the truth (ppi-python's weight, which the tables used before, was 0.0018 off here)
    and PPI's interval variance averages to the estimates' variance over the samples."""
    y, f = _population(1, 9, "good")
    queries = pd.Index([f"q{i}" for i in range(9)], name="query_id")
    judge, human = pd.DataFrame({"a": f}, index=queries), pd.DataFrame({"a": y}, index=queries)
    rows = [ppi_intervals(human.iloc[list(c)], judge).means.iloc[0] for c in itertools.combinations(range(9), 4)]
    found = pd.DataFrame(rows)
    assert found["ppipp_estimate"].mean() == pytest.approx(y.mean(), abs=TOL)
    half = (found["ppi_high"] - found["ppi_low"]) / 2 / t.ppf(0.975, 3)
    assert (half**2).mean() == pytest.approx(found["ppi_estimate"].var(ddof=0), abs=TOL)


def test_variance_is_the_finite_population_one_and_unbiased() -> None:
    """With the weight fixed, the estimates' variance over every sample is (1 - n/M) S^2 / n (S^2 of the
    population's residuals, ddof 1), and the interval's variance averages to exactly that: the
    finite-population correction, which ppi-python's interval lacks (it is wider at 6 of 10)."""
    y, f = _population(2, 10, "good")
    n = 6
    found = _every_sample(y, f, n, 1.0)
    exact = (1 - n / 10) * np.var(y - f, ddof=1) / n
    assert found["estimate"].var(ddof=0) == pytest.approx(exact, abs=TOL)
    half = (found["high"] - found["low"]) / 2 / t.ppf(0.975, n - 1)
    assert (half**2).mean() == pytest.approx(exact, abs=TOL)


def test_every_query_labelled_is_exact_and_one_is_refused() -> None:
    y, f = _population(3, 12, "good")
    for lam in (1.0, None):
        interval, _ = finite_ppi_mean(y, f, f[:0], lam=lam)
        assert float(interval.low) == float(interval.high) == pytest.approx(y.mean(), abs=TOL)
    with pytest.raises(RankscopeError, match="at least 2 labelled queries, got 1"):
        finite_ppi_mean(y[:1], f[:1], f[1:])
    with pytest.raises(RankscopeError, match="confidence must be between 0 and 1"):
        finite_ppi_mean(y[:5], f[:5], f[5:], confidence=1.0)
    with pytest.raises(ValueError, match="one shape"):
        finite_ppi_mean(y[:5], f[:4], f[5:])


def test_columns_are_independent_problems() -> None:
    cases = [_population(s, 30, judge) for s, judge in enumerate(("good", "anti", "shrunk"))]
    y, f = (np.column_stack(parts) for parts in zip(*cases))
    interval, weight = finite_ppi_mean(y[:8], f[:8], f[8:], lam=None)
    for column, (yc, fc) in enumerate(cases):
        expected = finite_interval(yc[:8], fc[:8], fc[8:], None)
        assert (interval.estimate[column], interval.low[column], interval.high[column]) == pytest.approx(expected)
        assert weight[column] == pytest.approx(leave_one_out_slopes(yc[:8], fc[:8]).mean(), abs=TOL)


def _cells() -> list[dict[str, object]]:
    return json.loads(ppi_simulation.TABLE.read_text(encoding="utf-8"))["cells"]


def test_simulated_coverage_columns_are_the_tables_lowest() -> None:
    """Each row carries the lowest coverage the table gives at the largest simulated size up to its sample's
    (7 queries: the cells of 5), means over A and B, differences over B - A."""
    rng = np.random.default_rng(5)
    queries = pd.Index([f"q{i}" for i in range(40)], name="query_id")
    judge = pd.DataFrame({"a": rng.random(40), "b": rng.random(40)}, index=queries)
    human = judge.iloc[:7] * 0.8
    result = ppi_intervals(human, judge, baseline="a")
    cells = [c for c in _cells() if c["labelled"] == 5]
    for method in ("ppi", "ppipp"):
        lowest_mean = min(c["coverage"] for c in cells if c["method"] == method and c["quantity"] != "B - A")
        lowest_difference = min(c["coverage"] for c in cells if c["method"] == method and c["quantity"] == "B - A")
        assert set(result.means[f"{method}_simulated"]) == {lowest_mean}
        assert set(result.differences[f"{method}_simulated"]) == {lowest_difference}
    assert result.warnings and "7 human-labelled queries" in result.warnings[0]
    assert result.to_dict()["warnings"] == list(result.warnings)


def test_the_warning_follows_the_table() -> None:
    """Warned below the smallest simulated sample and wherever a simulated cell is outside 93.5-96.5%; silent
    where every cell is within, and when every query is labelled."""
    cells = [c for c in _cells() if c["labelled"] < c["queries"]]
    sizes = sorted({c["labelled"] for c in cells})
    assert "not known" in coverage_warning(sizes[0] - 1, 52, 0.95)
    for size in sizes:
        outside = any(not 0.935 <= c["coverage"] <= 0.965 for c in cells if c["labelled"] == size)
        line = coverage_warning(size, 52, 0.95)
        assert (line is not None) == outside, size
        if line is not None:
            assert f"from {size} covered" in line and "simulated at" not in line
            assert "simulated at 95%" in coverage_warning(size, 52, 0.9)
    assert coverage_warning(52, 52, 0.95) is None
