"""Recall vs ranking misses on a hand-made run whose answers are worked out below."""

from __future__ import annotations

import math

import pandas as pd

from rankscope.workflows.misses import first_relevant_ranks, miss_breakdown, rank_distribution

# q1: relevant d2, d5. d1 and d2 tie at 1.0 -> doc_id descending puts d2 first, so the
#     first relevant rank is 1 although the run file claims rank 2 for d2.
# q2: relevant d9, retrieved at rank 4.
# q3: relevant d1 (d7 judged 0); only d7 and d2 retrieved -> no relevant within any depth.
# q4: judged, but only with relevance 0 -> not a judged query, left out.
# q5: in the run only -> left out.
QRELS = pd.DataFrame(
    [("q1", "d2", 1), ("q1", "d5", 2), ("q2", "d9", 1), ("q3", "d1", 1), ("q3", "d7", 0), ("q4", "d1", 0)],
    columns=["query_id", "doc_id", "relevance"],
)
RUN = pd.DataFrame(
    [
        ("q1", "d1", 1.0, 1),
        ("q1", "d2", 1.0, 2),
        ("q1", "d3", 0.5, 3),
        ("q2", "d3", 0.9, 1),
        ("q2", "d4", 0.8, 2),
        ("q2", "d5", 0.7, 3),
        ("q2", "d9", 0.6, 4),
        ("q3", "d7", 0.9, 1),
        ("q3", "d2", 0.8, 2),
        ("q5", "d9", 0.9, 1),
    ],
    columns=["query_id", "doc_id", "score", "rank"],
)


def test_first_relevant_ranks_follow_tie_rule_and_depth() -> None:
    ranks = first_relevant_ranks(RUN, QRELS, depth=10)
    assert list(ranks.index) == ["q1", "q2", "q3"]
    assert ranks["q1"] == 1 and ranks["q2"] == 4 and math.isnan(ranks["q3"])
    shallow = first_relevant_ranks(RUN, QRELS, depth=3)
    assert shallow["q1"] == 1 and math.isnan(shallow["q2"])


def test_relevance_level_changes_what_counts_as_relevant() -> None:
    ranks = first_relevant_ranks(RUN, QRELS, depth=10, relevance_level=2)
    assert list(ranks.index) == ["q1"]
    assert math.isnan(ranks["q1"])  # d5 is the only grade-2 document and it is not retrieved


def test_inputs_not_mutated() -> None:
    run, qrels = RUN.copy(), QRELS.copy()
    first_relevant_ranks(run, qrels, depth=10)
    pd.testing.assert_frame_equal(run, RUN)
    pd.testing.assert_frame_equal(qrels, QRELS)


def test_miss_breakdown_counts_by_hand() -> None:
    table = miss_breakdown(first_relevant_ranks(RUN, QRELS, depth=10), cutoffs=(1, 3, 5))
    assert table["hits"].tolist() == [1, 1, 2]
    assert table["ranking_misses"].tolist() == [1, 1, 0]  # q2 (rank 4) until K reaches 4
    assert table["recall_misses"].tolist() == [1, 1, 1]  # q3 at every K
    assert table.loc[1, "ranking_share_of_misses"] == 0.5
    assert table.loc[5, "ranking_share_of_misses"] == 0.0
    assert table.loc[5, "hit_share"] == 2 / 3
    shares = table[["hit_share", "ranking_miss_share", "recall_miss_share"]].sum(axis=1)
    assert (abs(shares - 1) < 1e-12).all()


def test_nothing_missing_gives_nan_share_of_misses() -> None:
    table = miss_breakdown(pd.Series([1.0, 2.0], index=["a", "b"]), cutoffs=(5,))
    assert table.loc[5, "hits"] == 2 and math.isnan(table.loc[5, "ranking_share_of_misses"])


def test_rank_distribution_buckets() -> None:
    dist = rank_distribution(first_relevant_ranks(RUN, QRELS, depth=10), depth=10)
    assert dist.to_dict() == {"1": 1, "2-3": 0, "4-5": 1, "6-10": 0, "none in top 10": 1}
    deep = rank_distribution(pd.Series([150.0, 101.0, 7.0]), depth=1000)
    assert deep["101-1000"] == 2 and deep["6-10"] == 1 and deep["none in top 1000"] == 0
