"""Coverage of the 95% intervals on 2,000 synthetic collections judged by a biased judge whose truth is known.

Each collection has ``queries`` queries; system A's top 10 for a query holds Binomial(10, p) relevant
documents with p = 0.8 u and system B's with p = 0.6 u + 0.3, u ~ Beta(2, 3) the query's ease, so
the true mean precision@10 is 0.32 for A, 0.54 for B and 0.22 for B - A. The judge misses 30% of
the relevant documents and calls 5% of A's non-relevant ones relevant but 30% of B's (it favours
B's kind of document), so its mean is biased differently per system. Humans label the first
``labelled`` queries: the queries are drawn independently, so these are a uniform random sample.
Every collection is one column of the arrays (all 2,000 at once, vectorised).

``python tests/evaluation/test_ppi_coverage.py [--queries N --labelled n --collections R --seed S]``
prints the coverage and mean widths (the numbers in docs/metrics.md).
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from rankscope.evaluation.ppi import Intervals, naive_mean, ppi_mean, ppipp_mean

DEPTH = 10
TRUTH = {"A": 0.8 * 0.4, "B": 0.6 * 0.4 + 0.3}  # E[u] = 2 / (2 + 3)
MISSED = 0.3
FALSE_POSITIVE = {"A": 0.05, "B": 0.3}


def simulate(collections: int, queries: int, labelled: int, seed: int) -> dict[str, dict[str, object]]:
    """Per quantity (A, B, B - A): the truth, the human values over all queries, and each method's intervals."""
    rng = np.random.default_rng(seed)
    ease = rng.beta(2, 3, size=(queries, collections))
    share = {"A": 0.8 * ease, "B": 0.6 * ease + 0.3}
    human, judge = {}, {}
    for system in ("A", "B"):
        relevant = rng.binomial(DEPTH, share[system])
        judged = rng.binomial(relevant, 1 - MISSED) + rng.binomial(DEPTH - relevant, FALSE_POSITIVE[system])
        human[system], judge[system] = relevant / DEPTH, judged / DEPTH
    human["B - A"], judge["B - A"] = human["B"] - human["A"], judge["B"] - judge["A"]
    truths = {**TRUTH, "B - A": TRUTH["B"] - TRUTH["A"]}
    out: dict[str, dict[str, object]] = {}
    for quantity, truth in truths.items():
        y, values = human[quantity][:labelled], judge[quantity]
        tuned, lam = ppipp_mean(y, values[:labelled], values[labelled:])
        out[quantity] = {
            "truth": truth,
            "human": human[quantity],
            "lambda": lam,
            "naive": naive_mean(values),
            "ppi": ppi_mean(y, values[:labelled], values[labelled:]),
            "ppipp": tuned,
            "human_only": ppi_mean(y, values[:labelled], values[labelled:], lam=0.0),
        }
    return out


def coverage(interval: Intervals, truth: float | np.ndarray) -> float:
    return float(np.mean((interval.low <= truth) & (truth <= interval.high)))


def width(interval: Intervals) -> float:
    return float(np.mean(interval.high - interval.low))


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, object]]:
    return simulate(collections=2000, queries=600, labelled=80, seed=7)


def test_ppi_and_ppipp_cover_the_truth_about_95_percent(results: dict[str, dict[str, object]]) -> None:
    for quantity, found in results.items():
        for method in ("ppi", "ppipp"):
            assert 0.935 <= coverage(found[method], found["truth"]) <= 0.965, (quantity, method)


def test_naive_judge_only_interval_fails(results: dict[str, dict[str, object]]) -> None:
    """Narrow around the judge's biased mean: it covers the truth in at most 1 collection in 10."""
    for quantity, found in results.items():
        assert coverage(found["naive"], found["truth"]) < 0.10, quantity
        assert width(found["naive"]) < width(found["ppipp"]) / 2, quantity


def test_the_judge_buys_precision(results: dict[str, dict[str, object]]) -> None:
    """PPI++ is never wider than the human-only interval by more than noise, and much narrower where the
    judge tracks the humans (A); it beats classic PPI where the judge's bias varies (B and B - A)."""
    for quantity, found in results.items():
        assert width(found["ppipp"]) < 1.02 * width(found["human_only"]), quantity
    assert width(results["A"]["ppipp"]) < 0.7 * width(results["A"]["human_only"])
    for quantity in ("B", "B - A"):
        assert width(results[quantity]["ppipp"]) < 0.9 * width(results[quantity]["ppi"]), quantity
        assert 0.3 < float(np.mean(results[quantity]["lambda"])) < 0.7, quantity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--labelled", type=int, default=80)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    results = simulate(args.collections, args.queries, args.labelled, args.seed)
    print(f"{args.collections} collections, {args.queries} queries, {args.labelled} human-labelled, seed {args.seed}")
    print("quantity  method      covers truth  covers same-queries value  mean width")
    for quantity, found in results.items():
        finite = np.mean(found["human"], axis=0)  # the value under complete human labels of these queries
        for method in ("naive", "ppi", "ppipp", "human_only"):
            print(
                f"{quantity:8}  {method:10}  {coverage(found[method], found['truth']):12.1%}  "
                f"{coverage(found[method], finite):25.1%}  {width(found[method]):10.4f}"
            )


if __name__ == "__main__":
    main()
