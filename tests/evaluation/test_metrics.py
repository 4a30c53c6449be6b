"""Hand-computed values from the metric definitions, and evaluate()'s counting rules."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import ParameterError, RankscopeError, SchemaError
from rankscope.evaluation import DEFAULT_METRICS, EvaluationResult, evaluate
from rankscope.evaluation.coverage import CoverageWarning, DisjointRunError

# q1: ranking d2(label 0), d1(2), d5(-1), d6(unjudged), d3(1); d4 (label 3) not retrieved.
# q2: judged, not retrieved.  q3: judged non-relevant only.  q4: retrieved, not judged.
QRELS = pd.DataFrame(
    [
        ("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q1", "d4", 3), ("q1", "d5", -1),
        ("q2", "d9", 1),
        ("q3", "d7", 0),
    ],
    columns=["query_id", "doc_id", "relevance"],
)  # fmt: skip
RUN = pd.DataFrame(
    [
        ("q1", "d3", 0.5), ("q1", "d1", 0.8), ("q1", "d2", 0.9), ("q1", "d6", 0.6), ("q1", "d5", 0.7),
        ("q3", "d7", 1.0),
        ("q4", "d1", 1.0),
    ],
    columns=["query_id", "doc_id", "score"],
)  # fmt: skip

LOG3 = math.log2(3)
Q1_EXPECTED = {
    "precision@2": 1 / 2,
    "precision@10": 2 / 10,  # divides by k although only 5 were retrieved
    "recall@2": 1 / 3,
    "recall@5": 2 / 3,
    "f1@2": 2 * 0.5 * (1 / 3) / (0.5 + 1 / 3),
    "hit@1": 0.0,
    "hit@2": 1.0,
    "mrr@1": 0.0,
    "mrr@2": 1 / 2,
    "mrr": 1 / 2,
    "map": (1 / 2 + 2 / 5) / 3,
    "map@2": (1 / 2) / 3,
    "rprec": 1 / 3,
    "ndcg@3": (2 / LOG3) / (3 + 2 / LOG3 + 1 / 2),
    "ndcg_exp@3": (3 / LOG3) / (7 + 3 / LOG3 + 1 / 2),
    "precision": 2 / 5,
    "recall": 2 / 3,
    "f1": 2 * 0.4 * (2 / 3) / (0.4 + 2 / 3),
    "precision(threshold=0.75)": 1 / 2,
    "recall(threshold=0.75)": 1 / 3,
    "f1(threshold=0.75)": 2 * 0.5 * (1 / 3) / (0.5 + 1 / 3),
}


def test_hand_computed_values_on_q1() -> None:
    result = evaluate(QRELS, RUN, list(Q1_EXPECTED))
    wide = result.wide()
    for metric, expected in Q1_EXPECTED.items():
        assert wide.loc["q1", metric] == pytest.approx(expected, abs=1e-12), metric


def test_qrels_only_and_unjudged_queries_score_zero_and_count() -> None:
    result = evaluate(QRELS, RUN, ["ndcg@3", "mrr@2"])
    wide = result.wide()
    assert list(wide.index) == ["q1", "q2", "q3"]  # q4 (run only) ignored
    assert (wide.loc[["q2", "q3"]] == 0).all().all()
    assert result.mean["mrr@2"] == pytest.approx(0.5 / 3)
    assert result.n_unjudged == 1 and result.n_queries == 3


def test_judged_only_and_exclude_unjudged_change_the_denominator() -> None:
    def mean(**options: bool) -> float:
        return evaluate(QRELS, RUN, ["mrr"], **options).mean["mrr"]

    assert mean(judged_only=True) == pytest.approx(0.5 / 2)  # q1, q3
    assert mean(exclude_unjudged=True) == pytest.approx(0.5 / 2)  # q1, q2
    assert mean(judged_only=True, exclude_unjudged=True) == pytest.approx(0.5)  # q1
    excluded = evaluate(QRELS, RUN, ["mrr"], exclude_unjudged=True)
    assert excluded.n_unjudged == 1 and "q3" not in excluded.wide().index


def test_relevance_level_moves_the_relevant_set_but_not_ndcg() -> None:
    level2 = evaluate(QRELS, RUN, ["mrr", "recall", "ndcg@3"], relevance_level=2).wide().loc["q1"]
    assert level2["mrr"] == pytest.approx(1 / 2)  # d1 (label 2) at rank 2 is still relevant
    assert level2["recall"] == pytest.approx(1 / 2)  # d1 of {d1, d4}
    assert level2["ndcg@3"] == pytest.approx(Q1_EXPECTED["ndcg@3"])  # graded gains, as trec_eval


def test_ties_are_broken_by_doc_id_descending_in_byte_order() -> None:
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "\uff5e", "Z"], "relevance": [1, 1, 1]})
    docs = ["a", "b", "Z", "\uff5e", "\U0001f600", "é"]
    run = pd.DataFrame({"query_id": "q", "doc_id": docs, "score": 1.0})
    # UTF-8 byte order descending: U+1F600, U+FF5E, é, b, a, Z
    result = evaluate(qrels, run, ["mrr", "precision@2", "precision@5"]).wide().loc["q"]
    assert result["mrr"] == pytest.approx(1 / 2)
    assert result["precision@2"] == pytest.approx(1 / 2)
    assert result["precision@5"] == pytest.approx(2 / 5)


def test_rank_column_and_row_order_are_ignored() -> None:
    ranked = RUN.assign(rank=np.arange(len(RUN), 0, -1))
    expected = evaluate(QRELS, RUN, ["map", "ndcg@3"]).per_query
    pd.testing.assert_frame_equal(evaluate(QRELS, ranked.iloc[::-1], ["map", "ndcg@3"]).per_query, expected)


def test_inputs_are_not_modified() -> None:
    qrels, run = QRELS.copy(), RUN.assign(rank=1)
    before_q, before_r = qrels.copy(), run.copy()
    evaluate(qrels, run, ["map", "precision(threshold=0.5)"])
    pd.testing.assert_frame_equal(qrels, before_q)
    pd.testing.assert_frame_equal(run, before_r)


def test_duplicate_documents_are_refused_naming_query_and_doc() -> None:
    duplicated = pd.concat([RUN, RUN.iloc[[1]].assign(score=0.1)], ignore_index=True)
    with pytest.raises(SchemaError, match=r"^run: duplicate query, document 'q1', 'd1'$"):
        evaluate(QRELS, duplicated)
    with pytest.raises(SchemaError, match=r"^qrels: duplicate query, document 'q2', 'd9'$"):
        evaluate(pd.concat([QRELS, QRELS.iloc[[5]]]), RUN)


def test_bad_run_input_gives_one_clear_error() -> None:
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['score'\]"):
        evaluate(QRELS, RUN.drop(columns="score"))
    with pytest.raises(SchemaError, match=r"finite numbers; row 2 has"):
        evaluate(QRELS, RUN.assign(score=[1, 2, np.nan, 4, 5, 6, 7]))
    with pytest.raises(SchemaError, match=r"'doc_id' has a missing value at row 0"):
        evaluate(QRELS, RUN.assign(doc_id=[None, "a", "b", "c", "d", "e", "f"]))
    with pytest.raises(RankscopeError, match="unknown metric 'presicion@10'; did you mean 'precision@10'"):
        evaluate(QRELS, RUN, ["presicion@10"])
    for level, shown in ((0, "0"), (True, "True"), (1.0, "1.0")):
        with pytest.raises(ParameterError) as caught:
            evaluate(QRELS, RUN, relevance_level=level)
        assert str(caught.value) == (
            f"evaluate: relevance_level={shown} is not allowed; relevance_level must be an int in [1, inf)"
        )
    assert evaluate(QRELS, RUN, relevance_level=np.int64(2)).mean == evaluate(QRELS, RUN, relevance_level=2).mean


def test_integer_ids_are_compared_as_strings() -> None:
    qrels = pd.DataFrame({"query_id": [1, 1], "doc_id": [10, 2], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": [1, 1], "doc_id": [10, 2], "score": [0.0, 0.0]})
    # tie: "2" > "10" as strings, so the relevant "10" is second
    assert evaluate(qrels, run, ["mrr"]).mean["mrr"] == pytest.approx(1 / 2)


def test_empty_run_is_refused_unless_allowed_then_scores_every_query_zero() -> None:
    empty = RUN.iloc[:0]
    with pytest.raises(DisjointRunError, match=r"^the run is empty: every query would score 0 \(to score it anyway"):
        evaluate(QRELS, empty, ["map", "ndcg@10"])
    with pytest.warns(CoverageWarning, match="the run is empty: every query scores 0 \\(allowed\\)"):
        result = evaluate(QRELS, empty, ["map", "ndcg@10"], allow_disjoint=True)
    assert result.n_queries == 3 and result.mean == {"map": 0.0, "ndcg@10": 0.0}


def test_result_shapes_and_default_metrics() -> None:
    result = evaluate(QRELS, RUN)
    assert isinstance(result, EvaluationResult)
    assert tuple(result.mean) == DEFAULT_METRICS
    assert list(result.per_query.columns) == ["query_id", "metric", "value"]
    assert len(result.per_query) == 3 * len(DEFAULT_METRICS)
    assert list(result.wide().columns) == list(DEFAULT_METRICS)
    as_dict = result.to_dict(per_query=True)
    assert as_dict["per_query"]["q1"]["ndcg@10"] == pytest.approx(result.wide().loc["q1", "ndcg@10"])
    assert as_dict["n_unjudged"] == 1 and "per_query" not in result.to_dict()
