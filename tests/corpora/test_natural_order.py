"""Per-query tables list queries as people count them: 1, 2, 10, not 1, 10, 2."""

import numpy as np
import pandas as pd

import rankscope as rs
from rankscope.corpora import schema
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


def test_ids_of_text_then_one_number_sort_as_the_general_rule_sorts_them() -> None:
    """The flat key of ids shaped text-then-number (q12, 301, doc-007, ab1, a10, 01) gives the order of the
    general key, which runs when any id has another shape (q1a, b, ١)."""
    rng = np.random.default_rng(0)
    prefixes = ["", "q", "Q", "a", "ab", "doc-", "é", "q_"]
    ids = [f"{rng.choice(prefixes)}{'0' * int(rng.integers(0, 3))}{rng.integers(0, 300)}" for _ in range(3000)]
    ids += ["q99999999999999999999999", "q100000000000000000000000"]  # beyond 64 bits
    general = sorted(range(len(ids)), key=lambda i: schema._natural_key(ids[i]))
    assert schema._one_number_keys(ids) is not None
    assert natural_order(ids).tolist() == general
    mixed = [*ids, "q1a"]
    assert schema._one_number_keys(mixed) is None
    assert natural_order(mixed).tolist() == sorted(range(len(mixed)), key=lambda i: schema._natural_key(mixed[i]))
