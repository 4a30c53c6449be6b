"""Prediction-powered intervals: on arrays, ppi-python's (the authors' package) to 1e-12; in the per-query
tables and from qrels, the finite-population intervals, equal to the formula written out query by query
(tests/evaluation/finite_reference.py); a constant judge falls back to the human-only interval."""

from __future__ import annotations

import functools
import warnings
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.evaluation.ppi import (
    naive_mean,
    power_tuned_lambda,
    ppi_evaluate,
    ppi_intervals,
    ppi_mean,
    ppipp_mean,
)
from tests.evaluation.finite_reference import finite_interval


@functools.cache
def reference() -> ModuleType:
    """ppi-python, imported when a test first asks (numba and statsmodels: seconds at collection otherwise)."""
    with warnings.catch_warnings():  # ppi_py switches every warning off when imported
        import ppi_py

    return ppi_py


ALPHA = 0.05
TOL = 1e-12


def _reference(y: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray, lam: float | None) -> tuple[float, float]:
    low, high = reference().ppi_mean_ci(y, labelled, unlabelled, alpha=ALPHA, lam=lam)
    return float(np.squeeze(low)), float(np.squeeze(high))


def _case(seed: int, n: int, big_n: int, judge: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human values and a judge that is good, over-generous, anti-correlated or shrunk (PPI++'s
    weight then clips at 1)."""
    rng = np.random.default_rng(seed)
    y = rng.binomial(10, rng.beta(2, 3, n + big_n)) / 10
    noise = rng.normal(0, 0.15, n + big_n)
    judged = {
        "good": y + noise,
        "generous": np.clip(y + 0.2 + noise, 0, 1),
        "anti": 1 - y + noise,
        "shrunk": 0.2 * y + 0.01 * noise,
    }[judge]
    return y[:n], judged[:n], judged[n:]


CASES = [
    (seed, n, big_n, judge)
    for seed, (n, big_n) in enumerate([(10, 50), (30, 400), (200, 100)])
    for judge in ("good", "generous", "anti", "shrunk")
]


@pytest.mark.parametrize(("seed", "n", "big_n", "judge"), CASES)
def test_ppi_and_ppipp_equal_ppi_python(seed: int, n: int, big_n: int, judge: str) -> None:
    y, labelled, unlabelled = _case(seed, n, big_n, judge)
    classic = ppi_mean(y, labelled, unlabelled, confidence=1 - ALPHA)
    assert (float(classic.low), float(classic.high)) == pytest.approx(_reference(y, labelled, unlabelled, 1), abs=TOL)
    assert float(classic.estimate) == pytest.approx(
        float(np.squeeze(reference().ppi_mean_pointestimate(y, labelled, unlabelled, lam=1))), abs=TOL
    )
    tuned, lam = ppipp_mean(y, labelled, unlabelled, confidence=1 - ALPHA)
    assert (float(tuned.low), float(tuned.high)) == pytest.approx(_reference(y, labelled, unlabelled, None), abs=TOL)
    assert float(tuned.estimate) == pytest.approx(
        float(np.squeeze(reference().ppi_mean_pointestimate(y, labelled, unlabelled))), abs=TOL
    )
    # the weight is the one the reference derives (it is not exposed; recovered from its point estimate)
    implied = (np.squeeze(reference().ppi_mean_pointestimate(y, labelled, unlabelled)) - y.mean()) / (
        unlabelled.mean() - labelled.mean()
    )
    assert float(lam) == pytest.approx(float(implied), abs=1e-9)
    expected_lam = {"anti": 0.0, "shrunk": 1.0}.get(judge)
    if expected_lam is not None:  # the clipped ends are exercised, not only the inside
        assert float(lam) == expected_lam
    else:
        assert 0 < float(lam) < 1


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.99])
def test_naive_interval_equals_classical_ci_of_the_judge(confidence: float) -> None:
    _, labelled, unlabelled = _case(3, 40, 300, "generous")
    judge = np.concatenate([labelled, unlabelled])
    naive = naive_mean(judge, confidence=confidence)
    low, high = reference().classical_mean_ci(judge, alpha=1 - confidence)
    assert (float(naive.low), float(naive.high)) == pytest.approx((low, high), abs=TOL)
    assert float(naive.estimate) == pytest.approx(judge.mean(), abs=TOL)


def test_columns_are_independent_problems() -> None:
    """A 2-d batch (systems or simulated collections as columns) gives each column's own answer."""
    cases = [_case(s, 25, 200, judge) for s, judge in enumerate(("good", "generous", "anti", "shrunk"))]
    y, labelled, unlabelled = (np.column_stack(parts) for parts in zip(*cases))
    tuned, lam = ppipp_mean(y, labelled, unlabelled)
    classic = ppi_mean(y, labelled, unlabelled)
    for column, (yc, lc, uc) in enumerate(cases):
        assert lam[column] == pytest.approx(float(power_tuned_lambda(yc, lc, uc)), abs=TOL)
        assert (tuned.low[column], tuned.high[column]) == pytest.approx(_reference(yc, lc, uc, None), abs=TOL)
        assert (classic.low[column], classic.high[column]) == pytest.approx(_reference(yc, lc, uc, 1), abs=TOL)


def test_constant_judge_gives_the_human_only_interval() -> None:
    """A judge that says the same for every query carries nothing: PPI++ weighs it 0 (the reference
    divides 0 by 0 there) and its interval is the classical one of the human values."""
    y, _, _ = _case(5, 30, 100, "good")
    tuned, lam = ppipp_mean(y, np.full(30, 0.4), np.full(100, 0.4))
    assert float(lam) == 0.0
    low, high = reference().classical_mean_ci(y, alpha=ALPHA)
    assert (float(tuned.low), float(tuned.high)) == pytest.approx((low, high), abs=TOL)


def _frames(seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame, pd.Index]:
    """Per-query values of three systems: every query's judge values, the sample's human values."""
    rng = np.random.default_rng(seed)
    queries = pd.Index([f"q{i}" for i in range(120)], name="query_id")
    base = rng.beta(2, 3, len(queries))
    human_all = pd.DataFrame(
        {"bm25": base, "dense": np.clip(base + rng.normal(0.05, 0.1, len(base)), 0, 1), "tfidf": base * 0.9},
        index=queries,
    )
    judge = (human_all + rng.normal(0.08, 0.12, human_all.shape)).clip(0, 1)
    sample = pd.Index(rng.choice(queries, 25, replace=False))
    return human_all.loc[sample], judge, sample


def test_intervals_per_system_and_difference_equal_the_written_out_formula() -> None:
    human, judge, sample = _frames()
    truth = {"bm25": 0.4, "dense": 0.45, "tfidf": 0.36}
    result = ppi_intervals(human.iloc[::-1], judge, metric="ndcg@10", baseline="bm25", truth=truth)
    labelled = judge.index.isin(sample)
    means = result.means.set_index("system")
    assert list(means.index) == ["bm25", "dense", "tfidf"]
    for system in judge.columns:
        y = human.loc[judge.index[labelled], system].to_numpy()
        lab, unl = judge.loc[labelled, system].to_numpy(), judge.loc[~labelled, system].to_numpy()
        row = means.loc[system]
        assert (row.ppi_estimate, row.ppi_low, row.ppi_high) == pytest.approx(finite_interval(y, lab, unl, 1), abs=TOL)
        assert (row.ppipp_estimate, row.ppipp_low, row.ppipp_high) == pytest.approx(
            finite_interval(y, lab, unl, None), abs=TOL
        )
        assert (row.naive_low, row.naive_high) == pytest.approx(
            reference().classical_mean_ci(judge[system].to_numpy(), alpha=ALPHA), abs=TOL
        )
        assert row.truth == truth[system]
        assert row.ppipp_covered == (row.ppipp_low <= truth[system] <= row.ppipp_high)
        assert (row.n_labelled, row.n_total) == (25, 120)
    differences = result.differences.set_index("system")
    assert list(differences.index) == ["dense", "tfidf"] and set(differences["baseline"]) == {"bm25"}
    for system in ("dense", "tfidf"):
        y = (human[system] - human["bm25"]).loc[judge.index[labelled]].to_numpy()
        d = judge[system] - judge["bm25"]
        row = differences.loc[system]
        assert (row.ppipp_estimate, row.ppipp_low, row.ppipp_high) == pytest.approx(
            finite_interval(y, d[labelled].to_numpy(), d[~labelled].to_numpy(), None), abs=TOL
        )
        assert row.truth == pytest.approx(truth[system] - truth["bm25"], abs=TOL)
    record = result.to_dict()
    assert record["metric"] == "ndcg@10" and len(record["means"]) == 3 and len(record["differences"]) == 2
    assert isinstance(record["means"][0]["ppipp_low"], float) and isinstance(record["means"][0]["ppi_covered"], bool)


def test_intervals_without_baseline_have_no_differences() -> None:
    human, judge, _ = _frames()
    result = ppi_intervals(human, judge)
    assert result.differences.empty and "baseline" in result.differences.columns
    assert "truth" not in result.means.columns


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda h, j: (h.rename(index={h.index[0]: "nowhere"}), j),
            "human-labelled query 'nowhere' has no judge value",
        ),
        (lambda h, j: (h.iloc[:1], j), "at least 2 labelled queries"),
        (lambda h, j: (h[["bm25", "dense"]], j), "name different systems"),
        (lambda h, j: (h, j.assign(dense=np.where(j.index == "q3", np.nan, j["dense"]))), "system 'dense', query 'q3'"),
        (lambda h, j: (pd.concat([h, h.iloc[:1]]), j), "appears more than once"),
    ],
)
def test_bad_values_are_one_clear_error(change, message: str) -> None:
    human, judge, _ = _frames()
    human, judge = change(human, judge)
    with pytest.raises(RankscopeError, match=message):
        ppi_intervals(human, judge)


def test_unknown_baseline_and_every_query_labelled() -> None:
    """Every query labelled by humans: PPI's estimate is their mean, exact (width 0), and no warning."""
    human, judge, _ = _frames()
    with pytest.raises(SchemaError, match="baseline 'bm25x'"):
        ppi_intervals(human, judge, baseline="bm25x")
    everything = (judge * 0.5).clip(0, 1)
    result = ppi_intervals(everything, judge, baseline="bm25")
    means = result.means.set_index("system")
    for method in ("ppi", "ppipp"):
        assert list(means[f"{method}_estimate"]) == pytest.approx(list(everything.mean()), abs=TOL)
        assert list(means[f"{method}_low"]) == list(means[f"{method}_estimate"]) == list(means[f"{method}_high"])
        assert set(means[f"{method}_simulated"]) == {1.0}
    assert result.warnings == ()


def _collection(seed: int = 3) -> dict[str, object]:
    """Qrels and runs where P@10 can be counted by hand: complete human labels, a judge that flips
    some of them, a sample of the queries, three runs of 10 documents per query."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(80)]
    docs = [f"d{i}" for i in range(30)]
    truth_rows = [(q, d, int(rng.random() < 0.3) * int(rng.integers(1, 3))) for q in queries for d in docs]
    truth = pd.DataFrame(truth_rows, columns=["query_id", "doc_id", "relevance"])
    flip = rng.random(len(truth)) < 0.25
    judged = truth.assign(relevance=np.where(flip, (truth["relevance"] == 0).astype(int), truth["relevance"]))
    sample = list(rng.choice(queries, 20, replace=False))
    human = truth[truth["query_id"].isin(sample)]
    runs = {}
    for name in ("bm25", "dense", "tfidf"):
        rows = [
            (q, d, float(s)) for q in queries for d, s in zip(rng.choice(docs, 10, replace=False), range(10, 0, -1))
        ]
        runs[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return {"truth": truth, "judged": judged, "human": human, "sample": sample, "runs": runs, "queries": queries}


def _precision_at_10(qrels: pd.DataFrame, run: pd.DataFrame, queries: list[str]) -> pd.Series:
    relevant = set(map(tuple, qrels.loc[qrels["relevance"] >= 1, ["query_id", "doc_id"]].to_numpy()))
    hits = run.assign(rel=[(q, d) in relevant for q, d in zip(run["query_id"], run["doc_id"])])
    return hits.groupby("query_id")["rel"].sum().div(10).reindex(queries)


def test_ppi_evaluate_from_qrels_equals_the_formula_on_hand_counted_precision() -> None:
    c = _collection()
    result = ppi_evaluate(c["human"], c["judged"], c["runs"], "precision@10", baseline="bm25", truth_qrels=c["truth"])
    queries, sample = c["queries"], c["sample"]
    others = [q for q in queries if q not in sample]
    means = result.means.set_index("system")
    for name, run in c["runs"].items():
        judge = _precision_at_10(c["judged"], run, queries)
        human = _precision_at_10(c["truth"], run, queries)
        y, lab, unl = human[sample].to_numpy(), judge[sample].to_numpy(), judge[others].to_numpy()
        row = means.loc[name]
        assert (row.ppipp_low, row.ppipp_high) == pytest.approx(finite_interval(y, lab, unl, None)[1:], abs=TOL)
        assert (row.ppi_low, row.ppi_high) == pytest.approx(finite_interval(y, lab, unl, 1)[1:], abs=TOL)
        assert row.naive_estimate == pytest.approx(judge.mean(), abs=TOL)
        assert row.truth == pytest.approx(human.mean(), abs=TOL)
        assert (row.n_labelled, row.n_total) == (20, 80)
    assert result.metric == "precision@10" and len(result.differences) == 2


def test_ppi_evaluate_population_and_missing_queries() -> None:
    c = _collection()
    # a query of the population without any judgment scores 0 under the judge: the mean is over 81 queries
    result = ppi_evaluate(c["human"], c["judged"], c["runs"], "precision@10", queries=[*c["queries"], "q_new"])
    assert set(result.means["n_total"]) == {81}
    judge = _precision_at_10(c["judged"], c["runs"]["bm25"], c["queries"])
    assert result.means.set_index("system").loc["bm25", "naive_estimate"] == pytest.approx(judge.sum() / 81, abs=TOL)
    with pytest.raises(SchemaError, match="judged qrels: query 'q.+' is not among the 20 queries estimated over"):
        ppi_evaluate(c["human"], c["judged"], c["runs"], "precision@10", queries=c["sample"])
    with pytest.raises(RankscopeError, match="no runs"):
        ppi_evaluate(c["human"], c["judged"], {}, "precision@10")
