"""statAP from a sample with inclusion probabilities: AP when everything is judged, and, by simulation,
its Horvitz-Thompson parts unbiased over many Poisson samples of a pool whose every label is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.evaluation import evaluate
from rankscope.evaluation.statap import stat_ap


def pool_and_run(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One query: 300 pooled documents, relevant more often near the top of the run, which ranks 250 of them."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(300)]
    relevant = rng.random(300) < np.linspace(0.6, 0.02, 300)
    qrels = pd.DataFrame({"query_id": "q1", "doc_id": docs, "relevance": relevant.astype(int)})
    run = pd.DataFrame({"query_id": "q1", "doc_id": docs[:250], "score": np.arange(250, 0, -1, dtype=float)})
    return qrels, run


def test_with_every_pair_judged_it_is_ap() -> None:
    qrels, run = pool_and_run(1)
    estimate = stat_ap(qrels.assign(inclusion_probability=1.0), run).iloc[0]
    assert estimate["stat_ap"] == pytest.approx(evaluate(qrels, run, ["map"]).mean["map"], abs=1e-12)
    assert estimate["r_hat"] == qrels["relevance"].sum()


@pytest.mark.slow  # 2,000 estimates: about a minute
def test_unbiased_over_many_samples() -> None:
    """2,000 Poisson samples, inclusion probability 0.9 at the top falling to 0.1: the mean of R^ and of the
    precision sum within 3 standard errors of the truth; statAP (their ratio) within 0.01 of AP."""
    qrels, run = pool_and_run(2)
    probability = np.linspace(0.9, 0.1, len(qrels))
    truth = stat_ap(qrels.assign(inclusion_probability=1.0), run).iloc[0]
    rng = np.random.default_rng(3)
    draws = []
    for _ in range(2000):
        kept = rng.random(len(qrels)) < probability
        sample = qrels[kept].assign(inclusion_probability=probability[kept])
        draws.append(stat_ap(sample, run).iloc[0][["r_hat", "precision_sum", "stat_ap"]].to_numpy(dtype=float))
    values = np.array(draws)
    mean, error = values.mean(axis=0), values.std(axis=0, ddof=1) / np.sqrt(len(values))
    assert abs(mean[0] - truth["r_hat"]) < 3 * error[0]
    assert abs(mean[1] - truth["precision_sum"]) < 3 * error[1]
    assert abs(mean[2] - truth["stat_ap"]) < 0.01
    assert error[2] * np.sqrt(len(values)) > 0.01  # the single estimates do vary: the test is not trivial


def test_rows_outside_the_sample_are_left_out() -> None:
    qrels, run = pool_and_run(4)
    judged = qrels.assign(inclusion_probability=1.0)
    with_judge = pd.concat([judged, pd.DataFrame({"query_id": ["q1"], "doc_id": ["extra"], "relevance": [3]})])
    assert stat_ap(with_judge, run).equals(stat_ap(judged, run))
