"""A non-inferiority decision from paired per-query differences: is a candidate worse than a baseline by more than a margin?

With ``d = candidate - baseline`` per query and margin ``D >= 0``, the gate of continuous integration
asks whether the mean difference is above ``-D``. Two one-sided bounds at level ``alpha`` each (the
two-sided ``1 - 2 alpha`` interval of Schuirmann's two one-sided tests) give three answers:

- ``pass``: the lower bound is above ``-D``: the candidate is not worse by more than ``D``;
- ``fail``: the upper bound is below ``-D``: it is worse by more than ``D``;
- ``undecided``: the interval holds ``-D``.

Each bound errs with probability at most ``alpha``, so a candidate exactly at the margin is failed at
most that often, and one worse than the margin passes at most that often. The bounds are Student's t
on the paired differences (the queries a sample of those the systems will meet), or, with judge labels
and a human sample, the prediction-powered interval of the difference
(:func:`rankscope.evaluation.ppi_finite.finite_ppi_mean`), never the judge's number alone.
:func:`at_margin_rates` measures both error rates by simulation (docs/intervals.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankscope.core.errors import RankscopeError

ALPHA = 0.05
"""Each one-sided bound's error by default: a 90% two-sided interval."""
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
EXIT_STATUS = {PASS: 0, FAIL: 1, UNDECIDED: 3}
"""The exit status of ``rankscope gate`` for each verdict."""


@dataclass(frozen=True)
class Margin:
    """How much worse the candidate may be (``width``, in the metric's units) and each bound's error ``alpha``."""

    width: float
    alpha: float = ALPHA
    sequential: bool = False
    """Decide by the anytime-valid confidence sequence (:func:`sequence_bounds`) instead of Student's t."""

    def __post_init__(self) -> None:
        check_margin(self.width)
        check_alpha(self.alpha)

    @classmethod
    def of(cls, margin: float | Margin) -> Margin:
        """``margin`` as a Margin: a number alone takes the default ``alpha``."""
        return margin if isinstance(margin, Margin) else cls(margin)


@dataclass(frozen=True)
class Bounds:
    """The mean difference and its one-sided bounds, each at level ``alpha`` (a ``1 - 2 alpha`` interval)."""

    estimate: float
    low: float
    high: float
    alpha: float


def check_margin(margin: float) -> float:
    """The margin as a float: a finite number at least 0 (0 asks that the candidate be better)."""
    try:
        if isinstance(margin, bool):
            raise TypeError
        value = float(margin)
    except (TypeError, ValueError):
        raise RankscopeError(f"--margin must be a number, got {margin!r}") from None
    if not np.isfinite(value) or value < 0:
        raise RankscopeError(f"--margin must be a finite number at least 0, got {margin!r}")
    return value


def check_alpha(alpha: float) -> float:
    """The level of each one-sided bound: strictly between 0 and 0.5."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise RankscopeError(f"--alpha must be between 0 and 0.5 (each one-sided bound's error), got {alpha!r}")
    return float(alpha)


def t_bounds(differences: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's mean of ``differences`` (rows: queries) and its one-sided Student t bounds at ``alpha``."""
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n < 2:
        raise RankscopeError(f"a non-inferiority test needs at least 2 queries with values for both systems, got {n}")
    from scipy.stats import t

    mean = d.mean(axis=0)
    half = t.ppf(1 - alpha, n - 1) * d.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def sequence_bounds(differences: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's mean and the last interval of its confidence sequence at ``2 alpha``
    (:mod:`rankscope.evaluation.confidence_sequence`, each side erring at most ``alpha``): valid for any
    number of queries and any shape of differences in [-1, 1], and at every query had one looked earlier."""
    from rankscope.evaluation.confidence_sequence import confidence_sequence

    d = np.asarray(differences, dtype=np.float64)
    columns = d.reshape(len(d), -1).T
    last = [confidence_sequence(column, 2 * alpha) for column in columns]
    low, high = (
        np.array([getattr(found, side)[-1] for found in last]).reshape(d.shape[1:]) for side in ("low", "high")
    )
    return d.mean(axis=0), low, high


def paired_bounds(differences: np.ndarray, alpha: float, sequential: bool = False) -> Bounds:
    """:func:`t_bounds` (or :func:`sequence_bounds`) of one set of paired differences."""
    mean, low, high = (float(v) for v in (sequence_bounds if sequential else t_bounds)(differences, alpha))
    return Bounds(mean, low, high, alpha)


def verdict(low: float | np.ndarray, high: float | np.ndarray, margin: float) -> np.ndarray:
    """``pass``, ``fail`` or ``undecided`` for each pair of bounds (see the module's docstring)."""
    return np.where(np.asarray(low) > -margin, PASS, np.where(np.asarray(high) < -margin, FAIL, UNDECIDED))


def at_margin_rates(
    population: np.ndarray,
    queries: int,
    margin: float,
    alpha: float,
    reps: int,
    seed: int = 0,
    sequential: bool = False,
    truth: float | None = None,
) -> dict[str, float]:
    """How often the gate fails and passes a candidate exactly at the margin: ``reps`` samples of
    ``queries`` differences drawn with replacement from ``population`` shifted to mean ``-margin``.
    ``fail`` must be at most ``alpha``; ``pass`` too (the candidate is not better than the margin allows).
    ``truth`` shifts the population to another mean instead (0: how often an equal candidate passes).
    With ``sequential`` the bounds are :func:`sequence_bounds` (the shifted differences must stay in [-1, 1])."""
    values = np.asarray(population, dtype=np.float64)
    shifted = values - values.mean() + (-margin if truth is None else truth)
    rng = np.random.default_rng(seed)
    drawn = shifted[rng.integers(0, len(shifted), size=(queries, reps))]
    _, low, high = (sequence_bounds if sequential else t_bounds)(drawn, alpha)
    found = verdict(low, high, margin)
    return {"fail": float(np.mean(found == FAIL)), "pass": float(np.mean(found == PASS))}
