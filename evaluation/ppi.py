"""Prediction-powered confidence intervals: a judge's labels on every query, corrected by humans on a few.

A model (an LLM judge) labels the pool of every query; humans label a random sample of the
queries. Averaging a metric under the judge's labels alone (the *naive* estimate) is precise and
wrong by the judge's bias, whatever the number of queries. Prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023, "Prediction-powered inference", Science)
measures that bias on the human sample and removes it.

The tables (:func:`ppi_intervals`, :func:`ppi_evaluate`, what ``rankscope judge`` and ``compare``
print) estimate the metric's mean over the queries the sample was drawn from (the sampling frame,
``n`` labelled of ``n + N``), without replacement: the finite-population intervals of
:mod:`rankscope.evaluation.ppi_finite` (Student's t, finite-population correction, PPI++'s weight
cross-fitted so it does not bias the estimate; issue 43). Each row also carries the coverage the
simulation (:mod:`rankscope.evaluation.ppi_simulation`, docs/intervals.md) gave at that sample
size (``ppi_simulated``, ``ppipp_simulated``: the lowest over its judges), and the result a
warning when that is outside 93.5-96.5% or not known.

The functions on arrays :func:`ppi_mean`, :func:`ppipp_mean` and :func:`power_tuned_lambda` are
``ppi-python``'s intervals, for unlabelled queries drawn from an infinite population:

    estimate = mean over unlabelled queries of lam * judge  +  mean over labelled queries of (human - lam * judge)

with a normal-approximation interval whose variance adds the two parts' variances (population
variances, ``ddof=0``, as ``ppi-python`` does). ``lam = 1`` is classic PPI; PPI++ (Angelopoulos,
Duchi, Zrnic 2023, "PPI++: Efficient prediction-powered inference", arXiv:2311.01453) tunes
``lam`` to the variance-minimising value, ``cov(human, judge) / ((1 + n/N) var(judge))`` clipped to
[0, 1] (covariance over the labelled queries with ``ddof=0``, variance over all judge values with
``ddof=1``, as the reference computes them); a judge whose values are all equal carries no
information: ``lam = 0`` there (the reference would divide zero by zero). The same numbers as
``ppi_py.ppi_mean_ci`` (``lam=None`` and ``lam=1``) and, for the naive interval,
``ppi_py.classical_mean_ci`` of the judge values (tests/evaluation/test_ppi.py); the benchmark
(benchmarks/ppi_coverage.py) shows where they fail.

The labelled queries are the human sample and the unlabelled ones the rest: the two sets are
disjoint, as the method assumes. The judge's value on a labelled query must come from the same
judging process as everywhere else: the labels the judge gave that query's pool, not the human
ones, or the correction measures nothing. The difference of a system and a baseline is the same
computation on the per-query differences, which keeps the pairing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.evaluation import ppi_simulation
from rankscope.evaluation.ppi_finite import Intervals, finite_ppi_mean

#: the three intervals of every table, in column order: judge alone, classic PPI, PPI++
METHODS = ("naive", "ppi", "ppipp")
_NAMES = {"ppi": "PPI", "ppipp": "PPI++"}


def power_tuned_lambda(human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray) -> np.ndarray:
    """PPI++'s variance-minimising weight of the judge per column, in [0, 1] (0 for a constant judge)."""
    y, labelled, unlabelled = _checked(human, judge_labelled, judge_unlabelled)
    n, big_n = len(y), len(unlabelled)
    covariance = ((y - y.mean(axis=0)) * (labelled - labelled.mean(axis=0))).mean(axis=0)
    variance = np.concatenate([labelled, unlabelled]).var(axis=0, ddof=1)
    informative = variance > 0
    lam = np.divide(covariance, (1 + n / big_n) * variance, out=np.zeros_like(covariance), where=informative)
    return np.clip(lam, 0.0, 1.0).reshape(np.shape(human)[1:])


def ppi_mean(
    human: np.ndarray,
    judge_labelled: np.ndarray,
    judge_unlabelled: np.ndarray,
    *,
    lam: float | np.ndarray = 1.0,
    confidence: float = 0.95,
) -> Intervals:
    """The prediction-powered estimate and interval of each column's mean with the judge weighted by ``lam``.

    ``human`` and ``judge_labelled`` hold the labelled queries' values (rows) and
    ``judge_unlabelled`` the other queries'; 1-d arrays are one column, 2-d ones several (systems,
    or simulated collections), each with its own ``lam`` when ``lam`` is an array.
    """
    y, labelled, unlabelled = _checked(human, judge_labelled, judge_unlabelled)
    weight = np.broadcast_to(np.asarray(lam, dtype=np.float64), y.shape[1:])
    imputed = weight * unlabelled
    rectifier = y - weight * labelled
    estimate = imputed.mean(axis=0) + rectifier.mean(axis=0)
    error = np.sqrt(imputed.var(axis=0) / len(imputed) + rectifier.var(axis=0) / len(rectifier))
    return _interval(estimate, error, confidence, np.ndim(human))


def ppipp_mean(
    human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray, *, confidence: float = 0.95
) -> tuple[Intervals, np.ndarray]:
    """PPI++: :func:`ppi_mean` with :func:`power_tuned_lambda`'s weight; returns the intervals and the weights."""
    lam = power_tuned_lambda(human, judge_labelled, judge_unlabelled)
    return ppi_mean(human, judge_labelled, judge_unlabelled, lam=lam, confidence=confidence), lam


def naive_mean(judge: np.ndarray, *, confidence: float = 0.95) -> Intervals:
    """The judge-only estimate: mean of the judge's values with the normal interval (``ddof=0``), blind to its bias."""
    values = np.asarray(judge, dtype=np.float64)
    if len(values) < 2:
        raise RankscopeError(f"a mean's interval needs at least 2 queries, got {len(values)}")
    error = values.std(axis=0) / np.sqrt(len(values))
    return _interval(values.mean(axis=0), error, confidence, values.ndim)


@dataclass(frozen=True)
class PPIResult:
    """Per-system intervals of one metric's mean (``means``) and of each system's difference with the
    baseline (``differences``, empty without one).

    Columns: ``system`` (and ``baseline`` in ``differences``), ``n_labelled``, ``n_total``, then for
    each of :data:`METHODS` ``<method>_estimate``, ``<method>_low``, ``<method>_high``, then
    ``ppipp_lambda`` (the mean of the cross-fitted weights), ``ppi_simulated`` and ``ppipp_simulated``
    (the lowest coverage the simulation gave at this sample size, 1 when every query is labelled,
    NaN below the smallest simulated one); with a truth, ``truth`` and ``<method>_covered``.
    ``warnings``: :func:`coverage_warning`'s line, if any.
    """

    metric: str
    confidence: float
    means: pd.DataFrame
    differences: pd.DataFrame
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: metric, confidence, one record per row of each table, and the warnings."""
        return {
            "metric": self.metric,
            "confidence": self.confidence,
            "means": _records(self.means),
            "differences": _records(self.differences),
            "warnings": list(self.warnings),
        }


def ppi_intervals(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    *,
    metric: str = "metric",
    baseline: str | None = None,
    truth: Mapping[str, float] | pd.Series | None = None,
    confidence: float = 0.95,
) -> PPIResult:
    """Naive, PPI and PPI++ intervals per system from per-query values (index ``query_id``, a column per system).

    ``judge`` holds every query's value under the judge's labels, ``human`` the human-labelled
    sample's (its queries must be among ``judge``'s; the rest are the unlabelled ones; every query
    may be labelled, which makes the PPI intervals exact). The mean is over ``judge``'s queries. With
    ``baseline``, each other system's per-query difference with it gets the same three intervals.
    ``truth`` (system -> the mean under complete human labels) adds whether each interval covered it.
    """
    if not 0 < confidence < 1:
        raise RankscopeError(f"confidence must be between 0 and 1, got {confidence}")
    judge, human = _frame(judge, "judge"), _frame(human, "human")
    if list(human.columns) != list(judge.columns):
        raise SchemaError(
            f"human and judge values name different systems: {list(human.columns)} vs {list(judge.columns)}"
        )
    outside = human.index.difference(judge.index, sort=True)
    if len(outside):
        raise SchemaError(
            f"human-labelled query {outside[0]!r} has no judge value ({len(outside)} such queries); "
            "the judge must label every query, the sample included"
        )
    if baseline is not None and baseline not in judge.columns:
        raise SchemaError(f"baseline {baseline!r} is not among the systems {list(judge.columns)}")
    labelled = judge.index.isin(human.index)
    y = human.reindex(judge.index[labelled]).to_numpy()
    values = judge.to_numpy()
    systems = list(judge.columns)
    truths = None if truth is None else _truths(truth, systems)
    means = _table("means", systems, y, values, labelled, confidence, truths)
    if baseline is None:
        differences = means.iloc[:0].copy()
    else:
        others = [s for s in systems if s != baseline]
        base = systems.index(baseline)
        keep = [systems.index(s) for s in others]
        delta_truths = None if truths is None else truths[keep] - truths[base]
        differences = _table(
            "differences",
            others,
            y[:, keep] - y[:, [base]],
            values[:, keep] - values[:, [base]],
            labelled,
            confidence,
            delta_truths,
        )
    differences.insert(1, "baseline", pd.Series([baseline] * len(differences), dtype=object))
    warning = coverage_warning(len(y), len(values), confidence, differences=baseline is not None)
    return PPIResult(metric, confidence, means, differences, () if warning is None else (warning,))


def coverage_warning(n_labelled: int, n_total: int, confidence: float, *, differences: bool = True) -> str | None:
    """One line when the simulation (docs/intervals.md) gave intervals from ``n_labelled`` of
    ``n_total`` queries a coverage outside 93.5-96.5%, or none at that size; None when it was within
    (or every query is labelled: the estimate is then exact)."""
    if n_labelled >= n_total:
        return None
    kinds = {"means": ppi_simulation.simulated_coverage(n_labelled, difference=False)}
    if differences:
        kinds["differences"] = ppi_simulation.simulated_coverage(n_labelled, difference=True)
    level = "" if confidence == ppi_simulation.CONFIDENCE else f" (simulated at {ppi_simulation.CONFIDENCE:.0%})"
    found = [s for s in kinds.values() if s is not None]
    if len(found) < len(kinds):
        return (
            f"{n_labelled} human-labelled queries: fewer than the simulation's smallest sample, so how often "
            f"the intervals cover the truth is not known (docs/intervals.md); label more queries"
        )
    if all(s.honest for s in found):
        return None
    parts = [
        f"{kind} {', '.join(f'{_NAMES[m]} {low:.1%}-{high:.1%}' for m, (low, high) in s.coverage.items())}"
        for kind, s in kinds.items()
        if s is not None
    ]
    return (
        f"{n_labelled} human-labelled queries: in simulation the 95% intervals from {found[0].labelled} covered the "
        f"truth in {'; '.join(parts)} of collections{level}, not always 93.5-96.5% (docs/intervals.md); "
        "label more queries for intervals to trust"
    )


def ppi_evaluate(
    human_qrels: pd.DataFrame,
    judged_qrels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    metric: str,
    *,
    baseline: str | None = None,
    queries: Sequence[str] | None = None,
    truth_qrels: pd.DataFrame | None = None,
    confidence: float = 0.95,
    relevance_level: int = 1,
) -> PPIResult:
    """:func:`ppi_intervals` of ``metric`` for each run, from qrels.

    ``judged_qrels`` are the labels the judging process gives every query (the merged qrels of
    ``rankscope judge``: human labels where they existed, the judge's elsewhere, and the judge's on
    the sampled queries' pools); ``human_qrels`` are the human labels of the random sample, whose
    queries are the labelled ones. ``queries`` is the population the mean is over (default: the
    queries of both qrels); a query without judgments scores 0 (trec_eval ``-c``). ``truth_qrels``
    (complete human labels, a calibration study's) gives each system's true mean over the same
    queries and whether each interval covered it.
    """
    from rankscope.corpora.schema import validate
    from rankscope.evaluation.engine import evaluate

    sources = {"human qrels": human_qrels, "judged qrels": judged_qrels}
    if truth_qrels is not None:
        sources["truth qrels"] = truth_qrels
    sources = {name: validate(qrels, "qrels", name) for name, qrels in sources.items()}
    population = _population(sources, queries)
    if not runs:
        raise RankscopeError("no runs to estimate")

    def per_query(qrels: pd.DataFrame, run: pd.DataFrame, index: pd.Index) -> pd.Series:
        result = evaluate(qrels, run, [metric], relevance_level=relevance_level)
        values = result.per_query.set_index("query_id")["value"]
        return values.reindex(index, fill_value=0.0)

    sample = pd.Index(pd.unique(sources["human qrels"]["query_id"]), name="query_id")
    judge = pd.DataFrame({name: per_query(sources["judged qrels"], run, population) for name, run in runs.items()})
    human = pd.DataFrame({name: per_query(sources["human qrels"], run, sample) for name, run in runs.items()})
    truth = None
    if truth_qrels is not None:
        truth_values = {name: per_query(sources["truth qrels"], run, population) for name, run in runs.items()}
        truth = {name: float(values.mean()) for name, values in truth_values.items()}
    return ppi_intervals(human, judge, metric=metric, baseline=baseline, truth=truth, confidence=confidence)


def _table(
    kind: str,
    systems: list[str],
    human: np.ndarray,
    judge: np.ndarray,
    labelled: np.ndarray,
    confidence: float,
    truth: np.ndarray | None,
) -> pd.DataFrame:
    """One row per column of ``judge``: the three intervals, PPI++'s weight, the simulated coverage and,
    with a truth, whether each interval covered it."""
    labelled_judge, unlabelled_judge = judge[labelled], judge[~labelled]
    found = {
        "naive": naive_mean(judge, confidence=confidence),
        "ppi": finite_ppi_mean(human, labelled_judge, unlabelled_judge, lam=1.0, confidence=confidence)[0],
    }
    found["ppipp"], lam = finite_ppi_mean(human, labelled_judge, unlabelled_judge, lam=None, confidence=confidence)
    table = pd.DataFrame({"system": pd.Series(systems, dtype=object), "n_labelled": len(human), "n_total": len(judge)})
    for method in METHODS:
        table[f"{method}_estimate"] = found[method].estimate
        table[f"{method}_low"] = found[method].low
        table[f"{method}_high"] = found[method].high
    table["ppipp_lambda"] = lam
    simulated = ppi_simulation.simulated_coverage(len(human), difference=kind == "differences")
    for method in ("ppi", "ppipp"):
        exact = len(human) == len(judge)
        table[f"{method}_simulated"] = 1.0 if exact else np.nan if simulated is None else simulated.coverage[method][0]
    if truth is not None:
        table["truth"] = truth
        for method in METHODS:
            table[f"{method}_covered"] = found[method].covers(truth)
    return table


def _interval(estimate: np.ndarray, error: np.ndarray, confidence: float, ndim: int) -> Intervals:
    if not 0 < confidence < 1:
        raise RankscopeError(f"confidence must be between 0 and 1, got {confidence}")
    from scipy.stats import norm

    half = norm.ppf(1 - (1 - confidence) / 2) * error
    shape = () if ndim == 1 else np.shape(estimate)
    return Intervals(*(np.reshape(v, shape) for v in (estimate, estimate - half, estimate + half)))


def _checked(
    human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three value arrays as float64 with a column axis, shapes checked."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (human, judge_labelled, judge_unlabelled)]
    y, labelled, unlabelled = (a.reshape(len(a), -1) if a.ndim == 1 else a for a in arrays)
    if y.shape != labelled.shape or y.ndim != 2 or unlabelled.shape[1:] != y.shape[1:]:
        raise ValueError(
            f"human and labelled judge values need one shape and the unlabelled as many columns; "
            f"got {y.shape}, {labelled.shape}, {unlabelled.shape}"
        )
    if len(y) < 2 or len(unlabelled) < 1:
        raise RankscopeError(
            f"prediction-powered intervals need at least 2 labelled queries and 1 unlabelled one; "
            f"got {len(y)} and {len(unlabelled)}"
        )
    return y, labelled, unlabelled


#: the largest per-query value averaged: their squares and sums stay finite (a metric's are near 1)
LARGEST_VALUE = 1e100


def _frame(values: pd.DataFrame, name: str) -> pd.DataFrame:
    """Per-query values as float64 with str query ids, each id once and every value a finite number
    within ±:data:`LARGEST_VALUE`."""
    if not isinstance(values, pd.DataFrame):
        raise SchemaError(f"{name} values: expected a DataFrame indexed by query_id, got {type(values).__name__}")
    frame = values.copy()
    frame.index = frame.index.astype(str)
    repeated = frame.index[frame.index.duplicated()]
    if len(repeated):
        raise SchemaError(f"{name} values: query {repeated[0]!r} appears more than once")
    numeric = frame.apply(pd.to_numeric, errors="coerce").astype(np.float64)
    array = numeric.to_numpy()
    bad = ~np.isfinite(array)
    huge = np.abs(np.where(bad, 0.0, array)) > LARGEST_VALUE
    for wrong, problem in ((bad, "has no finite value"), (huge, f"is beyond ±{LARGEST_VALUE:g}, too large to average")):
        if wrong.any():
            row, column = (int(i[0]) for i in np.nonzero(wrong))
            raise SchemaError(
                f"{name} values: system {frame.columns[column]!r}, query {frame.index[row]!r} {problem} "
                f"({frame.iat[row, column]!r})"
            )
    return numeric


def _truths(truth: Mapping[str, float] | pd.Series, systems: list[str]) -> np.ndarray:
    missing = [s for s in systems if s not in truth]
    if missing:
        raise SchemaError(f"truth: no value for system {missing[0]!r}")
    return np.array([float(truth[s]) for s in systems])


def _population(sources: Mapping[str, pd.DataFrame], queries: Sequence[str] | None) -> pd.Index:
    """The queries the mean is over: ``queries`` (every qrels query must be one), else all qrels queries."""
    found = {name: pd.unique(qrels["query_id"]) for name, qrels in sources.items()}
    if queries is None:
        return pd.Index(pd.unique(np.concatenate(list(found.values()))), name="query_id")
    population = pd.Index(pd.unique(np.asarray(queries, dtype=object).astype(str)), name="query_id")
    for name, ids in found.items():
        outside = pd.Index(ids).difference(population, sort=True)
        if len(outside):
            raise SchemaError(f"{name}: query {outside[0]!r} is not among the {len(population)} queries estimated over")
    return population


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()} for row in table.to_dict("records")
    ]
