"""Chunk runs against document qrels: aggregation by hand and against a brute-force version."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import SchemaError
from rankscope.corpora.chunking import chunk_id
from rankscope.evaluation import evaluate
from rankscope.evaluation.chunk_runs import aggregate_run, chunk_qrels, distinct_documents, parse_aggregation


def chunk_table(sizes: dict[str, int]) -> pd.DataFrame:
    rows = [(chunk_id(d, p), d, p) for d, n in sizes.items() for p in range(n)]
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "position"])


CHUNKS = chunk_table({"d1": 2, "d2": 1, "d3": 3, "a": 1, "b": 1})
RUN = pd.DataFrame(
    [
        ("q1", "d1#1", 0.9),
        ("q1", "d3#0", 0.8),
        ("q1", "d2#0", 0.7),
        ("q1", "d1#0", 0.6),
        ("q1", "d3#2", 0.5),
        ("q2", "a#0", 1.0),
        ("q2", "b#0", 1.0),
    ],
    columns=["query_id", "doc_id", "score"],
)
QRELS = pd.DataFrame(
    [("q1", "d3", 1), ("q1", "d2", 1), ("q1", "d4", 1), ("q2", "a", 1)], columns=["query_id", "doc_id", "relevance"]
)


def ranking(run: pd.DataFrame, query: str) -> list[tuple[str, float]]:
    rows = run[run["query_id"] == query].sort_values("rank")
    return [(d, round(s, 12)) for d, s in zip(rows["doc_id"], rows["score"])]


def test_methods_by_hand():
    assert ranking(aggregate_run(RUN, CHUNKS, "maxp"), "q1") == [("d1", 0.9), ("d3", 0.8), ("d2", 0.7)]
    assert ranking(aggregate_run(RUN, CHUNKS, "sump"), "q1") == [("d1", 1.5), ("d3", 1.3), ("d2", 0.7)]
    assert ranking(aggregate_run(RUN, CHUNKS, "meanp"), "q1") == [("d1", 0.75), ("d2", 0.7), ("d3", 0.65)]
    # firstp: d1's earliest retrieved chunk is d1#0 (0.6), d3's is d3#0 (0.8)
    assert ranking(aggregate_run(RUN, CHUNKS, "firstp"), "q1") == [("d3", 0.8), ("d2", 0.7), ("d1", 0.6)]
    assert ranking(aggregate_run(RUN, CHUNKS, "kmaxavgp:2"), "q1") == [("d1", 0.75), ("d2", 0.7), ("d3", 0.65)]
    assert ranking(aggregate_run(RUN, CHUNKS, "kmaxavgp:1"), "q1") == ranking(aggregate_run(RUN, CHUNKS), "q1")
    # tie at 1.0 between a and b: doc_id descending puts b first
    assert ranking(aggregate_run(RUN, CHUNKS, "maxp"), "q2") == [("b", 1.0), ("a", 1.0)]


def test_maxp_scored_against_document_qrels_by_hand():
    doc_run = aggregate_run(RUN, CHUNKS, "maxp")
    result = evaluate(QRELS, doc_run, ["map", "precision@2", "recall@2", "ndcg@3"]).wide()
    # q1 ranking d1 (non-relevant), d3 (rel), d2 (rel); 3 relevant documents, d4 never retrieved
    assert result.loc["q1", "map"] == pytest.approx((1 / 2 + 2 / 3) / 3)
    assert result.loc["q1", "precision@2"] == pytest.approx(0.5)
    assert result.loc["q1", "recall@2"] == pytest.approx(1 / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    assert result.loc["q1", "ndcg@3"] == pytest.approx(dcg / (1 + 1 / math.log2(3) + 1 / math.log2(4)))
    # q2: b then a (tie rule), a relevant at rank 2
    assert result.loc["q2", "map"] == pytest.approx(0.5)


def brute_maxp(run: pd.DataFrame, parents: dict[str, str]) -> dict[str, list[str]]:
    """MaxP and the tie rule written out in plain Python."""
    best: dict[str, dict[str, float]] = {}
    for q, c, s in zip(run["query_id"], run["doc_id"], run["score"]):
        docs = best.setdefault(q, {})
        docs[parents[c]] = max(s, docs.get(parents[c], -math.inf))
    return {
        q: [d for d, _ in sorted(docs.items(), key=lambda t: (t[1], t[0]), reverse=True)] for q, docs in best.items()
    }


def brute_ap_and_ndcg10(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    hits, precision_sum, dcg = 0, 0.0, 0.0
    for i, d in enumerate(ranked, start=1):
        if d in relevant:
            hits += 1
            precision_sum += hits / i
            if i <= 10:
                dcg += 1 / math.log2(i + 1)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(relevant), 10) + 1))
    return precision_sum / len(relevant), dcg / ideal


@pytest.mark.parametrize("seed", range(5))
def test_maxp_equals_brute_force_on_random_runs(seed):
    rng = np.random.default_rng(seed)
    sizes = {f"d{i}" if i % 5 else f"x#{i}": int(rng.integers(1, 5)) for i in range(30)}  # '#' inside some doc ids
    chunks = chunk_table(sizes)
    parents = dict(zip(chunks["chunk_id"], chunks["doc_id"]))
    rows, qrels = [], []
    for q in range(8):
        picked = rng.choice(len(chunks), size=int(rng.integers(5, 40)), replace=False)
        scores = rng.integers(0, 4, size=len(picked)).astype(float)  # few values: many ties
        rows += [(f"q{q}", chunks["chunk_id"].iloc[i], s) for i, s in zip(picked, scores)]
        relevant = rng.choice(list(sizes), size=int(rng.integers(1, 6)), replace=False)
        qrels += [(f"q{q}", d, 1) for d in relevant]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).sample(frac=1, random_state=seed)
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    ours = aggregate_run(run, chunks, "maxp")
    brute = brute_maxp(run, parents)
    assert {q: list(g.sort_values("rank")["doc_id"]) for q, g in ours.groupby("query_id")} == brute
    per_query = evaluate(qrels, ours, ["map", "ndcg@10"]).wide()
    for q, ranked in brute.items():
        relevant = set(qrels.loc[qrels["query_id"] == q, "doc_id"])
        ap, ndcg = brute_ap_and_ndcg10(ranked, relevant)
        assert per_query.loc[q, "map"] == pytest.approx(ap, abs=1e-12)
        assert per_query.loc[q, "ndcg@10"] == pytest.approx(ndcg, abs=1e-12)


def test_chunk_qrels_and_distinct_documents():
    judged = chunk_qrels(QRELS, CHUNKS)
    q1 = judged[judged["query_id"] == "q1"].set_index("doc_id")["relevance"].to_dict()
    assert q1 == {"d3#0": 1, "d3#1": 1, "d3#2": 1, "d2#0": 1}  # d4 has no chunks
    # q1 top 4: d1#1, d3#0, d2#0, d1#0 -> 3 documents; top 2 -> 2
    assert distinct_documents(RUN, CHUNKS, 4).to_dict() == {"q1": 3, "q2": 2}
    assert distinct_documents(RUN, CHUNKS, 2)["q1"] == 2
    # scored directly: the chunk run's relevant chunks at ranks 2, 3 and 5 of 4 relevant chunks
    direct = evaluate(judged, RUN, ["map"]).wide().loc["q1", "map"]
    assert direct == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 4)


def test_bad_input_is_named():
    with pytest.raises(SchemaError, match="kmaxavgp needs K"):
        parse_aggregation("kmaxavgp")
    with pytest.raises(SchemaError, match="unknown aggregation 'max'"):
        parse_aggregation("max")
    stray = pd.DataFrame([("q1", "zz#0", 1.0)], columns=["query_id", "doc_id", "score"])
    with pytest.raises(SchemaError, match="'zz#0'"):
        aggregate_run(stray, CHUNKS)
