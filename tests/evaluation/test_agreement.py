"""Judge-human agreement: kappas equal scikit-learn's, tau-b scipy's, tau_AP a hand-computed example and a
brute-force reading of its definition."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sklearn_confusion

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.evaluation.agreement import (
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    label_agreement,
    ranking_agreement,
    tau_ap,
)

TOL = 1e-12


def _labels(seed: int, n: int, grades: list[int], agree: float) -> tuple[np.ndarray, np.ndarray]:
    """Human grades and a judge that copies them with probability ``agree``, else guesses."""
    rng = np.random.default_rng(seed)
    human = rng.choice(grades, n, p=np.linspace(2, 1, len(grades)) / np.linspace(2, 1, len(grades)).sum())
    judge = np.where(rng.random(n) < agree, human, rng.choice(grades, n))
    return human, judge


@pytest.mark.parametrize(("seed", "agree"), [(0, 0.0), (1, 0.4), (2, 0.8), (3, 0.95)])
def test_kappas_equal_scikit_learn(seed: int, agree: float) -> None:
    human, judge = _labels(seed, 500, [0, 1, 2, 3], agree)
    counts = confusion_matrix(human, judge).to_numpy()
    assert cohen_kappa(counts) == pytest.approx(cohen_kappa_score(human, judge), abs=TOL)
    assert cohen_kappa(counts, quadratic=True) == pytest.approx(
        cohen_kappa_score(human, judge, weights="quadratic"), abs=TOL
    )
    assert (counts == sklearn_confusion(human, judge)).all()


def test_quadratic_weights_follow_the_grades_not_the_grades_seen() -> None:
    """Grade 2 never used: a 0 against a 3 is still three grades apart (scikit-learn agrees when given
    the scale; by default it would index the grades seen, making them two apart)."""
    human, judge = _labels(4, 300, [-1, 0, 1, 3], 0.6)
    confusion = confusion_matrix(human, judge)
    assert list(confusion.index) == [-1, 0, 1, 2, 3] and confusion.loc[2].sum() == 0
    scale = list(range(-1, 4))
    counts = confusion.to_numpy()
    expected = cohen_kappa_score(human, judge, labels=scale, weights="quadratic")
    assert cohen_kappa(counts, quadratic=True) == pytest.approx(expected, abs=TOL)
    assert expected != pytest.approx(cohen_kappa_score(human, judge, weights="quadratic"), abs=1e-3)
    assert cohen_kappa(counts) == pytest.approx(cohen_kappa_score(human, judge), abs=TOL)


def test_kappa_undefined_with_one_grade_only() -> None:
    assert np.isnan(cohen_kappa(confusion_matrix(np.ones(5), np.ones(5)).to_numpy()))


def test_label_agreement_counts_only_pairs_both_labelled() -> None:
    human = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "c"], "relevance": [2, 0, 1, 3]}
    )
    judge = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["a", "b", "c", "a"], "relevance": [1, 0, 3, 2]}
    )
    found = label_agreement(human, judge)
    assert found.n_pairs == 3  # (q1,a), (q1,b), (q2,c)
    assert found.confusion.loc[2, 1] == 1 and found.confusion.loc[0, 0] == 1 and found.confusion.loc[3, 3] == 1
    assert found.kappa == pytest.approx(cohen_kappa_score([2, 0, 3], [1, 0, 3], labels=[0, 1, 2, 3]), abs=TOL)
    record = found.to_dict()
    assert record["n_pairs"] == 3 and record["confusion"]["2"]["1"] == 1
    with pytest.raises(RankscopeError, match="no \\(query, document\\) pair was labelled by both"):
        label_agreement(human, judge.assign(query_id=["q7", "q8", "q9", "q10"]))
    with pytest.raises(SchemaError, match="judge qrels: duplicate query, document 'q1', 'a'"):
        label_agreement(human, pd.concat([judge, judge.iloc[:1]]))


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_b_equals_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    x = rng.integers(0, 5, n).astype(float)  # many ties
    y = x + rng.integers(-2, 3, n)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=TOL)
    assert kendall_tau_b(x, np.full(n, 1.0)) != kendall_tau_b(x, np.full(n, 1.0))  # NaN, as scipy


def _scores(order: str) -> pd.Series:
    """Scores giving ``order`` (first is best)."""
    return pd.Series({name: float(len(order) - i) for i, name in enumerate(order)})


def test_tau_ap_hand_computed_from_the_definition() -> None:
    """Reference A > B > C > D. Judge B, A, C, D: C(2) = 0 (B above A is wrong), C(3) = 2, C(4) = 3:
    2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3. Judge A, B, D, C: 2/3 * (1 + 1 + 2/3) - 1 = 7/9. Both have one
    swapped pair (Kendall's tau 2/3); tau_AP punishes the swap at the top."""
    reference = _scores("ABCD")
    assert tau_ap(reference, _scores("BACD")) == pytest.approx(1 / 3, abs=TOL)
    assert tau_ap(reference, _scores("ABDC")) == pytest.approx(7 / 9, abs=TOL)
    swapped = _scores("BACD")[list("ABCD")].to_numpy()
    assert kendall_tau_b(reference[list("ABCD")].to_numpy(), swapped) == pytest.approx(2 / 3)
    assert tau_ap(reference, reference) == 1.0
    assert tau_ap(reference, _scores("DCBA")) == pytest.approx(-1.0, abs=TOL)


def _tau_ap_brute(reference: dict[str, float], estimated: dict[str, float]) -> float:
    """The definition read literally: walk the judge's list, count for each item the items above it that
    the reference does not put below it."""
    ranked = sorted(estimated, key=lambda s: (-estimated[s], s))
    total = 0.0
    for i in range(1, len(ranked)):
        correct = sum(1 for above in ranked[:i] if reference[above] >= reference[ranked[i]])
        total += correct / i
    return 2 * total / (len(ranked) - 1) - 1


@pytest.mark.parametrize("seed", range(8))
def test_tau_ap_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(int(rng.integers(2, 12)))]
    reference = {s: float(rng.integers(0, 6)) for s in names}  # ties on both sides
    estimated = {s: float(rng.integers(0, 6)) for s in names}
    got = tau_ap(pd.Series(reference), pd.Series(estimated))
    assert got == pytest.approx(_tau_ap_brute(reference, estimated), abs=TOL)


def test_tau_ap_over_all_permutations_averages_zero_without_ties() -> None:
    """Over every ordering of five systems, tau_AP's mean is 0 (as Kendall's tau's), a check on the
    -1 offset and the 2/(N-1) scale."""
    reference = _scores("ABCDE")
    values = [tau_ap(reference, _scores("".join(p))) for p in itertools.permutations("ABCDE")]
    assert np.mean(values) == pytest.approx(0.0, abs=TOL)
    assert min(values) == pytest.approx(-1.0) and max(values) == 1.0


def test_ranking_agreement_overall_and_better_half() -> None:
    human = {"bm25": 0.40, "dense": 0.45, "tfidf": 0.30, "w2v": 0.20, "hybrid": 0.50}
    judge = {"bm25": 0.52, "dense": 0.48, "tfidf": 0.33, "w2v": 0.25, "hybrid": 0.55}
    table = ranking_agreement(human, judge).set_index("systems")
    assert list(table["n_systems"]) == [5, 3]
    h, j = pd.Series(human), pd.Series(judge)
    assert table.loc["all", "kendall_tau_b"] == pytest.approx(stats.kendalltau(h, j[h.index]).statistic, abs=TOL)
    best = ["hybrid", "dense", "bm25"]
    assert table.loc["better half", "kendall_tau_b"] == pytest.approx(
        stats.kendalltau(h[best], j[best]).statistic, abs=TOL
    )
    assert table.loc["better half", "tau_ap"] == pytest.approx(_tau_ap_brute(h[best].to_dict(), j[best].to_dict()))
    assert table.loc["better half", "tau_ap"] < table.loc["all", "tau_ap"]  # the swap is among the best
    with pytest.raises(SchemaError, match="system 'w2v' has a score under one set of labels only"):
        ranking_agreement(human, {k: v for k, v in judge.items() if k != "w2v"})
