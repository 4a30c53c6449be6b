"""precision@k from a sample of labelled pairs: rankscope's evaluate with every pair labelled, the formula
written out pair by pair, exactly unbiased with an exactly unbiased variance over every stratified sample
of a small pool, honest intervals in simulation, and one clear error for what it does not estimate."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t

from rankscope.core.errors import RankscopeError
from rankscope.evaluation import evaluate
from rankscope.evaluation import ppi_simulation as sim
from rankscope.evaluation.pair_sample import FEW_DISAGREEMENTS, Pairs, estimate_system, pair_sample_evaluate, variance

TOL = 1e-12


def _world(seed: int = 0, queries: int = 6, docs: int = 12, depth: int = 8) -> dict[str, object]:
    """A pool of graded human labels, a judge that changes 30% of them, two runs of ``depth`` documents a
    query (some outside the pool), and strata by the pair's position in the pool (4 bands)."""
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}", int(rng.choice([0, 0, 1, 2, 3]))) for q in range(queries) for d in range(docs)]
    human = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    changed = rng.random(len(human)) < 0.3
    judge = human.assign(relevance=np.where(changed, rng.integers(0, 4, len(human)), human["relevance"]))
    runs = {}
    for name in ("a", "b"):
        ranked = [
            (f"q{q}", d, float(depth - r))
            for q in range(queries)
            for r, d in enumerate(rng.choice([f"d{i}" for i in range(docs)] + ["x1", "x2"], depth, replace=False))
        ]
        runs[name] = pd.DataFrame(ranked, columns=["query_id", "doc_id", "score"])
    stratum = np.tile(np.arange(docs) % 4, queries)
    return {"human": human, "judge": judge, "runs": runs, "stratum": stratum}


def _sample(world: dict[str, object], chosen: np.ndarray, probability: np.ndarray) -> pd.DataFrame:
    human = world["human"]
    return human.iloc[chosen].assign(inclusion_probability=probability[chosen], stratum=world["stratum"][chosen])


def test_every_pair_labelled_is_evaluate_exactly() -> None:
    world = _world()
    everything = np.arange(len(world["human"]))
    result = pair_sample_evaluate(
        world["judge"], _sample(world, everything, np.ones(len(everything))), world["runs"], "precision@5", baseline="a"
    )
    for name, run in world["runs"].items():
        expected = evaluate(world["human"], run, ["precision@5"]).per_query.set_index("query_id")["value"]
        found = result.per_query[result.per_query["system"] == name].set_index("query_id")["estimate"]
        assert found.to_dict() == pytest.approx(expected.reindex(found.index).to_dict(), abs=TOL)
    assert set(result.means["se"]) == {0.0} and set(result.differences["se"]) == {0.0}
    assert result.warnings == ()  # nothing was drawn: every label is known


def _written_out(world: dict[str, object], sample: pd.DataFrame, system: str, k: int) -> tuple[float, float, float]:
    """(mean estimate, standard error, degrees of freedom) by loops over queries, pairs and strata."""
    judge = {(q, d): r for q, d, r in world["judge"][["query_id", "doc_id", "relevance"]].itertuples(index=False)}
    run = world["runs"][system]
    queries = sorted(world["judge"]["query_id"].unique())
    values, z = [], {}
    for q in queries:
        top = list(run[run["query_id"] == q].sort_values("score", ascending=False)["doc_id"][:k])
        count = sum(judge.get((q, d), 0) >= 1 for d in top)
        for row in sample[sample["query_id"] == q].itertuples(index=False):
            if row.doc_id in top:
                gap = (row.relevance >= 1) - (judge[(q, row.doc_id)] >= 1)
                count += gap / row.inclusion_probability
                z[(q, row.doc_id)] = gap / k / len(queries)
        values.append(count / k)
    parts, freedoms = [], []
    for _, stratum in sample.groupby("stratum"):
        y = np.array([z.get((q, d), 0.0) for q, d in zip(stratum["query_id"], stratum["doc_id"])])
        n, pi = len(y), stratum["inclusion_probability"].iloc[0]
        parts.append((n / pi) ** 2 * (1 - pi) * np.var(y, ddof=1) / n)
        freedoms.append(n - 1)
    total = sum(parts)
    df = total**2 / sum(p**2 / f for p, f in zip(parts, freedoms))
    return float(np.mean(values)), float(np.sqrt(total)), float(df)


def test_a_partial_sample_equals_the_formula_written_out() -> None:
    world = _world(1)
    rng = np.random.default_rng(2)
    stratum = world["stratum"]
    probability = np.array([0.9, 0.5, 0.35, 0.25])[stratum]
    chosen = np.concatenate([rng.choice(np.flatnonzero(stratum == h), round(p * (stratum == h).sum()), replace=False)
                             for h, p in enumerate([0.9, 0.5, 0.35, 0.25])])  # fmt: skip
    sample = _sample(world, np.sort(chosen), probability)
    result = pair_sample_evaluate(world["judge"], sample, world["runs"], "precision@5", confidence=0.9)
    for row in result.means.itertuples(index=False):
        estimate, se, df = _written_out(world, sample, row.system, 5)
        half = t.ppf(0.95, df) * se
        assert (row.estimate, row.se, row.low, row.high) == pytest.approx(
            (estimate, se, estimate - half, estimate + half), abs=TOL
        )


def test_unbiased_with_an_unbiased_variance_over_every_sample() -> None:
    """Two strata of 8 pooled pairs, 2 and 3 drawn: over all 28 x 56 samples (the core, on arrays) the mean
    estimate is the value under the people's labels and the variance estimate averages to the estimates'
    variance (stratified simple random sampling's textbook identities), to 1e-12."""
    rng = np.random.default_rng(3)
    query = np.repeat(np.arange(2), 8)
    human = rng.integers(0, 2, 16).astype(float)
    judge = np.where(rng.random(16) < 0.4, 1 - human, human)
    ranks = np.tile(np.arange(1, 9), 2)
    stratum = (np.arange(16) % 2).astype(np.int64)
    everything = Pairs(query, judge, human, np.ones(16), stratum, 2)
    truth = estimate_system(everything, ranks, 5).per_query.mean()
    members = [np.flatnonzero(stratum == h) for h in (0, 1)]
    drawn = (2, 3)
    estimates, variances = [], []
    for first in itertools.combinations(members[0], drawn[0]):
        for second in itertools.combinations(members[1], drawn[1]):
            chosen = np.array(first + second)
            probability = np.full(16, np.nan)
            probability[chosen] = np.array(drawn)[stratum[chosen]] / 8
            pairs = Pairs(query, judge, np.where(np.isnan(probability), np.nan, human), probability, stratum, 2)
            found = estimate_system(pairs, ranks, 5)
            estimates.append(found.per_query.mean())
            variances.append(variance(pairs, found.influence)[0])
    assert np.mean(estimates) == pytest.approx(truth, abs=TOL)
    assert np.mean(variances) == pytest.approx(np.var(estimates), abs=TOL)
    assert np.var(estimates) > 1e-4  # the judge does err on these pairs: the identity is not 0 = 0


def test_a_judge_that_agrees_is_exact_and_warned_of() -> None:
    """A judge equal to the people gives the value whatever is drawn, with width 0, and a warning: no
    disagreement was sampled, so nothing measured how wrong the judge is elsewhere."""
    world = _world(4)
    chosen = np.arange(0, len(world["human"]), 5)
    sample = _sample(world, chosen, np.full(len(world["human"]), 0.2))
    result = pair_sample_evaluate(world["human"], sample, world["runs"], "precision@5", baseline="a")
    for name, run in world["runs"].items():
        expected = evaluate(world["human"], run, ["precision@5"]).per_query["value"].mean()
        row = result.means.set_index("system").loc[name]
        assert (row.estimate, row.low, row.high) == pytest.approx((expected, expected, expected), abs=TOL)
    assert len(result.warnings) == 3 and "only 0 sampled pairs where people and judge disagree" in result.warnings[0]
    assert list(result.differences["disagreements"]) == [0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s, "metric 'recall@10': a pair sample estimates precision@k"),
        (lambda s: s.assign(inclusion_probability=0.0), "has inclusion probability 0.0"),
        (lambda s: s.assign(inclusion_probability=1.5), "has inclusion probability 1.5"),
        (lambda s: s.assign(relevance="yes"), "a probability in (0, 1] and a numeric label"),
        (lambda s: s.drop(columns="inclusion_probability"), "no column 'inclusion_probability'"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "appears more than once"),
        (lambda s: s.assign(doc_id=s["doc_id"] + "x"), "pair (q0, d0x) is not in the pool the judge labelled"),
        (
            lambda s: s.assign(inclusion_probability=[0.5] * (len(s) - 1) + [0.25], stratum="top"),
            "stratum 'top' has pairs with different inclusion probabilities",
        ),
    ],
)
def test_bad_samples_are_one_clear_error(change, message: str) -> None:
    world = _world()
    sample = change(_sample(world, np.arange(10), np.full(len(world["human"]), 0.5)))
    metric = "recall@10" if "recall" in message else "precision@5"
    with pytest.raises(RankscopeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pair_sample_evaluate(world["judge"], sample, world["runs"], metric)


def test_coverage_in_simulation() -> None:
    """1,000 stratified samples of 200 and of 50 labels from a 1,000-pair pool (the judge failing on half the
    queries): at 200 the intervals not warned of cover within 4 standard errors of 95%; at 50 nearly all
    of A's are warned of, and they needed to be (A's coverage is under 93%)."""
    pool = sim.synthetic_pool(50, "query", seed=7)
    spread = 4 * np.sqrt(0.95 * 0.05 / 1000)
    for cell in sim.pair_coverage(pool, 200, 1000, seed=8):
        if cell["warned"] < 0.5:
            assert abs(cell["coverage_not_warned"] - 0.95) <= spread + 0.01, cell
    few = {c["quantity"]: c for c in sim.pair_coverage(pool, 50, 1000, seed=9)}
    assert few["A"]["warned"] > 0.95 and few["A"]["coverage"] < 0.93, few
    assert FEW_DISAGREEMENTS == 10
