"""metrics.define: a user's measure joins the one registry of measures and works wherever a metric name does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation import evaluate, metrics
from rankscope.evaluation.ranking import Judged

# q1: d1 (not judged) at rank 1, d2 (relevant) at 2, d3 (grade 2) at 3; q2: d4 (unjudged) only; q3 not retrieved
QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["d2", "d3", "d9", "d5"], "relevance": [1, 2, 1, 1]}
)
RUN = pd.DataFrame(
    {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3", "d4"], "score": [3.0, 2.0, 1.0, 1.0]}
)


@pytest.fixture(autouse=True)
def scratch_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Measures defined in a test are forgotten after it."""
    monkeypatch.setattr(metrics, "FAMILIES", dict(metrics.FAMILIES))
    monkeypatch.setattr(metrics, "ALIASES", dict(metrics.ALIASES))


def first_relevant_rank(judged: Judged, k: int | None) -> np.ndarray:
    """Rank of the first relevant document within the top k (all without k); 0 if there is none."""
    keep = judged.relevant & (judged.pos < (k if k is not None else np.inf))
    ranks = np.zeros(judged.n_queries)
    queries, first = np.unique(judged.q[keep], return_index=True)
    ranks[queries] = judged.pos[keep][first] + 1
    return ranks


def test_a_defined_measure_is_computed_with_and_without_cutoff() -> None:
    metrics.define("first_rel", first_relevant_rank)
    result = evaluate(QRELS, RUN, ["first_rel", "first_rel@1", "mrr"]).wide()
    assert result.loc[["q1", "q2", "q3"], "first_rel"].tolist() == [2.0, 0.0, 0.0]  # worked out above
    assert result["first_rel@1"].tolist() == [0.0, 0.0, 0.0]
    assert result["mrr"].tolist() == [0.5, 0.0, 0.0]  # the built-in next to it is unchanged


def test_a_defined_measure_joins_the_known_forms_and_the_error_text() -> None:
    metrics.define("first_rel", first_relevant_rank, cutoff="required")
    assert metrics.known_forms()[-1] == "first_rel@k"
    with pytest.raises(RankscopeError, match=r"metric 'first_rel' needs a cutoff, e.g. first_rel@10"):
        metrics.parse_metric("first_rel")
    with pytest.raises(RankscopeError, match=r"known metrics: .*, rbp\(p=x\)@k, first_rel@k \(k is"):
        metrics.parse_metric("first_rell@3")


def test_definitions_are_checked() -> None:
    with pytest.raises(RankscopeError, match="metric 'ndcg' is built in and cannot be redefined"):
        metrics.define("ndcg", first_relevant_rank)
    with pytest.raises(RankscopeError, match="must be lower case letters"):
        metrics.define("First", first_relevant_rank)
    with pytest.raises(
        RankscopeError, match="^define: cutoff='maybe' is not allowed; cutoff must be one of optional, required, none$"
    ):
        metrics.define("x", first_relevant_rank, cutoff="maybe")
    metrics.define("short", lambda judged, k: np.ones(judged.n_queries - 1))
    with pytest.raises(
        RankscopeError, match=r"metric 'short' returned shape \(2,\), expected one value per query \(3,\)"
    ):
        evaluate(QRELS, RUN, ["short"])
    metrics.define("infinite", lambda judged, k: np.full(judged.n_queries, np.inf))
    with pytest.raises(RankscopeError, match="metric 'infinite' returned a non-finite value for query 0"):
        evaluate(QRELS, RUN, ["infinite"])
