"""infAP (trec_eval's m_infAP.c) against pytrec_eval's, on judgments sampled from a pool.

The random cases of ``trec_reference`` already hold -1 labels; here most of each pool is left
unjudged (labels -1 and -2, as a sampled pool's qrels are), so the estimator's every branch
(unpooled, pooled-but-unjudged, judged relevant and non-relevant above a relevant document) runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from rankscope.evaluation import evaluate
from rankscope.evaluation.metrics import parse_metric


def sampled_pool_case(seed: int, n_queries: int = 30, n_docs: int = 200) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run, and qrels of a pool of which a random share was judged (the rest labelled -1 or -2)."""
    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(n_queries):
        pool = rng.choice(n_docs, rng.integers(5, 120), replace=False)
        judged = rng.random(len(pool)) < rng.uniform(0.1, 0.9)
        labels = np.where(judged, rng.integers(0, 3, len(pool)), rng.choice([-1, -2], len(pool)))
        qrels_rows += [(f"q{q}", f"d{d}", int(r)) for d, r in zip(pool, labels)]
        retrieved = rng.choice(n_docs, rng.integers(1, 150), replace=False)
        run_rows += [(f"q{q}", f"d{d}", float(s)) for d, s in zip(retrieved, rng.integers(0, 40, len(retrieved)) / 4)]
    return (
        pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"]),
    )


def pytrec_infap(qrels: pd.DataFrame, run: pd.DataFrame, level: int) -> dict[str, float]:
    judged: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        judged.setdefault(q, {})[d] = int(r)
    scored: dict = {}
    for q, d, s in run.itertuples(index=False):
        scored.setdefault(q, {})[d] = s
    evaluator = pytrec_eval.RelevanceEvaluator(judged, {"infAP"}, relevance_level=level)
    return {q: values["infAP"] for q, values in evaluator.evaluate(scored).items()}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_infap_equals_pytrec_eval_on_sampled_pools(seed: int, level: int) -> None:
    qrels, run = sampled_pool_case(seed)
    expected = pytrec_infap(qrels, run, level)
    ours = evaluate(qrels, run, ["infAP"], relevance_level=level).wide()["infap"]
    assert len(expected) == 30
    for query_id, value in expected.items():
        assert ours[query_id] == pytest.approx(value, abs=1e-9), query_id
    assert 0 < np.mean(list(expected.values())) < 1  # relevant documents found in every case: not all 0


def test_infap_with_every_pooled_document_judged_is_ap() -> None:
    """No pooled-but-unjudged label: each term is precision at the relevant document up to trec_eval's epsilon."""
    qrels, run = sampled_pool_case(7)
    complete = qrels.assign(relevance=qrels["relevance"].clip(lower=0))
    means = evaluate(complete, run, ["infap", "map"]).mean
    assert means["infap"] == pytest.approx(means["map"], abs=1e-4)
    assert means["infap"] != means["map"]  # the epsilon is trec_eval's, kept


def test_infap_names() -> None:
    """trec_eval's and ir_measures' name (``infAP``, ``infAP(rel=2)``) are the one canonical metric."""
    assert parse_metric("infAP").name == "infap"
    assert parse_metric("infAP(rel=2)").name == "infap(rel=2)"
    assert parse_metric("INFAP").family == "infap"
