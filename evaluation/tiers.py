"""Rank intervals and tiers: which of many systems are really different (issue 26).

A leaderboard of means says nothing about which ranks are defensible. For any number of
systems scored on the same queries this module gives

- each system's **mean interval** and **rank interval**: percentile intervals over a paired
  bootstrap of the queries (every resample draws the same queries for every system, so the
  systems' correlation through the queries is kept). A system's rank in a resample is one plus
  the number of systems with a strictly higher mean there (ties share the better rank). All
  resamples are one matrix product: the resamples' query counts (resamples x queries) times the
  per-query values (queries x systems).
- **tiers** of statistically indistinguishable systems, with the family-wise error controlled
  over *all* pairs of systems: every pair is tested with the paired t-test, and Holm's step-down
  correction runs over all ``S (S - 1) / 2`` pairs at once.

Why paired t + Holm over all pairs, and not a max-T permutation test (randomised Tukey HSD)?
Holm controls the family-wise error in the strong sense under any dependence between the
pairs' tests, with no assumption on how the systems' values are exchangeable; the paired
t-test's p-values of every pair come from one covariance matrix of the systems' per-query
values, so 300 systems (44,850 pairs) cost milliseconds, where a permutation max-T needs a
shuffle of every query's row per permutation (measured on this 2-core machine: 20 ms per
permutation of 1,000 queries x 300 systems, 20 s for 1,000); and the t-test is the paired test
whose type I error stays closest to nominal on IR metrics with 50 queries or more (Urbano,
Lima and Hanjalic, SIGIR 2019). The price: Holm ignores the correlation between pairs, so it is
more conservative than max-T; a tier may hold systems max-T would split.

Tiers: systems sorted by mean (highest first; equal means by name). A tier opens with the best
system not yet placed and takes the next systems in that order while each is indistinguishable
(corrected p >= alpha) from *every* system already in the tier; the first that is not opens the
next tier. So within a tier no pair is significantly different, and each tier's first system is
significantly different from at least one system of the tier above.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import SchemaError, duplicate_message
from rankscope.core.params import SEED, Param, check_arguments
from rankscope.evaluation.marks import ALPHA
from rankscope.evaluation.significance import adjust_pvalues, align, one_blas_thread, resample_counts

_COUNT = Param(int, low=1)
_FRACTION = Param(float, low=0, high=1, closed="neither")

TABLE_COLUMNS = ("tier", "mean", "mean_low", "mean_high", "rank", "rank_low", "rank_high")
PAIR_COLUMNS = ("system", "other", "delta", "p_value", "p_adjusted", "significant")


@dataclass(frozen=True)
class Tiers:
    """What :func:`rank_tiers` found.

    ``table``: index ``system`` sorted by mean (highest first), the columns :data:`TABLE_COLUMNS`
    (``rank`` is the rank of the mean on all queries; ``*_low``/``*_high`` the bootstrap interval's
    ends). ``pairs``: one row per pair, ``system`` above ``other`` in the table's order, ``delta``
    = system's mean minus other's, the paired t-test's ``p_value``, Holm's ``p_adjusted`` over all
    pairs and ``significant`` (``p_adjusted < alpha``).
    """

    table: pd.DataFrame
    pairs: pd.DataFrame
    n_queries: int
    n_resamples: int
    confidence: float
    alpha: float

    @property
    def tiers(self) -> list[list[str]]:
        """The systems of each tier, best tier first."""
        return [list(group.index) for _, group in self.table.groupby("tier", sort=True)]

    def significant(self, system: str, other: str) -> bool:
        """Whether the two systems' difference is significant after the correction over all pairs."""
        found = self.pairs[
            ((self.pairs["system"] == system) & (self.pairs["other"] == other))
            | ((self.pairs["system"] == other) & (self.pairs["other"] == system))
        ]
        if found.empty:
            raise SchemaError(f"no pair {system!r}, {other!r} among the systems {list(self.table.index)}")
        return bool(found["significant"].iloc[0])

    def caption(self) -> str:
        """One sentence saying how the intervals and tiers were made."""
        return (
            f"{self.confidence:.0%} bootstrap intervals of the mean and the rank ({self.n_resamples} paired "
            f"resamples of {self.n_queries} queries; rank = 1 + systems with a higher mean); tier = systems "
            f"no pair of which differs significantly (paired t-test, Holm over all "
            f"{len(self.pairs)} pairs, p < {self.alpha:g})"
        )


def bootstrap_means(values: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of every system (columns of ``values``, queries x systems) in ``n_resamples`` paired
    bootstrap resamples of the queries (rows): a resamples x systems array. Each block of resamples
    is its query counts (:func:`rankscope.evaluation.significance.resample_counts`) times ``values``,
    one matrix product."""
    n = values.shape[0]
    with one_blas_thread():
        return np.concatenate([counts @ values for counts in resample_counts(n_resamples, n, seed)]) / n


def competition_ranks(means: np.ndarray) -> np.ndarray:
    """Each row's ranks, highest mean first, ties sharing the better rank (1 + count strictly higher):
    ``scipy.stats.rankdata(-means, method="min", axis=1)``, in numpy (scipy.stats takes longer to import
    than a comparison takes to compute, docs/speed.md)."""
    rows, count = means.shape
    order = np.argsort(-means, axis=1, kind="stable")
    ordered = np.take_along_axis(means, order, axis=1)
    starts = np.zeros((rows, count), dtype=np.int64)  # the position where each run of equal means begins
    starts[:, 1:] = np.where(ordered[:, 1:] != ordered[:, :-1], np.arange(1, count), 0)
    ranks = np.empty((rows, count), dtype=np.int64)
    np.put_along_axis(ranks, order, np.maximum.accumulate(starts, axis=1) + 1, axis=1)
    return ranks


def pair_pvalues(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, p) for every pair ``i < j`` of columns: the two-sided paired t-test's p-value, from the
    columns' covariance (1.0 when every difference is zero, 0.0 for a constant non-zero difference,
    as :func:`rankscope.evaluation.significance.t_test`)."""
    from scipy.special import stdtr  # what scipy.stats.t.sf computes, without scipy.stats' import

    n, count = values.shape
    i, j = np.triu_indices(count, k=1)
    means = values.mean(axis=0)
    centred = values - means
    covariance = centred.T @ centred / (n - 1)
    variance = np.diag(covariance)
    delta = means[i] - means[j]
    diff_var = np.maximum(variance[i] + variance[j] - 2 * covariance[i, j], 0.0)
    # a variance that is only rounding noise of the means' scale is zero (identical or shifted columns)
    scale = np.maximum(np.abs(values).max(initial=0.0), 1e-300)
    constant = diff_var <= (1e-12 * scale) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(delta) / np.sqrt(diff_var / n)
    p = 2 * stdtr(n - 1, -t)
    zero = np.abs(delta) <= 1e-12 * scale
    p = np.where(constant, np.where(zero, 1.0, 0.0), p)
    return i, j, np.clip(p, 0.0, 1.0)


@check_arguments(n_resamples=_COUNT, confidence=_FRACTION, alpha=_FRACTION, seed=SEED)
def rank_tiers(
    per_query: pd.DataFrame | Mapping[str, pd.Series],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    alpha: float = ALPHA,
    seed: int = 0,
) -> Tiers:
    """Mean and rank intervals and tiers of any number of systems (see the module doc).

    ``per_query``: a frame indexed by query id with one column per system, or a mapping system ->
    series indexed by query id (checked as :func:`rankscope.evaluation.significance.align` checks
    it: every system on the same queries, no missing value). Deterministic for a ``seed``.
    """
    table = align(per_query) if isinstance(per_query, Mapping) else _wide(per_query)
    if len(table) < 2:
        raise SchemaError(f"rank intervals need at least 2 queries, got {len(table)}")
    names = list(table.columns)
    values = table.to_numpy(dtype=np.float64)
    means = values.mean(axis=0)
    resampled = bootstrap_means(values, n_resamples, seed)
    tail = (1 - confidence) / 2
    mean_low, mean_high = np.quantile(resampled, [tail, 1 - tail], axis=0)
    ranks = competition_ranks(resampled)
    # ranks are integers: the lower end rounds down and the upper end up, so the interval covers
    rank_low = np.floor(np.quantile(ranks, tail, axis=0)).astype(np.int64)
    rank_high = np.ceil(np.quantile(ranks, 1 - tail, axis=0)).astype(np.int64)
    i, j, p = pair_pvalues(values)
    adjusted = adjust_pvalues(p, "holm")
    order = sorted(range(len(names)), key=lambda k: (-means[k], names[k]))
    position = np.empty(len(names), dtype=np.int64)
    position[order] = np.arange(len(names))
    upper = position[i] < position[j]
    first, second = np.where(upper, i, j), np.where(upper, j, i)
    shown = np.lexsort((position[second], position[first]))  # the pairs in the table's order
    pairs = pd.DataFrame(
        {
            "system": [names[k] for k in first[shown]],
            "other": [names[k] for k in second[shown]],
            "delta": (means[first] - means[second])[shown],
            "p_value": p[shown],
            "p_adjusted": adjusted[shown],
            "significant": (adjusted < alpha)[shown],
        }
    )
    columns = {
        "tier": tier_numbers(order, i, j, adjusted < alpha),
        "mean": means,
        "mean_low": mean_low,
        "mean_high": mean_high,
        "rank": competition_ranks(means[None, :])[0],
        "rank_low": rank_low,
        "rank_high": rank_high,
    }
    frame = pd.DataFrame(
        {name: column[order] for name, column in columns.items()},
        index=pd.Index([names[k] for k in order], name="system"),
    )
    return Tiers(
        table=frame,
        pairs=pairs,
        n_queries=len(table),
        n_resamples=n_resamples,
        confidence=confidence,
        alpha=alpha,
    )


def tier_numbers(order: list[int], i: np.ndarray, j: np.ndarray, significant: np.ndarray) -> np.ndarray:
    """Tier numbers (1 = best) of systems visited in ``order`` (best mean first): a system joins the
    open tier when it differs significantly from no member (pairs ``i``, ``j`` and whether each is
    ``significant``), else it opens the next tier."""
    separated = np.zeros((len(order), len(order)), dtype=bool)
    separated[i, j] = separated[j, i] = significant
    tier = np.zeros(len(order), dtype=np.int64)
    members: list[int] = []
    current = 0
    for k in order:
        if not members or separated[k, members].any():
            current += 1
            members = []
        members.append(k)
        tier[k] = current
    return tier


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    """A wide frame (index query id, a column per system) checked as :func:`align` checks a mapping,
    all columns at once: no repeated query or system, every value a number (a missing one names its
    system and query)."""
    if not isinstance(frame, pd.DataFrame):
        raise SchemaError(
            f"per-query values: expected a DataFrame (a column per system) or a mapping, got {type(frame).__name__}"
        )
    if frame.shape[1] < 2:
        raise SchemaError(f"need at least two systems to compare, got {frame.shape[1]}")
    names = [str(name) for name in frame.columns]
    index = frame.index.astype(str)
    for what, labels in (("system", pd.Index(names)), ("query", index)):
        if labels.has_duplicates:
            raise SchemaError(duplicate_message(what, labels[labels.duplicated()][0]))
    if all(isinstance(dtype, np.dtype) and dtype.kind in "fi" for dtype in frame.dtypes):  # numbers (as compare gives)
        numeric = frame.to_numpy(dtype=np.float64)
    else:
        numeric = frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    missing = np.argwhere(np.isnan(numeric))
    if len(missing):
        row, column = missing[0]
        raise SchemaError(
            f"system {names[column]!r}: query {index[row]!r} has no numeric value ({frame.iat[row, column]!r})"
        )
    return pd.DataFrame(numeric, index=index.rename("query_id"), columns=names).sort_index()


def tiers_by_metric(
    per_query: Mapping[str, pd.DataFrame], *, n_resamples: int = 1000, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """:func:`rank_tiers` for several metrics: ``per_query`` maps a metric to its wide frame (index
    query id, a column per system). Returns the tables and pairs in long form (a leading ``metric``
    column) and each metric's :meth:`Tiers.caption`."""
    found = {metric: rank_tiers(frame, n_resamples=n_resamples, seed=seed) for metric, frame in per_query.items()}
    tables = [tiers.table.reset_index().assign(metric=metric) for metric, tiers in found.items()]
    pairs = [tiers.pairs.assign(metric=metric) for metric, tiers in found.items()]
    table = pd.concat(tables, ignore_index=True)[["metric", "system", *TABLE_COLUMNS]]
    return (
        table,
        pd.concat(pairs, ignore_index=True)[["metric", *PAIR_COLUMNS]],
        {metric: tiers.caption() for metric, tiers in found.items()},
    )
