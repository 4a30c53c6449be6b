"""Synthetic judged collections whose truth is known, the coverage the intervals reach on them, and the
table of that coverage every interval is reported with.

A collection has ``queries`` queries and two systems, A and B, each with a top 10 of graded
documents (0-3): a query's ease ``u ~ Beta(1.2, 2.5)`` makes a document at rank ``k`` relevant with
probability ``0.8 u / sqrt(k)`` for A and ``0.6 u / sqrt(k) + 0.15`` for B, and humans also know up
to 10 relevant documents neither system retrieved (Poisson(3u)), which only they count in the ideal
DCG. The metric is nDCG@10 with linear gains; the judge labels the pooled 20 documents and its
nDCG's ideal is theirs. Three judges (:data:`JUDGES`):

- ``random``: each label replaced by a uniform grade with probability 0.3;
- ``system``: misses 20% of relevant documents, calls 35% of B's non-relevant ones relevant (grade
  1-2) but 5% of A's (its errors favour B, as a judge that rewards term overlap does);
- ``query``: answers 0 for every document of half the queries (it failed there), and flips 10% of
  the labels elsewhere.

Every collection is one column of ``(queries, collections)`` arrays, all at once. The queries are
drawn independently, so the first ``n`` are a uniform sample without replacement of the ``queries``;
the truth is the mean over all of them under human labels. ``benchmarks/ppi_coverage.py`` runs the
grid (2,000 collections a cell) and writes :data:`TABLE`, which :func:`simulated_coverage` reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.evaluation.ppi_finite import finite_ppi_mean

JUDGES = ("random", "system", "query")
QUANTITIES = ("A", "B", "B - A")
#: the finite-population intervals the tables report: classic PPI (the judge weighed 1) and PPI++ (cross-fitted)
METHODS = {"ppi": 1.0, "ppipp": None}
#: what the intervals must reach: 95% within the simulation's tolerance (issue 43)
BAND = (0.935, 0.965)
CONFIDENCE = 0.95
TABLE = Path(__file__).with_name("ppi_coverage.json")
DEPTH = 10
_DISCOUNT = 1 / np.log2(np.arange(2, DEPTH + 2))


@dataclass(frozen=True)
class Collections:
    """Per quantity (A, B, B - A), the human and the judge's nDCG@10, shape ``(queries, collections)``."""

    human: dict[str, np.ndarray]
    judge: dict[str, np.ndarray]


def synthetic_collections(collections: int, queries: int, judge: str, seed: int) -> Collections:
    """``collections`` synthetic collections of ``queries`` queries judged by ``judge`` (one of :data:`JUDGES`)."""
    a, b, unretrieved, judged_a, judged_b = _graded(collections, queries, judge, np.random.default_rng(seed))
    known = np.concatenate([a, b, (np.arange(DEPTH) < unretrieved[..., None]).astype(np.int64)], axis=-1)
    human = {"A": _ndcg(a, known), "B": _ndcg(b, known)}
    pool = np.concatenate([judged_a, judged_b], axis=-1)
    judged = {"A": _ndcg(judged_a, pool), "B": _ndcg(judged_b, pool)}
    for values in (human, judged):
        values["B - A"] = values["B"] - values["A"]
    return Collections({k: v.T.copy() for k, v in human.items()}, {k: v.T.copy() for k, v in judged.items()})


def _graded(collections: int, queries: int, judge: str, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Human grades of A's and B's top 10, the relevant documents neither retrieved, the judge's grades."""
    if judge not in JUDGES:
        raise ValueError(f"judge must be one of {JUDGES}, got {judge!r}")
    shape = (collections, queries, DEPTH)
    ease = rng.beta(1.2, 2.5, size=(collections, queries, 1))
    decay = 1 / np.sqrt(np.arange(1, DEPTH + 1))

    def labels(share: np.ndarray) -> np.ndarray:
        grade = rng.choice([1, 2, 3], size=shape, p=[0.5, 0.3, 0.2])
        return np.where(rng.random(shape) < share, grade, 0)

    a, b = labels(0.8 * ease * decay), labels(np.clip(0.6 * ease * decay + 0.15, 0, 1))
    unretrieved = np.minimum(rng.poisson(3 * ease[..., 0]), DEPTH)
    return (a, b, unretrieved, *_judged(a, b, judge, rng))


def _judged(a: np.ndarray, b: np.ndarray, judge: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The judge's labels of both systems' documents."""
    if judge == "system":

        def favouring(x: np.ndarray, false_positive: float) -> np.ndarray:
            kept = np.where(rng.random(x.shape) < 0.2, 0, x)
            called = np.where(rng.random(x.shape) < false_positive, rng.integers(1, 3, x.shape), 0)
            return np.where(x > 0, kept, called)

        return favouring(a, 0.05), favouring(b, 0.35)
    flip = 0.3 if judge == "random" else 0.1
    failed = np.zeros((*a.shape[:2], 1), bool) if judge == "random" else rng.random((*a.shape[:2], 1)) < 0.5

    def flipped(x: np.ndarray) -> np.ndarray:
        return np.where(failed, 0, np.where(rng.random(x.shape) < flip, rng.integers(0, 4, x.shape), x))

    return flipped(a), flipped(b)


def _ndcg(labels: np.ndarray, known: np.ndarray) -> np.ndarray:
    """nDCG@10 of ranked ``labels`` (last axis), the ideal from the ``known`` labels of the query; 0 without any."""
    dcg = (labels * _DISCOUNT).sum(axis=-1)
    ideal = (-np.sort(-known, axis=-1)[..., :DEPTH] * _DISCOUNT).sum(axis=-1)
    return np.divide(dcg, ideal, out=np.zeros_like(dcg, dtype=np.float64), where=ideal > 0)


def coverage_cells(found: Collections, labelled: int) -> list[dict[str, Any]]:
    """Per quantity and method (:data:`METHODS`), the share of collections whose 95% interval from the
    first ``labelled`` queries covers the mean over all of them, its mean width and the estimate's bias."""
    cells = []
    for quantity in QUANTITIES:
        human, judge = found.human[quantity], found.judge[quantity]
        truth = human.mean(axis=0)
        for method, lam in METHODS.items():
            interval, _ = finite_ppi_mean(
                human[:labelled], judge[:labelled], judge[labelled:], lam=lam, confidence=CONFIDENCE
            )
            covered = interval.covers(truth)
            cells.append(
                {
                    "quantity": quantity,
                    "method": method,
                    "coverage": float(covered.mean()),
                    "width": float(np.mean(interval.high - interval.low)),
                    "bias": float(np.mean(interval.estimate - truth)),
                }
            )
    return cells


@dataclass(frozen=True)
class Simulated:
    """What the simulation gave at the simulated sample size nearest below a real one: per method, the
    lowest and highest coverage over its judges, populations and quantities of one kind (means or
    differences)."""

    labelled: int
    coverage: dict[str, tuple[float, float]]

    @property
    def honest(self) -> bool:
        """Every cell within :data:`BAND`."""
        return all(BAND[0] <= low and high <= BAND[1] for low, high in self.coverage.values())


@cache
def _table() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return loaded


def simulated_coverage(labelled: int, difference: bool) -> Simulated | None:
    """The simulation's coverage at the largest simulated sample size up to ``labelled`` (never the
    every-query cells, where the interval is exact), or None below the smallest one."""
    cells = [c for c in _table()["cells"] if c["labelled"] < c["queries"]]
    below = [c["labelled"] for c in cells if c["labelled"] <= labelled]
    if not below:
        return None
    nearest = max(below)
    kind = [c for c in cells if c["labelled"] == nearest and (c["quantity"] == "B - A") == difference]
    found = {m: [c["coverage"] for c in kind if c["method"] == m] for m in METHODS}
    return Simulated(nearest, {m: (min(values), max(values)) for m, values in found.items()})


#: the rank bands of a pair sample's strata (with the system): ranks 1, 2-3, 4-7, 8-10
BANDS = (1, 3, 7)


@dataclass(frozen=True)
class SyntheticPool:
    """One synthetic collection's pooled pairs (A's top 10 and B's, per query) as the arrays of
    :class:`~rankscope.evaluation.pair_sample.Pairs`, every pair labelled by people, and each system's
    ranks and the pairs' strata (rank band by system)."""

    query: np.ndarray
    human: np.ndarray
    judge: np.ndarray
    ranks: dict[str, np.ndarray]
    stratum: np.ndarray
    queries: int


def synthetic_pool(queries: int, judge: str, seed: int) -> SyntheticPool:
    """The pool of one collection of :func:`synthetic_collections`' kind (queries, judge)."""
    a, b, _, judged_a, judged_b = _graded(1, queries, judge, np.random.default_rng(seed))
    ranks = np.arange(1, DEPTH + 1)
    own = np.zeros(DEPTH, dtype=np.int64)
    band = np.searchsorted(BANDS, np.concatenate([ranks, ranks]))
    system = np.repeat([0, 1], DEPTH)
    return SyntheticPool(
        query=np.repeat(np.arange(queries), 2 * DEPTH),
        human=np.concatenate([a[0], b[0]], axis=-1).ravel().astype(float),
        judge=np.concatenate([judged_a[0], judged_b[0]], axis=-1).ravel().astype(float),
        ranks={
            "A": np.tile(np.concatenate([ranks, own]), queries),
            "B": np.tile(np.concatenate([own, ranks]), queries),
        },
        stratum=np.tile(band + (len(BANDS) + 1) * system, queries),
        queries=queries,
    )


def pair_coverage(pool: SyntheticPool, budget: int, samples: int, seed: int) -> list[dict[str, Any]]:
    """Per quantity (A, B, B - A), over ``samples`` stratified samples of ``budget`` pairs (shared out
    in proportion to the strata's sizes, at least 2 each): the share whose 95% precision@10 interval
    covers the value under the people's labels, the share warned of (too few disagreements), and the
    coverage of those not warned of."""
    from scipy.stats import t

    from rankscope.evaluation.pair_sample import FEW_DISAGREEMENTS, Pairs, disagreements, estimate_system, variance

    rng = np.random.default_rng(seed)
    everything = Pairs(pool.query, pool.judge, pool.human, np.ones(len(pool.human)), pool.stratum, pool.queries)
    truth = {s: estimate_system(everything, r, DEPTH).per_query.mean() for s, r in pool.ranks.items()}
    truth["B - A"] = truth["B"] - truth["A"]
    sizes = np.bincount(pool.stratum)
    drawn = np.minimum(sizes, np.maximum(2, np.round(budget * sizes / sizes.sum()).astype(int)))
    members = [np.flatnonzero(pool.stratum == h) for h in range(len(sizes))]
    found: dict[str, list[tuple[bool, bool]]] = {q: [] for q in truth}
    for _ in range(samples):
        chosen = np.concatenate([rng.choice(m, n, replace=False) for m, n in zip(members, drawn) if n])
        probability = np.full(len(pool.human), np.nan)
        probability[chosen] = (drawn / np.maximum(sizes, 1))[pool.stratum[chosen]]
        human = np.where(np.isnan(probability), np.nan, pool.human)
        pairs = Pairs(pool.query, pool.judge, human, probability, pool.stratum, pool.queries)
        a, b = (estimate_system(pairs, pool.ranks[s], DEPTH) for s in ("A", "B"))
        for quantity, per_query, influence in (
            ("A", a.per_query, a.influence),
            ("B", b.per_query, b.influence),
            ("B - A", b.per_query - a.per_query, b.influence - a.influence),
        ):
            var, df = variance(pairs, influence)
            half = t.ppf(0.5 + CONFIDENCE / 2, df) * np.sqrt(var)
            covered = abs(per_query.mean() - truth[quantity]) <= half + 1e-12
            found[quantity].append((bool(covered), disagreements(pairs, influence) < FEW_DISAGREEMENTS))
    cells = []
    for quantity, outcomes in found.items():
        covered, warned = np.array(outcomes).T
        cells.append(
            {
                "quantity": quantity,
                "coverage": float(covered.mean()),
                "warned": float(warned.mean()),
                "coverage_not_warned": float(covered[~warned].mean()) if (~warned).any() else None,
            }
        )
    return cells
