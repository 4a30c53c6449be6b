"""Token-budget metrics, hand-computed."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.evaluation.budget import (
    Evidence,
    budget_evaluate,
    budget_names,
    evidence_from_qrels,
    tokens_to_first,
)

LENGTHS = pd.Series({"c1": 100, "c2": 300, "c3": 50, "c4": 200, "c5": 600, "d1": 500, "d2": 10, "e1": 7, "e2": 9})
RUN = pd.DataFrame(
    [
        ("q1", "c1", 0.9),
        ("q1", "c2", 0.8),
        ("q1", "c3", 0.7),
        ("q1", "c4", 0.6),
        ("q1", "c5", 0.5),
        ("q2", "d1", 2.0),
        ("q2", "d2", 1.0),
        ("q3", "e1", 1.0),
        ("q3", "e2", 1.0),
    ],
    columns=["query_id", "doc_id", "score"],
)
# q1: c3 carries unit A, c5 unit B, unit C has no retrieved item; q2: d2; q3: e2; q4 never retrieved
EVIDENCE = Evidence.from_pairs(
    pd.DataFrame(
        [("q1", "c3", "A"), ("q1", "c5", "B"), ("q2", "d2", "D"), ("q3", "e2", "E"), ("q4", "zz", "Z")],
        columns=["query_id", "doc_id", "unit"],
    ),
    totals=pd.Series({"q1": 3, "q2": 1, "q3": 1, "q4": 1}),
)


def test_tokens_to_first_by_hand():
    first = tokens_to_first(RUN, LENGTHS, EVIDENCE)
    # q1: running totals 100, 400, 450 (c3); q2: 500 + 10; q3: tie at 1.0, e2 before e1 (doc_id desc)
    assert first[["q1", "q2", "q3"]].tolist() == [450.0, 510.0, 9.0]
    assert math.isnan(first["q4"])


def test_hit_and_recall_at_budgets_by_hand():
    result = budget_evaluate(RUN, LENGTHS, EVIDENCE, [400, 450, 1000, 1250]).wide()
    assert list(result.columns) == budget_names([400, 450, 1000, 1250])
    assert result.loc["q1"].tolist() == [0, 0, 1, 1 / 3, 1, 1 / 3, 1, 2 / 3]
    # q2: the 500-token d1 crosses a 400 budget, so the context ends empty: the 10-token d2 is not slipped in
    assert result.loc["q2", ["hit@400tok", "hit@450tok", "hit@1000tok"]].tolist() == [0, 0, 1]
    assert result.loc["q4"].tolist() == [0] * 8  # evaluated, never retrieved
    mean = budget_evaluate(RUN, LENGTHS, EVIDENCE, [450]).mean
    assert mean == {"hit@450tok": pytest.approx(2 / 4), "recall@450tok": pytest.approx((1 / 3 + 0 + 1 + 0) / 4)}


def test_evidence_from_document_qrels_through_chunks():
    qrels = pd.DataFrame([("q", "D1", 1), ("q", "D2", 2), ("q", "D3", 0)], columns=["query_id", "doc_id", "relevance"])
    chunks = pd.DataFrame({"chunk_id": ["D1#0", "D1#1", "D2#0", "D3#0"], "doc_id": ["D1", "D1", "D2", "D3"]})
    evidence = evidence_from_qrels(qrels, chunks)
    assert evidence.totals.to_dict() == {"q": 2}
    assert sorted(map(tuple, evidence.pairs.values.tolist())) == [
        ("q", "D1#0", "D1"),
        ("q", "D1#1", "D1"),
        ("q", "D2#0", "D2"),
    ]
    lengths = pd.Series({"D1#0": 10, "D1#1": 10, "D2#0": 10, "D3#0": 10})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["D3#0", "D1#1", "D1#0", "D2#0"], "score": [4.0, 3.0, 2.0, 1.0]})
    # two chunks of D1 count once: recall@30 is 1 of 2 documents, recall@40 both
    result = budget_evaluate(run, lengths, evidence, [30, 40]).mean
    assert result == {"hit@30tok": 1.0, "recall@30tok": 0.5, "hit@40tok": 1.0, "recall@40tok": 1.0}
    whole = evidence_from_qrels(qrels)
    assert sorted(whole.pairs["doc_id"]) == ["D1", "D2"]


def test_bad_input():
    with pytest.raises(RankscopeError, match="positive whole numbers"):
        budget_evaluate(RUN, LENGTHS, EVIDENCE, [0])
    with pytest.raises(RankscopeError, match="repeat"):
        budget_evaluate(RUN, LENGTHS, EVIDENCE, [5, 5])
    with pytest.raises(SchemaError, match="no token length .* 'c1'"):
        budget_evaluate(RUN, LENGTHS.drop("c1"), EVIDENCE, [5])


def test_gold_spans_as_evidence():
    from rankscope.corpora.answers import span_matches

    chunks = pd.DataFrame(
        {"chunk_id": ["d#0", "d#1"], "doc_id": ["d", "d"], "start": [0, 8], "end": [10, 20], "tokens": [5, 6]}
    )
    spans = pd.DataFrame([("q", "d", 12, 18), ("q", "e", 0, 4)], columns=["query_id", "doc_id", "start", "end"])
    found = span_matches(spans, chunks).rename(columns={"span": "unit"})
    evidence = Evidence.from_pairs(found, totals=pd.Series({"q": 2}))  # two gold spans, one in a missing document
    run = pd.DataFrame({"query_id": "q", "doc_id": ["d#0", "d#1"], "score": [2.0, 1.0]})
    lengths = chunks.set_index("chunk_id")["tokens"]
    assert tokens_to_first(run, lengths, evidence)["q"] == 11  # d#0 (5 tokens) holds no span, d#1 (6) does
    assert budget_evaluate(run, lengths, evidence, [10, 11]).mean == {
        "hit@10tok": 0.0,
        "recall@10tok": 0.0,
        "hit@11tok": 1.0,
        "recall@11tok": 0.5,
    }
