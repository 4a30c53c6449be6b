"""Significance tests against scipy, exact enumeration and hand-worked corrections."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankscope.core import progress
from rankscope.core.errors import SchemaError
from rankscope.evaluation import evaluate
from rankscope.evaluation.significance import (
    adjust_pvalues,
    align,
    bootstrap_ci,
    compare_results,
    compare_systems,
    randomization_test,
    t_test,
    wilcoxon_test,
)

RNG = np.random.default_rng(42)
BASE = RNG.uniform(0, 1, size=40)
SYSTEM = np.clip(BASE + RNG.normal(0.08, 0.2, size=40), 0, 1)


def _exact_sign_flip_p(diffs: np.ndarray) -> float:
    """All 2^n sign assignments, written independently of the vectorised code."""
    observed = abs(sum(diffs))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=len(diffs))
    )
    return hits / 2 ** len(diffs)


def test_t_and_wilcoxon_match_scipy() -> None:
    assert t_test(SYSTEM, BASE) == pytest.approx(stats.ttest_rel(SYSTEM, BASE).pvalue, rel=1e-12)
    assert wilcoxon_test(SYSTEM, BASE) == pytest.approx(stats.wilcoxon(SYSTEM, BASE).pvalue, rel=1e-12)
    # a clear effect on 40 queries is significant, and both tests agree on direction
    assert t_test(SYSTEM, BASE) < 0.05


def test_randomization_enumerates_exactly_when_cheap() -> None:
    diffs = np.array([0.3, -0.1, 0.25, 0.05, 0.4, -0.2, 0.15, 0.1, -0.05, 0.35])
    exact = _exact_sign_flip_p(diffs)
    assert 0 < exact < 0.2  # a non-trivial example
    assert randomization_test(diffs, np.zeros_like(diffs), n_permutations=2**10) == pytest.approx(exact, abs=1e-15)


def test_randomization_monte_carlo_close_to_exact() -> None:
    diffs = np.array([0.3, -0.1, 0.25, 0.05, 0.4, -0.2, 0.15, 0.1, -0.05, 0.35, 0.02, -0.3, 0.12, 0.07])
    exact = _exact_sign_flip_p(diffs)
    sampled = randomization_test(diffs, np.zeros_like(diffs), n_permutations=10_000, seed=7)
    standard_error = np.sqrt(exact * (1 - exact) / 10_000)
    assert abs(sampled - exact) < 4 * standard_error


def test_randomization_same_seed_same_p() -> None:
    first = randomization_test(SYSTEM, BASE, seed=3)
    assert randomization_test(SYSTEM, BASE, seed=3) == first
    assert randomization_test(SYSTEM, BASE, seed=4) != first
    # Monte Carlo p-values are (b + 1) / (R + 1)
    assert (first * 10_001) == pytest.approx(round(first * 10_001))


def test_identical_systems_give_p_one() -> None:
    for test in (t_test, wilcoxon_test, randomization_test):
        assert test(BASE, BASE.copy()) == 1.0


def test_holm_and_bonferroni_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Bonferroni: p * m, capped at 1
    np.testing.assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    np.testing.assert_allclose(adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.6], "holm"), [1.0, 1.0])
    np.testing.assert_allclose(adjust_pvalues(p, "none"), p)
    with pytest.raises(ValueError, match=r"p-value 1 is nan"):
        adjust_pvalues([0.5, float("nan")], "holm")
    with pytest.raises(ValueError, match=r"p-value 2 is 1.5"):
        adjust_pvalues([0.5, 0.2, 1.5], "none")


@pytest.mark.parametrize(("n", "resamples"), [(40, 10_000), (600, 10_000), (3, 50)])
def test_bootstrap_interval_equals_a_resample_by_resample_reference(n: int, resamples: int) -> None:
    # the counts x differences product is the mean of each resample's drawn differences; 600 x 10,000
    # draws span several blocks (the counts are not kept), 40 x 10,000 one kept block, used twice
    rng = np.random.default_rng(n)
    system, base = rng.random(n), rng.random(n)
    drawn = np.random.default_rng(7).integers(0, n, size=(resamples, n))
    expected = np.quantile((system - base)[drawn].mean(axis=1), [0.05, 0.95])
    for _ in range(2):
        found = bootstrap_ci(system, base, n_resamples=resamples, confidence=0.9, seed=7)
        np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-15)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    low, high = bootstrap_ci(SYSTEM, BASE, seed=1)
    assert bootstrap_ci(SYSTEM, BASE, seed=1) == (low, high)
    delta = float(np.mean(SYSTEM - BASE))
    assert low < delta < high
    # the percentile interval is close to the normal-theory one for 40 queries
    se = np.std(SYSTEM - BASE, ddof=1) / np.sqrt(40)
    assert low == pytest.approx(delta - 1.96 * se, abs=0.35 * se)
    assert high == pytest.approx(delta + 1.96 * se, abs=0.35 * se)


def _series(values: np.ndarray, prefix: str = "q") -> pd.Series:
    return pd.Series(values, index=[f"{prefix}{i}" for i in range(len(values))])


def test_compare_systems_table() -> None:
    worse = np.clip(BASE - RNG.uniform(0, 0.05, size=40), 0, 1)
    per_query = {"base": _series(BASE), "better": _series(SYSTEM)[::-1], "worse": _series(worse)}
    table = compare_systems(per_query, "base", test="t", correction="bonferroni")
    assert list(table["system"]) == ["better", "worse"]
    row = table.iloc[0]
    assert row["delta"] == pytest.approx(SYSTEM.mean() - BASE.mean())
    assert row["p_value"] == pytest.approx(stats.ttest_rel(SYSTEM, BASE).pvalue)  # aligned despite reversed order
    assert row["p_adjusted"] == pytest.approx(min(1.0, 2 * row["p_value"]))
    assert bool(row["significant"]) == (row["p_adjusted"] < 0.05)
    assert row["ci_low"] < row["delta"] < row["ci_high"]
    again = compare_systems(per_query, "base", seed=0)
    pd.testing.assert_frame_equal(again, compare_systems(per_query, "base", seed=0))


def test_missing_query_is_an_error_naming_it() -> None:
    per_query = {"a": _series(BASE), "b": _series(SYSTEM).drop("q7")}
    with pytest.raises(SchemaError, match=r"'q7'.*missing from system 'b'"):
        align(per_query)
    with pytest.raises(SchemaError, match="baseline 'zzz'"):
        compare_systems(per_query, "zzz")


def test_t_test_needs_two_queries() -> None:
    with pytest.raises(ValueError, match="at least 2 queries"):
        t_test(np.array([0.5]), np.array([0.2]))


def _random_run(rng: np.random.Generator, queries: list[str], docs: list[str]) -> pd.DataFrame:
    rows = [(q, d, float(rng.integers(0, 5))) for q in queries for d in docs]  # integer scores: many ties
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


QRELS_COLUMNS = ["query_id", "doc_id", "relevance"]


def test_compare_results_per_metric_from_evaluation_results() -> None:
    rng = np.random.default_rng(5)
    queries, docs = [f"q{i}" for i in range(25)], [f"d{i}" for i in range(12)]
    judgments = [(q, d, int(rng.integers(0, 3))) for q in queries for d in docs[:6]]
    qrels = pd.DataFrame(judgments, columns=["query_id", "doc_id", "relevance"])
    metrics = ["ndcg@10", "hit@3"]
    results = {name: evaluate(qrels, _random_run(rng, queries, docs), metrics) for name in ("base", "a", "b")}
    table = compare_results(results, "base", test="wilcoxon", correction="holm")
    assert list(table["metric"]) == ["ndcg@10", "ndcg@10", "hit@3", "hit@3"]
    assert list(table["system"]) == ["a", "b", "a", "b"]
    for metric in ("ndcg@10", "hit@3"):
        rows = table[table["metric"] == metric]
        expected = [
            stats.wilcoxon(results[s].wide()[metric], results["base"].wide()[metric]).pvalue for s in ("a", "b")
        ]
        np.testing.assert_allclose(rows["p_value"], expected, rtol=1e-12)
        np.testing.assert_allclose(rows["p_adjusted"], adjust_pvalues(expected, "holm"))  # family = one metric
        assert rows["baseline_mean"].iloc[0] == pytest.approx(results["base"].mean[metric])
    with pytest.raises(SchemaError, match="no per-query values for metric 'map'"):
        compare_results(results, "base", ["map"])


def test_compare_results_shows_a_bar_per_metric_and_the_same_table(monkeypatch, capsys) -> None:
    rng = np.random.default_rng(6)
    queries, docs = [f"q{i}" for i in range(20)], [f"d{i}" for i in range(10)]
    qrels = pd.DataFrame([(q, d, int(rng.integers(0, 2))) for q in queries for d in docs[:5]], columns=QRELS_COLUMNS)
    results = {name: evaluate(qrels, _random_run(rng, queries, docs), ["ndcg@10", "map"]) for name in ("x", "y")}
    monkeypatch.setattr(progress, "_quiet", True)
    quiet = compare_results(results, "x")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "_quiet", False)
    shown = compare_results(results, "x")
    err = capsys.readouterr().err
    assert "significance: 2/2 metric (map)" in err  # a line (stderr is not a terminal) naming the metric tested
    pd.testing.assert_frame_equal(quiet, shown)


def _drawn_block_by_block(system: np.ndarray, baseline: np.ndarray, n_permutations: int, seed: int) -> float:
    """The Monte Carlo p-value with its sign patterns drawn afresh, int8, in blocks (the reference)."""
    from rankscope.evaluation import significance

    diffs = system - baseline
    observed = abs(diffs.sum())
    threshold = observed - significance._TOLERANCE * max(observed, np.abs(diffs).sum())
    rng = np.random.default_rng(seed)
    extreme = 0
    for _, rows in significance._blocks(n_permutations, len(diffs)):
        signs = 1 - 2 * rng.integers(0, 2, size=(rows, len(diffs)), dtype=np.int8)
        extreme += int(np.count_nonzero(np.abs(signs @ diffs) >= threshold))
    return (extreme + 1) / (n_permutations + 1)


@pytest.mark.parametrize(("n", "n_permutations"), [(225, 10_000), (80, 999), (1_000, 10_000), (70, 500)])
def test_kept_sign_patterns_give_the_p_values_of_fresh_draws(n: int, n_permutations: int) -> None:
    rng = np.random.default_rng(n)
    for seed in (0, 7, 0):  # the second seed replaces the kept patterns; the first comes back
        for shift in (0.0, 0.01, 0.05):
            baseline = rng.random(n)
            system = baseline + rng.normal(0, 0.1, n) + shift
            system[::3] = baseline[::3]  # ties: zero differences
            expected = _drawn_block_by_block(system, baseline, n_permutations, seed)
            got = randomization_test(system, baseline, n_permutations=n_permutations, seed=seed)
            assert got == expected


def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    return min(library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas")


def test_resampled_products_run_on_one_blas_thread_and_give_it_back(monkeypatch) -> None:
    """Every product of the randomization test, the bootstrap interval and the tiers' bootstrap is made on
    one BLAS thread (significance.one_blas_thread), and the count set before is back afterwards."""
    from threadpoolctl import threadpool_limits

    from rankscope.evaluation import significance
    from rankscope.evaluation.tiers import bootstrap_means

    seen: list[int] = []
    drawn = significance._drawn_blocks

    def watched(*args):
        for block in drawn(*args):
            seen.append(_blas_threads())  # while the caller multiplies this block
            yield block

    monkeypatch.setattr(significance, "_drawn_blocks", watched)
    rng = np.random.default_rng(3)
    baseline = rng.random(300)
    system = baseline + rng.normal(0, 0.1, 300)
    with threadpool_limits(2, user_api="blas"):
        assert _blas_threads() == 2
        randomization_test(system, baseline, n_permutations=20_000, seed=1)  # several streamed blocks
        bootstrap_ci(system, baseline, n_resamples=2_000, seed=1)
        bootstrap_means(np.column_stack([system, baseline]), 500, 1)
        assert _blas_threads() == 2
    assert len(seen) >= 4 and set(seen) == {1}
