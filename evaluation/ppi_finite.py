"""Prediction-powered intervals for a human sample drawn without replacement from a finite set of queries.

rankscope's human sample is ``n`` of the ``M`` queries a judge labelled (the sampling frame), and
the estimand is the metric's mean over those ``M`` queries under human labels. ``ppi-python``'s
intervals (:mod:`rankscope.evaluation.ppi`) assume the unlabelled queries are a fresh draw from
an infinite population and use normal quantiles: at 10 human queries they were too narrow, at 30
of 52 too wide, and PPI++'s weight, fitted on the same queries it corrects, biased the estimate
(issue 43). Here, the survey-sampling difference estimator (Cochran 1977, ch. 7; Särndal,
Swensson, Wretman 1992, 6.3):

    estimate = mean of human over the sample + (1 - n/M) * mean_i lam_i * (judge mean over the unlabelled - judge_i)

which with one weight ``lam`` is ``mean(lam * judge over all M) + mean(human - lam * judge over the
sample)``; its variance ``(1 - n/M) s^2 / n`` (``s^2`` the sample variance, ``ddof=1``, of the
residuals ``human - lam * judge``: the finite-population correction) with Student's t quantile on
``n - 1`` degrees of freedom (``n - 2`` for PPI++, which fits a slope). ``lam = 1`` is classic PPI.
PPI++'s weight is cross-fitted: query ``i``'s weight ``lam_i`` is the regression slope of human on
judge over the other ``n - 1`` sampled queries, clipped to [0, 1] (0 where the judge is constant
there). Given those other queries, query ``i`` is a uniform draw from the rest, so each
leave-one-out term is exactly unbiased and so is their mean (tested by enumerating every sample of
a small population). With every query labelled (``n = M``) the estimate is the human mean and the
interval has width 0: it is exact. A bootstrap-t was tried for the small samples and covered less
than Student's t there (docs/intervals.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankscope.core.errors import RankscopeError

#: the smallest human sample an interval is given for: one residual has no variance
MIN_LABELLED = 2


@dataclass(frozen=True)
class Intervals:
    """Estimates and two-sided intervals, one per column of the values they came from."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def covers(self, truth: float | np.ndarray) -> np.ndarray:
        """Whether each interval holds ``truth``, up to rounding: an exact interval (every query labelled,
        or a judge equal to the humans on the sample) has width 0 and its estimate may differ in the last bits."""
        slack = 1e-12 * (1 + np.abs(truth))
        return np.asarray((self.low - slack <= truth) & (truth <= self.high + slack))


def crossfit_lambda(human: np.ndarray, judge_labelled: np.ndarray) -> np.ndarray:
    """Each sampled query's PPI++ weight, fitted without it: the slope of human on judge over the
    other sampled queries, clipped to [0, 1] (0 where the judge is constant there); shape of ``human``."""
    y, f = _columns(human), _columns(judge_labelled)
    n = len(y)
    y = y - y.mean(axis=0)  # the slope is shift-invariant; centring keeps the sums' cancellation small
    f = f - f.mean(axis=0)
    sy, sf, syf, sff = y.sum(axis=0), f.sum(axis=0), (y * f).sum(axis=0), (f * f).sum(axis=0)
    rest = n - 1
    if rest < 2:
        return np.zeros(np.shape(human))
    cov = (syf - y * f) - (sy - y) * (sf - f) / rest
    var = (sff - f * f) - (sf - f) ** 2 / rest
    informative = var > 1e-20 * (1.0 + sff)
    lam = np.divide(cov, var, out=np.zeros_like(cov), where=informative)
    return np.clip(lam, 0.0, 1.0).reshape(np.shape(human))


def finite_ppi_mean(
    human: np.ndarray,
    judge_labelled: np.ndarray,
    judge_unlabelled: np.ndarray,
    *,
    lam: float | None = 1.0,
    confidence: float = 0.95,
) -> tuple[Intervals, np.ndarray]:
    """Each column's mean over the ``n + N`` queries, with its interval, and the judge's mean weight.

    ``human`` and ``judge_labelled`` are the sampled queries' values (rows), ``judge_unlabelled``
    the other queries' (``N`` rows, possibly 0); 1-d arrays are one column. ``lam=None`` cross-fits
    PPI++'s weight (:func:`crossfit_lambda`); a number weighs the judge by it (1: classic PPI, 0:
    the human sample alone).
    """
    if not 0 < confidence < 1:
        raise RankscopeError(f"confidence must be between 0 and 1, got {confidence}")
    y, labelled, unlabelled = _columns(human), _columns(judge_labelled), _columns(judge_unlabelled)
    n, rest = len(y), len(unlabelled)
    if y.shape != labelled.shape or unlabelled.shape[1:] != y.shape[1:]:
        raise ValueError(
            f"human and labelled judge values need one shape and the unlabelled as many columns; "
            f"got {y.shape}, {labelled.shape}, {unlabelled.shape}"
        )
    if n < MIN_LABELLED:
        raise RankscopeError(f"prediction-powered intervals need at least {MIN_LABELLED} labelled queries, got {n}")
    weights = crossfit_lambda(y, labelled) if lam is None else np.full(y.shape, float(lam))
    fitted = lam is None and n > MIN_LABELLED  # a slope was fitted: one degree of freedom fewer
    unsampled = 1 - n / (n + rest)  # the finite-population correction
    gap = (unlabelled.mean(axis=0) if rest else 0.0) - labelled
    estimate = y.mean(axis=0) + unsampled * (weights * gap).mean(axis=0)
    residual = y - weights * labelled
    error = np.sqrt(unsampled * residual.var(axis=0, ddof=1) / n)
    from scipy.stats import t

    half = t.ppf(1 - (1 - confidence) / 2, n - 1 - fitted) * error
    shape = np.shape(human)[1:]
    found = Intervals(*(np.reshape(v, shape) for v in (estimate, estimate - half, estimate + half)))
    return found, np.reshape(weights.mean(axis=0), shape)


def _columns(values: np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array.reshape(-1, 1) if array.ndim == 1 else array
