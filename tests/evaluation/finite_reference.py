"""The finite-population PPI and cross-fitted PPI++ intervals written out query by query, with loops and
numpy's own covariance: the reference rankscope.evaluation.ppi_finite's vectorised form is tested against."""

from __future__ import annotations

import numpy as np
from scipy.stats import t


def leave_one_out_slopes(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """For each sampled query, the slope of human on judge over the others, clipped to [0, 1]; 0 when
    fewer than 2 others or their judge values are all equal."""
    slopes = np.zeros(len(y))
    for i in range(len(y)):
        others = np.arange(len(y)) != i
        if others.sum() < 2 or np.ptp(f[others]) == 0:
            continue
        cov = np.cov(y[others], f[others])
        slopes[i] = min(max(cov[0, 1] / cov[1, 1], 0.0), 1.0)
    return slopes


def finite_interval(
    y: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray, lam: float | None, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(estimate, low, high) of the mean over all ``len(y) + len(unlabelled)`` queries.

    With ``lam=None`` each sampled query i has its own leave-one-out estimate: the other sampled
    queries' human values, the judge's weighted values on every query not among them, and query i's
    weighted gap scaled to the queries it stands for; the estimate is their mean.
    """
    n, m = len(y), len(y) + len(unlabelled)
    weights = leave_one_out_slopes(y, labelled) if lam is None else np.full(n, lam)
    terms = []
    for i in range(n):
        others = np.arange(n) != i
        rest = np.concatenate([unlabelled, labelled[[i]]])  # the queries not among the others
        total = y[others].sum() + weights[i] * rest.sum() + len(rest) * (y[i] - weights[i] * labelled[i])
        terms.append(total / m)
    estimate = float(np.mean(terms))
    residual = y - weights * labelled
    variance = (1 - n / m) * np.var(residual, ddof=1) / n
    df = n - 2 if lam is None and n > 2 else n - 1
    half = float(t.ppf(0.5 + confidence / 2, df) * np.sqrt(variance))
    return estimate, estimate - half, estimate + half
