"""Rank intervals and tiers (evaluation/tiers.py): the pair tests equal scipy's, the bootstrap equals
a resample-by-resample reference, and simulations with known truth hold the family-wise error and
reach the power the t distribution predicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankscope.core.errors import SchemaError
from rankscope.evaluation.significance import adjust_pvalues, t_test
from rankscope.evaluation.tiers import bootstrap_means, competition_ranks, pair_pvalues, rank_tiers, tier_numbers


def frame(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        values, index=[f"q{i}" for i in range(len(values))], columns=[f"s{k}" for k in range(values.shape[1])]
    )


def test_pair_pvalues_equal_scipys_paired_t_test_including_degenerate_pairs() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 64, size=(40, 6)) / 64  # multiples of 1/64: the shift below is exact
    values[:, 4] = values[:, 1]  # identical to s1: p = 1
    values[:, 5] = values[:, 2] + 0.125  # a constant difference with s2: p = 0
    i, j, p = pair_pvalues(values)
    for a, b, found in zip(i, j, p):
        assert found == pytest.approx(t_test(values[:, a], values[:, b]), abs=1e-12)
    random_pairs = [(a, b) for a, b in zip(i, j) if {a, b} <= {0, 1, 2, 3}]
    for a, b in random_pairs:
        assert p[(i == a) & (j == b)][0] == pytest.approx(stats.ttest_rel(values[:, a], values[:, b]).pvalue, rel=1e-9)
    assert p[(i == 1) & (j == 4)][0] == 1.0
    assert p[(i == 2) & (j == 5)][0] == 0.0


def test_competition_ranks_equal_scipys_rankdata_min_with_ties() -> None:
    rng = np.random.default_rng(11)
    for shape in ((500, 2), (200, 7), (3, 300), (1, 1)):
        for means in (rng.random(shape), rng.integers(0, 4, size=shape) / 4, np.zeros(shape)):
            expected = stats.rankdata(-means, method="min", axis=1)
            assert np.array_equal(competition_ranks(means), expected)
    assert competition_ranks(np.array([[0.5, 0.7, 0.5, 0.1]])).tolist() == [[2, 1, 2, 4]]


def test_bootstrap_means_equal_a_resample_by_resample_reference() -> None:
    rng = np.random.default_rng(5)
    values = rng.random((30, 4))
    drawn = np.random.default_rng(11).integers(0, 30, size=(200, 30))
    expected = values[drawn].mean(axis=1)
    np.testing.assert_allclose(bootstrap_means(values, 200, seed=11), expected, rtol=1e-12)


def test_separated_systems_get_exact_ranks_and_a_tier_each_ties_share_a_rank() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(0, 0.01, (60, 4)) + np.array([0.1, 0.9, 0.5, 0.1])
    values[:, 3] = values[:, 0]  # s3 is s0: the same rank, the same tier
    found = rank_tiers(frame(values), n_resamples=300)
    table = found.table
    assert list(table.index) == ["s1", "s2", "s0", "s3"]  # by mean, equal means by name
    assert table["rank"].tolist() == [1, 2, 3, 3]
    assert table["rank_low"].tolist() == [1, 2, 3, 3]
    assert table["rank_high"].tolist() == [1, 2, 3, 3]
    assert found.tiers == [["s1"], ["s2"], ["s0", "s3"]]
    assert not found.significant("s0", "s3") and found.significant("s3", "s1")
    means = values.mean(axis=0)
    np.testing.assert_allclose(table["mean"], means[[1, 2, 0, 3]])
    assert (table["mean_low"] <= table["mean"]).all() and (table["mean"] <= table["mean_high"]).all()
    assert len(found.pairs) == 6 and (found.pairs["delta"] >= 0).all()
    np.testing.assert_allclose(found.pairs["p_adjusted"], adjust_pvalues(found.pairs["p_value"], "holm"))


def test_a_tier_holds_no_significant_pair() -> None:
    rng = np.random.default_rng(9)
    values = rng.normal(0, 0.3, (80, 12)) + np.linspace(0, 0.4, 12)
    found = rank_tiers(frame(values), n_resamples=50)
    tier = found.table["tier"]
    same = found.pairs[found.pairs["system"].map(tier).to_numpy() == found.pairs["other"].map(tier).to_numpy()]
    assert not same["significant"].any()
    assert found.table["tier"].is_monotonic_increasing and tier.max() > 1
    for upper, lower in zip(found.tiers, found.tiers[1:]):  # each tier's first differs from one above it
        assert any(found.significant(lower[0], other) for other in upper)


def test_the_mapping_and_the_wide_frame_give_the_same_result_and_bad_input_names_the_cell() -> None:
    rng = np.random.default_rng(2)
    values = frame(rng.random((20, 3)))
    as_mapping = rank_tiers({name: values[name] for name in values.columns}, n_resamples=40)
    shuffled = rank_tiers(values.sample(frac=1, random_state=1), n_resamples=40)
    pd.testing.assert_frame_equal(as_mapping.table, shuffled.table)
    broken = values.astype(object)
    broken.iat[4, 2] = "x"
    with pytest.raises(SchemaError, match=r"system 's2': query 'q4' has no numeric value \('x'\)"):
        rank_tiers(broken)
    with pytest.raises(SchemaError, match="duplicate query"):
        rank_tiers(values.rename(index={"q3": "q1"}))


def simulated(rng: np.random.Generator, queries: int, means: np.ndarray, noise: float) -> np.ndarray:
    """Queries x systems: a difficulty every system shares plus each system's mean and its own noise."""
    return rng.normal(0.4, 0.15, size=(queries, 1)) + means + rng.normal(0, noise, (queries, len(means)))


def test_equal_means_family_wise_error_stays_at_alpha_over_1000_collections() -> None:
    """30 systems with the same mean, values clipped to [0, 1] as metrics are: the tiering splits
    them (a false discovery) in at most 5 % of 1,000 collections, up to Monte Carlo error."""
    rng = np.random.default_rng(2026)
    count, collections = 30, 1000
    split = 0
    for _ in range(collections):
        values = np.clip(simulated(rng, 50, np.zeros(count), 0.2), 0, 1)
        i, j, p = pair_pvalues(values)
        order = list(np.argsort(-values.mean(axis=0), kind="stable"))
        split += int(tier_numbers(order, i, j, adjust_pvalues(p, "holm") < 0.05).max() > 1)
    assert split / collections <= 0.05  # 0.036 on this seed (Holm is conservative: pairs are correlated)
    assert split > 0  # not a test that can never reject


def test_known_different_means_are_separated_at_the_power_the_t_distribution_predicts() -> None:
    """10 systems 0.05 apart (normal noise, so the paired t-test is exact): the share of pairs three
    steps apart found different lies between Bonferroni's power over the 45 pairs (Holm is never
    less powerful) and the uncorrected test's power; pairs 0.45 apart are always separated."""
    rng = np.random.default_rng(7)
    count, queries, noise, step, collections = 10, 50, 0.2, 0.05, 300
    means = step * np.arange(count)
    far, near = [], []
    for _ in range(collections):
        i, j, p = pair_pvalues(simulated(rng, queries, means, noise))
        significant = adjust_pvalues(p, "holm") < 0.05
        far.append(significant[np.abs(i - j) == 9].all())
        near.extend(significant[np.abs(i - j) == 3])
    pairs = count * (count - 1) // 2
    centrality = 3 * step * np.sqrt(queries) / (noise * np.sqrt(2))

    def power(level: float) -> float:
        critical = stats.t.ppf(1 - level / 2, queries - 1)
        nct = stats.nct(queries - 1, centrality)
        return float(nct.sf(critical) + nct.cdf(-critical))

    bonferroni, uncorrected = power(0.05 / pairs), power(0.05)
    observed = float(np.mean(near))
    error = 3 * np.sqrt(0.25 / len(near))
    assert bonferroni - error <= observed <= uncorrected + error
    assert 0.3 < bonferroni < uncorrected < 0.99  # the bracket is informative
    assert all(far)
