"""Headroom: a hand-computed case, and properties of the oracle on random runs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.workflows.diagnose.headroom import check_metrics, default_metrics, headroom, ideal_run, oracle_run

# q1: a (grade 2), b, c (grade 1); the run has x, b, y, a (c is never retrieved).
# q2: d (grade 1) retrieved at rank 2 behind z; e judged 0.
QRELS = pd.DataFrame(
    [("q1", "a", 2), ("q1", "b", 1), ("q1", "c", 1), ("q2", "d", 1), ("q2", "e", 0)],
    columns=["query_id", "doc_id", "relevance"],
)
RUN = pd.DataFrame(
    [("q1", "x", 0.9), ("q1", "b", 0.8), ("q1", "y", 0.7), ("q1", "a", 0.6), ("q2", "z", 0.5), ("q2", "d", 0.4)],
    columns=["query_id", "doc_id", "score"],
)
L3 = 1 / math.log2(3)  # discount at rank 2


def test_oracle_and_ideal_runs_by_hand() -> None:
    oracle = oracle_run(RUN, QRELS, depth=4)
    assert oracle.groupby("query_id")["doc_id"].apply(list).to_dict() == {"q1": ["a", "b", "x", "y"], "q2": ["d", "z"]}
    assert oracle_run(RUN, QRELS, depth=2)["doc_id"].tolist() == ["b", "x", "d", "z"]  # a is beyond the depth
    assert ideal_run(QRELS)["doc_id"].tolist() == ["a", "b", "c", "d"]


def test_headroom_by_hand() -> None:
    result = headroom(QRELS, RUN, ["ndcg@3", "recall@2", "mrr@3"], depth=4)
    table = result.summary
    idcg = 2 + L3 + 1 / 2  # q1's ideal: a, b, c
    q1_ndcg = {"actual": L3 / idcg, "oracle": (2 + L3) / idcg, "ideal": 1.0}
    q2_ndcg = {"actual": L3, "oracle": 1.0, "ideal": 1.0}  # d at rank 2, then first
    for kind in ("actual", "oracle", "ideal"):
        assert table.loc["ndcg@3", kind] == pytest.approx((q1_ndcg[kind] + q2_ndcg[kind]) / 2)
    # recall@2: q1 finds b (1/3), the oracle a and b (2/3), and no ranking can do better with 3 relevant;
    # q2's d is in the top 2 already
    assert table.loc["recall@2"].tolist()[:3] == pytest.approx([(1 / 3 + 1) / 2, (2 / 3 + 1) / 2, (2 / 3 + 1) / 2])
    assert table.loc["mrr@3", ["actual", "oracle", "ideal"]].tolist() == pytest.approx([0.5, 1.0, 1.0])
    assert table.loc["ndcg@3", "ranking_headroom"] == pytest.approx((2 / idcg + 1 - L3) / 2)
    assert table.loc["ndcg@3", "recall_headroom"] == pytest.approx((1 - (2 + L3) / idcg) / 2)
    lost = result.lost("ndcg@3")
    assert lost.loc["q2", "recall_lost"] == 0 and lost.loc["q2", "ranking_lost"] == pytest.approx(1 - L3)
    assert lost.loc["q1", "lost"] == pytest.approx(1 - L3 / idcg)


def test_refuses_metrics_without_headroom_or_beyond_the_depth() -> None:
    with pytest.raises(RankscopeError, match="scores the retrieved set, not its order"):
        check_metrics(["precision"], 100)
    with pytest.raises(RankscopeError, match="scores the retrieved set"):
        check_metrics(["recall(threshold=0.5)"], 100)
    with pytest.raises(RankscopeError, match="raise --depth to at least 1000"):
        check_metrics(["recall@1000"], 100)
    assert check_metrics(["map", "ndcg", "bpref", "precision@5"], 100) == ["map", "ndcg", "bpref", "precision@5"]
    assert default_metrics(100) == ("ndcg@10", "mrr@10", "recall@10", "map")
    assert default_metrics(5) == ("ndcg@5", "mrr@5", "recall@5", "map")


METRICS = [
    "ndcg@5",
    "ndcg",
    "ndcg_exp@5",
    "recall@5",
    "precision@5",
    "mrr@5",
    "hit@3",
    "map",
    "map@5",
    "bpref",
    "rprec",
]


@pytest.mark.parametrize("seed", range(8))
def test_oracle_is_never_below_actual(seed: int, random_case) -> None:
    qrels, run = random_case(seed)
    for depth in (3, 10, 30):
        metrics = [m for m in METRICS if "@" not in m or int(m.split("@")[1]) <= depth]
        per_query = headroom(qrels, run, metrics, depth).per_query
        assert (per_query["oracle"] >= per_query["actual"] - 1e-12).all()
        assert (per_query["ideal"] >= per_query["oracle"] - 1e-12).all()


@pytest.mark.parametrize("seed", range(8))
def test_oracle_is_ideal_when_the_depth_covers_every_relevant_document(seed: int, random_case) -> None:
    qrels, run = random_case(seed)
    missing = qrels.merge(run, on=["query_id", "doc_id"], how="left", indicator=True)
    missing = missing.loc[(missing["_merge"] == "left_only") & (missing["relevance"] >= 1), ["query_id", "doc_id"]]
    covered = pd.concat([run, missing.assign(score=-1.0)], ignore_index=True)  # every relevant document, last
    per_query = headroom(qrels, covered, METRICS, depth=60).per_query
    assert per_query["oracle"].tolist() == pytest.approx(per_query["ideal"].tolist())
    # and the recall losses are exactly what stops the oracle: the uncovered run's oracle falls short
    short = headroom(qrels, run, METRICS, depth=60).per_query
    if len(missing):
        assert (short["oracle"] < short["ideal"] - 1e-12).any()
