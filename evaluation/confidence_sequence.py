"""An anytime-valid confidence sequence for a mean paired difference, so a team may look after every label.

A fixed-N interval (Student's t, PPI) covers the truth at the N it was planned for; recomputed after
each new label and stopped the first time it excludes 0, it errs far more often than its level says
(docs/intervals.md: the t interval looked at after every label missed the truth in about 40% of
sequences of 500). A confidence sequence covers the truth at every N at once, with probability at
least ``1 - alpha``, so any stopping rule keeps the level.

Here the predictable plug-in empirical-Bernstein confidence sequence of Waudby-Smith & Ramdas (2023,
"Estimating means of bounded random variables by betting", JRSS-B, Theorem 2 / eq. (13)-(15)), for
values drawn independently from a population whose mean is asked (queries drawn at random, with
replacement or from a pool much larger than the draws). Per-query differences of a metric in [0, 1]
lie in [-1, 1]; mapped to ``x = (d + 1) / 2`` in [0, 1]::

    mu_t     = (1/2 + sum_{i<=t} x_i) / (t + 1)                 sigma2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)
    lambda_t = min(sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t))), 1/2)
    v_t      = 4 (x_t - mu_{t-1})^2                             psi(l) = (-log(1 - l) - l) / 4
    centre_t = sum lambda_i x_i / sum lambda_i                  radius_t = (log(2/alpha) + sum v_i psi(lambda_i)) / sum lambda_i

and ``C_t = [centre_t - radius_t, centre_t + radius_t]`` cut to [0, 1] and intersected with every
earlier one (an intersection of confidence sequences is one). Each side errs at most ``alpha / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankscope.core.errors import RankscopeError

CAP = 1_000_000
"""The most labels :func:`stopping` projects to; a difference that would need more is "not decidable"."""
FIRST_T_LOOK = 10
"""The first label after which :func:`monitoring_coverage` looks at Student's t interval."""
HIGHER, LOWER, UNDECIDED, OUT_OF_BUDGET = "higher", "lower", "undecided", "not decidable within the budget"


@dataclass(frozen=True)
class ConfidenceSequence:
    """The estimate and the interval after each label (arrays of the labels' length), in the differences' units."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    alpha: float

    def covers(self, truth: float) -> bool:
        """Whether every interval of the sequence holds ``truth`` (what looking after every label needs)."""
        return bool(np.all((self.low <= truth) & (truth <= self.high)))


@dataclass(frozen=True)
class Stop:
    """Where a labelling loop stands: ``decision`` (``higher``: the mean difference is above 0 at the
    level, ``lower``: below, ``undecided``: go on, or ``not decidable within the budget``), ``labels``
    used, and ``needed``: the labels the interval would take to exclude 0 if the next ones behave like
    these (None: more than :data:`CAP`, or a difference of 0)."""

    decision: str
    labels: int
    needed: int | None
    low: float
    high: float


def confidence_sequence(differences: np.ndarray, alpha: float = 0.05) -> ConfidenceSequence:
    """The sequence of intervals after each of ``differences`` (in the order labelled; each in [-1, 1])."""
    d = _checked(differences, alpha)
    x = (d + 1) / 2
    steps = np.arange(1, len(x) + 1, dtype=np.float64)
    lam, centre, radius = _bets(x, steps, alpha)
    low = np.maximum.accumulate(np.clip(centre - radius, 0, 1))
    high = np.minimum.accumulate(np.clip(centre + radius, 0, 1))
    return ConfidenceSequence(2 * centre - 1, 2 * low - 1, 2 * high - 1, alpha)


def stopping(differences: np.ndarray, budget: int, alpha: float = 0.05) -> Stop:
    """The stopping rule after the labels so far: decided (which side of 0 the mean difference is),
    undecided, or not decidable within ``budget`` labels in all (with the labels it would take)."""
    if budget < 1:
        raise RankscopeError(f"the budget must be at least 1 label, got {budget}")
    d = _checked(differences, alpha)
    found = confidence_sequence(d, alpha)
    low, high, used = float(found.low[-1]), float(found.high[-1]), len(d)
    if low > 0 or high < 0:
        return Stop(HIGHER if low > 0 else LOWER, used, used, low, high)
    needed = _projected(d, alpha)
    decision = UNDECIDED if needed is not None and needed <= budget else OUT_OF_BUDGET
    return Stop(decision, used, needed, low, high)


def _bets(x: np.ndarray, steps: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each step's bet ``lambda``, the interval's centre and radius (in the [0, 1] scale): the formulas above."""
    mean = (0.5 + np.cumsum(x)) / (steps + 1)
    before = np.concatenate([[0.5], mean[:-1]])  # mu_{t-1}
    spread = (0.25 + np.cumsum((x - mean) ** 2)) / (steps + 1)
    spread_before = np.concatenate([[0.25], spread[:-1]])  # sigma2_{t-1}
    log_term = np.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log_term / (spread_before * steps * np.log1p(steps))), 0.5)
    v = 4 * (x - before) ** 2
    total = np.cumsum(lam)
    centre = np.cumsum(lam * x) / total
    radius = (log_term + np.cumsum(v * _psi(lam))) / total
    return lam, centre, radius


def _psi(lam: np.ndarray) -> np.ndarray:
    return (-np.log1p(-lam) - lam) / 4


def _projected(d: np.ndarray, alpha: float) -> int | None:
    """The labels in all at which the radius would fall below the centre's distance from 0, if the next
    labels had the mean and spread of these (their bets and squared deviations at those values)."""
    x = (d + 1) / 2
    steps = np.arange(1, len(x) + 1, dtype=np.float64)
    lam, centre, radius = _bets(x, steps, alpha)
    gap = abs(centre[-1] - 0.5)
    if gap == 0:
        return None
    spread = (0.25 + np.sum((x - (0.5 + np.cumsum(x)) / (steps + 1)) ** 2)) / (len(x) + 1)
    later = np.arange(len(x) + 1, CAP + 1, dtype=np.float64)
    future = np.minimum(np.sqrt(2 * np.log(2 / alpha) / (spread * later * np.log1p(later))), 0.5)
    total = lam.sum() + np.cumsum(future)
    bound = (radius[-1] * lam.sum() + np.cumsum(4 * spread * _psi(future))) / total
    reached = np.flatnonzero(bound < gap)
    return None if len(reached) == 0 else int(later[reached[0]])


def _checked(differences: np.ndarray, alpha: float) -> np.ndarray:
    d = np.asarray(differences, dtype=np.float64).ravel()
    if not 0 < alpha < 1:
        raise RankscopeError(f"alpha must be between 0 and 1, got {alpha}")
    if len(d) == 0:
        raise RankscopeError("a confidence sequence needs at least one labelled difference")
    bad = np.flatnonzero(~np.isfinite(d) | (np.abs(d) > 1))
    if len(bad):
        raise RankscopeError(
            f"label {bad[0] + 1}: difference {float(d[bad[0]])!r} is not in [-1, 1] (per-query differences of a metric in [0, 1])"
        )
    return d


def monitoring_coverage(
    population: np.ndarray, labels: int, sequences: int, alpha: float = 0.05, seed: int = 0
) -> dict[str, float]:
    """How often the truth stays inside every interval when one looks after each label: ``sequences``
    sequences of ``labels`` differences drawn with replacement from ``population`` (its mean the truth),
    for this confidence sequence and, for comparison, Student's t interval recomputed after each label
    (from the tenth label on, where it is a fair interval). Also how often the stopping rule decides (the sequence excludes 0 by the last
    label) and how often it decides the wrong side."""
    from scipy.stats import t

    values = np.asarray(population, dtype=np.float64)
    truth = float(values.mean())
    rng = np.random.default_rng(seed)
    drawn = values[rng.integers(0, len(values), size=(sequences, labels))]
    covered = decided = wrong = 0
    for row in drawn:
        found = confidence_sequence(row, alpha)
        covered += found.covers(truth)
        side = np.sign(found.low[-1]) if found.low[-1] > 0 else -1.0 if found.high[-1] < 0 else 0.0
        decided += side != 0
        wrong += side != 0 and side != np.sign(truth)
    n = np.arange(1, labels + 1)
    mean = np.cumsum(drawn, axis=1) / n
    sq = np.cumsum(drawn**2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.maximum(sq - n * mean**2, 0) / (n - 1))
        half = t.ppf(1 - alpha / 2, n - 1) * sd / np.sqrt(n)
    inside = np.abs(mean - truth)[:, FIRST_T_LOOK - 1 :] <= half[:, FIRST_T_LOOK - 1 :]
    return {
        "truth": truth,
        "sequence": covered / sequences,
        "t_every_label": float(np.mean(inside.all(axis=1))),
        "t_last_label": float(np.mean(inside[:, -1])),
        "decided": decided / sequences,
        "wrong_side": float(wrong) / sequences,
    }
