"""Paired significance tests, bootstrap intervals and multiple-comparison correction.

Two systems are compared on the same queries: the per-query metric values are
aligned on ``query_id`` and every test works on the paired differences
``d = system - baseline``. A query present for one system and missing for the
other is an error (silently dropping it would change the answer).

Tests (all two-sided):

- ``"t"``: paired Student t-test (``scipy.stats.ttest_rel``);
- ``"wilcoxon"``: Wilcoxon signed-rank (``scipy.stats.wilcoxon`` with its
  defaults: zero differences dropped, exact distribution for small samples);
- ``"randomization"``: Fisher's paired randomization (sign-flip permutation)
  test of the mean difference. When ``2**n`` sign patterns number no more than
  ``n_permutations`` all of them are enumerated (exact p-value); otherwise
  ``n_permutations`` random sign patterns are drawn from a seeded generator and
  ``p = (b + 1) / (R + 1)`` (the observed labelling counts once, so p is never 0).

When every difference is zero the systems are indistinguishable and all three
tests return ``p = 1.0`` (scipy would return NaN or raise).

Bootstrap confidence intervals are percentile intervals of the mean difference
over seeded resamples of the queries. Holm and Bonferroni corrections control
the family-wise error over the comparisons passed together.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rankscope.core.errors import SchemaError, duplicate_message
from rankscope.core.params import SEED, Param, check_arguments
from rankscope.core.phases import phase
from rankscope.core.progress import progress
from rankscope.evaluation.marks import ALPHA

if TYPE_CHECKING:
    from rankscope.evaluation.results import EvaluationResult

TESTS = ("randomization", "t", "wilcoxon")
CORRECTIONS = ("holm", "bonferroni", "none")
_COUNT = Param(int, low=1)
_FRACTION = Param(float, low=0, high=1, closed="neither")

# Monte Carlo draws are processed in blocks of about this many cells to bound memory.
_BLOCK_CELLS = 1 << 22
# Relative slack when comparing permuted statistics with the observed one: float sums of the
# same numbers in another order must still count as "as extreme".
_TOLERANCE = 1e-12

COLUMNS = (
    "system",
    "baseline",
    "n_queries",
    "mean",
    "baseline_mean",
    "delta",
    "p_value",
    "p_adjusted",
    "significant",
    "ci_low",
    "ci_high",
)
"""The columns of :func:`compare_systems`, in order."""


def align(per_query: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Per-query values of several systems as one frame: index query_id, one column per system.

    Each series is indexed by query_id. Duplicate query ids, missing values and a
    query present for some systems but not others are errors naming the query.
    """
    if len(per_query) < 2:
        raise SchemaError(f"need at least two systems to compare, got {len(per_query)}")
    columns: dict[str, pd.Series] = {}
    for name, values in per_query.items():
        if not isinstance(values, pd.Series):
            raise SchemaError(
                f"system {name!r}: expected a pandas Series indexed by query_id, got {type(values).__name__}"
            )
        series = pd.Series(values.to_numpy(), index=values.index.astype(str), name=name)
        duplicated = series.index[series.index.duplicated()]
        if len(duplicated):
            raise SchemaError(f"system {name!r}: {duplicate_message('query', duplicated[0])}")
        numeric = pd.to_numeric(series, errors="coerce")
        if numeric.isna().any():
            bad = numeric.index[numeric.isna()][0]
            raise SchemaError(f"system {name!r}: query {bad!r} has no numeric value ({series[bad]!r})")
        columns[name] = numeric.astype(np.float64)
    names = list(columns)
    reference = columns[names[0]].index
    for name in names[1:]:
        index = columns[name].index
        only_ref = reference.difference(index, sort=True)
        only_this = index.difference(reference, sort=True)
        if len(only_ref) or len(only_this):
            missing_in, query = (name, only_ref[0]) if len(only_ref) else (names[0], only_this[0])
            count = len(only_ref) + len(only_this)
            raise SchemaError(
                f"query {query!r} has a value for some systems but is missing from system {missing_in!r} "
                f"({count} unmatched queries between {names[0]!r} and {name!r}); "
                "evaluate every system on the same qrels"
            )
    order = reference.sort_values()
    return pd.DataFrame({name: columns[name].reindex(order) for name in names}, index=order.rename("query_id"))


def t_test(system: np.ndarray, baseline: np.ndarray) -> float:
    """Two-sided paired t-test p-value (1.0 when all differences are zero)."""
    diffs = _differences(system, baseline)
    if not np.any(diffs):
        return 1.0
    if len(diffs) < 2:
        raise ValueError("the paired t-test needs at least 2 queries with values")
    if np.all(diffs == diffs[0]):
        return 0.0  # constant non-zero difference: the variance is zero and the effect certain
    from scipy import stats  # slow to import; the CLI reads TESTS from this module at start-up

    return float(stats.ttest_rel(system, baseline).pvalue)


def wilcoxon_test(system: np.ndarray, baseline: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value with scipy's defaults (1.0 when all differences are zero)."""
    diffs = _differences(system, baseline)
    if not np.any(diffs):
        return 1.0
    from scipy import stats

    return float(stats.wilcoxon(system, baseline).pvalue)


@check_arguments(n_permutations=_COUNT, seed=SEED)
def randomization_test(
    system: np.ndarray, baseline: np.ndarray, *, n_permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided paired randomization test of the mean difference (exact when ``2**n <= n_permutations``)."""
    diffs = _differences(system, baseline)
    if not np.any(diffs):
        return 1.0
    n = len(diffs)
    observed = abs(diffs.sum())
    threshold = observed - _TOLERANCE * max(observed, np.abs(diffs).sum())
    with one_blas_thread():
        if n < 63 and 2**n <= n_permutations:
            codes = np.arange(2**n, dtype=np.int64)[:, None]
            signs = 1 - 2 * ((codes >> np.arange(n)) & 1)
            return float(np.mean(np.abs(signs @ diffs) >= threshold))
        extreme = 0
        for signs in _drawn_blocks(_signs, n_permutations, n, seed):
            extreme += int(np.count_nonzero(np.abs(signs @ diffs) >= threshold))
    return (extreme + 1) / (n_permutations + 1)


def _signs(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """``rows`` random sign patterns of :func:`randomization_test`, as float64 (the same numbers: the
    product is what ``int8 @ float64`` computes, which makes a float64 copy of the signs anyway)."""
    return (1 - 2 * rng.integers(0, 2, size=(rows, n), dtype=np.int8)).astype(np.float64)


@check_arguments(n_resamples=_COUNT, confidence=_FRACTION, seed=SEED)
def bootstrap_ci(
    system: np.ndarray,
    baseline: np.ndarray,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference ``system - baseline`` (queries resampled)."""
    diffs = _differences(system, baseline)
    with one_blas_thread():
        means = np.concatenate([counts @ diffs for counts in resample_counts(n_resamples, len(diffs), seed)])
    tail = (1 - confidence) / 2
    low, high = np.quantile(means / len(diffs), [tail, 1 - tail])
    return float(low), float(high)


def resample_counts(n_resamples: int, n: int, seed: int) -> Iterator[np.ndarray]:
    """How often each of ``n`` queries is drawn in each of ``n_resamples`` seeded bootstrap resamples
    (``n`` draws with replacement), as float64 blocks of rows: a resampled mean is then one matrix
    product, ``counts @ values / n``. The one draw rule of :func:`bootstrap_ci` and
    :func:`rankscope.evaluation.tiers.bootstrap_means` (on Cranfield's 225 queries: 17 ms a bootstrap
    interval drawing anew, 3-7 ms from kept counts, :func:`_drawn_blocks`)."""
    return _drawn_blocks(_counts, n_resamples, n, seed)


def one_blas_thread() -> AbstractContextManager[object]:
    """A block whose matrix products run on one BLAS thread (threadpoolctl): the resamples' products are
    matrix-vector products of a few milliseconds, which OpenBLAS splits over every core. Waking and
    synchronising its threads then costs more than it gives, and the woken threads spin after each product
    on the core the report's child draws on (Cranfield's comparison: its bootstrap and randomization tests
    took 0.25-0.42 s of CPU on two threads, 0.20 s on one). Every product's sums are the same on one
    thread as on several (each output element is one dot product, whichever thread computes it)."""
    return _blas_libraries().limit(limits=1)


@functools.cache
def _blas_libraries() -> Any:
    """The BLAS libraries loaded in this process (numpy's, loaded with it), found once."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def _counts(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    drawn = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
    return np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def _drawn_blocks(
    draw: Callable[[np.random.Generator, int, int], np.ndarray], total: int, n: int, seed: int
) -> Iterator[np.ndarray]:
    """``total`` seeded rows of ``n`` cells, ``draw(rng, rows, n)``, block by block (memory stays bounded).
    Rows that fit in one block are kept (read-only) for the next call with the same draw, sizes and
    seed: every metric and system compared on the same queries draws the same sign patterns and
    resamples, so a comparison of ten metrics draws them once."""
    if total * n <= _BLOCK_CELLS:
        yield _kept(draw, total, n, seed)
        return
    rng = np.random.default_rng(seed)
    for _, rows in _blocks(total, n):
        yield draw(rng, rows, n)


@functools.lru_cache(maxsize=3)  # a comparison's sign patterns, its intervals' counts and its tiers' counts
def _kept(draw: Callable[[np.random.Generator, int, int], np.ndarray], total: int, n: int, seed: int) -> np.ndarray:
    drawn = draw(np.random.default_rng(seed), total, n)
    drawn.flags.writeable = False
    return drawn


@check_arguments(method=Param(str, choices=CORRECTIONS))
def adjust_pvalues(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Family-wise corrected p-values: Holm (step-down), Bonferroni, or ``"none"``; capped at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))  # NaN fails both comparisons
    if len(bad):
        raise ValueError(f"p-values must lie in [0, 1]; p-value {bad[0]} is {p[bad[0]]}")
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, p[order] * (m - np.arange(m))))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


@check_arguments(
    test=Param(str, choices=TESTS),
    correction=Param(str, choices=CORRECTIONS),
    alpha=_FRACTION,
    n_permutations=_COUNT,
    n_bootstrap=_COUNT,
    confidence=_FRACTION,
    seed=SEED,
)
def compare_systems(
    per_query: Mapping[str, pd.Series],
    baseline: str,
    test: str = "randomization",
    correction: str = "holm",
    seed: int = 0,
    *,
    alpha: float = ALPHA,
    n_permutations: int = 10_000,
    n_bootstrap: int = 10_000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Compare every system with ``baseline`` on one metric's per-query values.

    Returns one row per non-baseline system (in the given order) with columns
    ``system, baseline, n_queries, mean, baseline_mean, delta, p_value,
    p_adjusted, significant, ci_low, ci_high``; ``ci_*`` bound ``delta`` and
    ``significant`` is ``p_adjusted < alpha``. Every comparison uses the same
    ``seed``, so a system's p-value does not depend on which others are compared.
    """
    if baseline not in per_query:
        raise SchemaError(f"baseline {baseline!r} is not among the systems {list(per_query)}")
    table = align(per_query)
    base = table[baseline].to_numpy()
    rows = []
    for name in table.columns:
        if name == baseline:
            continue
        values = table[name].to_numpy()
        if test == "t":
            p_value = t_test(values, base)
        elif test == "wilcoxon":
            p_value = wilcoxon_test(values, base)
        else:
            p_value = randomization_test(values, base, n_permutations=n_permutations, seed=seed)
        ci_low, ci_high = bootstrap_ci(values, base, n_resamples=n_bootstrap, confidence=confidence, seed=seed)
        rows.append(
            {
                "system": name,
                "baseline": baseline,
                "n_queries": len(values),
                "mean": float(values.mean()),
                "baseline_mean": float(base.mean()),
                "delta": float(values.mean() - base.mean()),
                "p_value": p_value,
                "ci_low": ci_low,
                "ci_high": ci_high,
            }
        )
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("p_adjusted", "significant")])
    frame.insert(7, "p_adjusted", adjust_pvalues(frame["p_value"].to_numpy(), correction))
    frame.insert(8, "significant", frame["p_adjusted"].to_numpy() < alpha)
    return frame


@phase("evaluate")
def compare_results(
    results: Mapping[str, EvaluationResult],
    baseline: str | Sequence[str],
    metrics: Sequence[str] | None = None,
    test: str = "randomization",
    correction: str = "holm",
    seed: int = 0,
    **options: Any,
) -> pd.DataFrame:
    """:func:`compare_systems` for several metrics at once, from :class:`EvaluationResult` objects,
    against one baseline or several.

    ``metrics`` defaults to the metrics of the first baseline's result, in its order. With several
    baselines every system is tested against each of them, each pair of systems once (a baseline
    against a later baseline is tested against the earlier one only). The correction runs within
    each metric over every comparison made on it (the family is "all systems against all baselines
    on one metric"; one baseline: all systems against it); ``options`` (alpha, n_permutations,
    n_bootstrap, confidence) go to :func:`compare_systems`. Any result with a ``wide()`` table
    works, e.g. :class:`evaluation.sampled.SampledResult`. Returns a long frame: ``metric`` then
    the columns of :func:`compare_systems` (no rows for the baseline alone).
    """
    baselines = checked_baselines(baseline, list(results))
    if len(results) == 1:  # the baseline alone (one run reported): nothing to test, no rows
        return pd.DataFrame(columns=["metric", *COLUMNS])
    wide = {name: result.wide() for name, result in results.items()}
    wanted = list(wide[baselines[0]].columns) if metrics is None else list(metrics)
    frames = []
    # seconds per metric with thousands of permutations: a bar says the run is alive, and where
    for metric in progress(wanted, desc="significance", total=len(wanted), unit="metric", label=str):
        for name, table in wide.items():
            if metric not in table.columns:
                raise SchemaError(
                    f"system {name!r} has no per-query values for metric {metric!r}; it has {list(table.columns)}"
                )
        per_query = {name: table[metric] for name, table in wide.items()}
        tested = []
        for i, against in enumerate(baselines):  # an earlier baseline was already tested against this one
            others = {name: values for name, values in per_query.items() if name not in baselines[:i]}
            if len(others) > 1:
                tested.append(compare_systems(others, against, test, "none", seed, **options))
        frame = pd.concat(tested, ignore_index=True)
        frame["p_adjusted"] = adjust_pvalues(frame["p_value"].to_numpy(), correction)
        frame["significant"] = frame["p_adjusted"].to_numpy() < options.get("alpha", ALPHA)
        frame.insert(0, "metric", metric)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def checked_baselines(baseline: str | Sequence[str], names: Sequence[str]) -> list[str]:
    """The baselines as a list, each a system compared and named once (refused in one line otherwise)."""
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    if not baselines:
        raise SchemaError("no baseline given")
    for name in baselines:
        if name not in names:
            raise SchemaError(f"baseline {name!r} is not among the systems {list(names)}")
    repeated = [name for i, name in enumerate(baselines) if name in baselines[:i]]
    if repeated:
        raise SchemaError(f"baseline {repeated[0]!r} is given twice")
    return baselines


def _blocks(total: int, width: int) -> Iterator[tuple[int, int]]:
    """``(start, rows)`` of consecutive blocks covering ``total`` draws of ``width`` cells each,
    about ``_BLOCK_CELLS`` cells a block, so Monte Carlo memory stays bounded."""
    block = max(1, _BLOCK_CELLS // width)
    for start in range(0, total, block):
        yield start, min(block, total - start)


def _differences(system: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    a = np.asarray(system, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values must be two 1-d arrays of the same length, got shapes {a.shape} and {b.shape}")
    if len(a) == 0:
        raise ValueError("no queries to compare")
    return a - b
