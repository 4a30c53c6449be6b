"""Per-query tables list queries as people count them: 1, 2, 10, not 1, 10, 2."""

import pandas as pd

import rankscope as rs
from rankscope.corpora.schema import natural_order


def test_natural_order_numbers_inside_text() -> None:
    ids = ["q10", "q9", "10", "2", "1", "100", "01", "b", "a2", "a10", "١"]
    assert [ids[i] for i in natural_order(ids)] == ["01", "1", "2", "10", "100", "a2", "a10", "b", "q9", "q10", "١"]


def test_evaluate_lists_queries_in_natural_order_and_keeps_the_means() -> None:
    qrels = pd.DataFrame({"query_id": ["10", "2", "1", "100"], "doc_id": ["a", "a", "b", "a"], "relevance": 1})
    run = pd.DataFrame({"query_id": ["100", "2", "10", "1"], "doc_id": ["a", "b", "a", "a"], "score": 1.0})
    result = rs.evaluate(qrels, run, ["map", "hit@1"])
    assert result.per_query["query_id"].tolist() == ["1", "1", "2", "2", "10", "10", "100", "100"]
    assert result.wide()["map"].to_dict() == {"1": 0.0, "2": 0.0, "10": 1.0, "100": 1.0}
    assert result.mean == {"map": 0.5, "hit@1": 0.5}
