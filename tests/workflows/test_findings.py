"""Findings fire exactly when their thresholds say, and quote the numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankscope.workflows.diagnose.findings import (
    comparison_findings,
    diagnostics_findings,
    retriever_findings,
    sampled_findings,
)
from rankscope.workflows.diagnose.misses import miss_breakdown


def cutoffs(hit: dict[int, float], mrr: dict[int, float]) -> pd.DataFrame:
    frame = pd.DataFrame({"hit": pd.Series(hit), "mrr": pd.Series(mrr)})
    frame["recall"] = frame["hit"]
    return frame


def test_found_but_ranked_low_and_not_sharp() -> None:
    # 10 queries: first relevant at ranks 8, 8, 9, 9, 12, 15, 18, 19 and two never found.
    ranks = pd.Series([8, 8, 9, 9, 12, 15, 18, 19, np.nan, np.nan], index=[f"q{i}" for i in range(10)])
    misses = miss_breakdown(ranks, (1, 3, 5, 10, 20))
    hit = {1: 0.0, 3: 0.0, 5: 0.0, 10: 0.4, 20: 0.8}
    mrr20 = float(np.nansum(1 / ranks.to_numpy()[ranks.to_numpy() <= 20]) / 10)
    table = cutoffs(hit, {k: (mrr20 if k == 20 else 0.0) for k in hit})
    text = " ".join(retriever_findings("bm25", table, misses, depth=1000))
    assert "at K=10, 6 of 10 queries (60%)" in text
    assert "4 ranking misses and 2 recall misses" in text
    assert "candidates are found but ranked too low" in text
    assert "not sharp; 8 queries have their first relevant document at ranks 6-20" in text
    assert "2 queries (20%) have no relevant document within the top 1000" in text


def test_sharp_retriever_triggers_nothing_but_the_summary() -> None:
    ranks = pd.Series([1.0] * 9 + [2.0], index=[f"q{i}" for i in range(10)])
    misses = miss_breakdown(ranks, (1, 3, 5, 10, 20))
    table = cutoffs({1: 0.9, 3: 1, 5: 1, 10: 1, 20: 1}, {1: 0.9, 3: 0.95, 5: 0.95, 10: 0.95, 20: 0.95})
    assert retriever_findings("x", table, misses, depth=100) == [
        "x: every query has a relevant document in the top 10."
    ]


def test_comparison_ranking_not_recall() -> None:
    # Same queries found, a ranks them higher (1, 2 vs 3, 4): Hit@10 equal, MRR@10 of a minus b is +0.229.
    a = pd.Series([1.0, 2.0, 5.0, np.nan], index=list("wxyz"))
    b = pd.Series([3.0, 4.0, 5.0, np.nan], index=list("wxyz"))
    cut_a = cutoffs({10: 0.75}, {10: (1 + 1 / 2 + 1 / 5) / 4})
    cut_b = cutoffs({10: 0.75}, {10: (1 / 3 + 1 / 4 + 1 / 5) / 4})
    text = " ".join(comparison_findings("a", cut_a, a, "b", cut_b, b, depth=100))
    assert "Hit@K is unchanged" in text and "MRR@10 +0.229" in text and "improved ranking, not recall" in text
    assert "higher on 2, lower on 0 and at the same rank on 1" in text
    assert "finds a relevant document" not in text  # recall identical


def test_comparison_recall_gain() -> None:
    a = pd.Series([1.0, 2.0], index=["p", "q"])
    b = pd.Series([1.0, np.nan], index=["p", "q"])
    text = " ".join(comparison_findings("a", cutoffs({5: 1.0}, {5: 0.75}), a, "b", cutoffs({5: 0.5}, {5: 0.5}), b, 50))
    assert "for more queries (Hit@5 +0.500 (+1))" in text
    assert "finds a relevant document for 1 query where b finds none, and misses 0" in text


def test_sampled_flattery() -> None:
    table = pd.DataFrame({"metric": ["mrr@10", "hit@10"], "full_per_document": [0.2, 0.6], "sampled": [0.5, 0.65]})
    found = sampled_findings("bm25", table)
    assert found == [
        "bm25: the sampled protocol flatters it: mrr@10 0.500 vs 0.200 (2.5x), sampled vs the same relevant "
        "documents ranked among all non-relevant ones."
    ]
    assert sampled_findings("bm25", table.assign(sampled=[0.2, 0.6])) == []


def test_answers_found_but_recall_low() -> None:
    ranks = pd.Series([1.0, 2.0, 3.0, 1.0], index=list("abcd"))
    misses = miss_breakdown(ranks, (10, 100, 1000))
    table = pd.DataFrame(
        {"hit": [1.0, 1.0, 1.0], "recall": [0.1, 0.45, 0.8], "mrr": [0.7, 0.7, 0.7]}, index=[10, 100, 1000]
    )
    text = " ".join(retriever_findings("bm25", table, misses, depth=1000))
    assert "Hit@100 is 1.000 but Recall@100 only 0.450" in text
    assert "55% of the relevant documents are not in the top 100; within the top 1000 Recall is 0.800" in text
    assert "Recall@100" not in " ".join(retriever_findings("bm25", table.assign(recall=0.6), misses, depth=1000))


def test_recall_failures_and_complementarity_quote_their_counts() -> None:
    from rankscope.workflows.diagnose.findings import complementarity_findings, failure_findings
    from rankscope.workflows.diagnose.recall_failures import failure_summary

    # a's 4 recall losses: 3 share < 25% of the query's terms (2 share none), 1 shares half; b finds 1 of them
    failures = pd.DataFrame(
        {
            "query_id": ["q"] * 4,
            "doc_id": ["d1", "d2", "d3", "d4"],
            "shared_terms": [0, 0, 1, 2],
            "reason": ["vocabulary mismatch"] * 3 + ["outscored"],
            "rank_b": [np.nan, 7.0, np.nan, np.nan],
        }
    )
    text = " ".join(failure_findings("a", failure_summary(failures), depth=100))
    assert "of its 4 recall losses, 3 (75%) are vocabulary mismatches" in text and "2 share no term at all" in text
    assert "1 (25%) were outscored" in text and "mostly vocabulary" in text
    other = pd.DataFrame({"query_id": ["q"], "doc_id": ["d9"], "shared_terms": [3], "reason": ["outscored"]})
    both = complementarity_findings("a", failures, "b", other.assign(rank_a=np.nan), 100)
    assert both == [
        "a vs b: b retrieves 1 (25%) of a's 4 recall losses within its top 100; they find different documents: "
        "fusing them should raise recall.",
        "a vs b: a retrieves 0 (0%) of b's 1 recall losses within its top 100; fusing them would recover little.",
    ]
    assert failure_findings("a", failure_summary(failures.iloc[:0]), 100) == [
        "a: every relevant document is within the top 100: no recall losses."
    ]


def test_diagnostics_findings_name_a_lossy_index_and_unknown_words_only() -> None:
    found = diagnostics_findings("w2v", {"oov_documents": 0.0116, "oov_queries": 0.08, "ann_recall@100": 0.925})
    assert found == [
        "w2v: 8.0% of query tokens are unknown to its word vectors (oov_queries 0.0800) and count for nothing "
        "in the embeddings: vectors trained on the collection (vectors=corpus) know every document word",
        "w2v: its approximate index returns 92.5% of the exact top 100 (ann_recall@100 0.9250); the documents "
        "it drops are recall losses of the index, not of the model: raise ef_search (hnsw) or nprobe (ivf), "
        "or use faiss_index=flat",
    ]
    # a rerank's stages are prefixed; an exact index and few unknown words say nothing
    assert len(diagnostics_findings("r", {"first ann_recall@20": 0.5})) == 1
    assert diagnostics_findings("d", {"ann_recall@100": 1.0, "oov_documents": 0.049}) == []
