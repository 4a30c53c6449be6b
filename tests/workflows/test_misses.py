"""Recall vs ranking misses on a hand-made run whose answers are worked out below."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rankscope.evaluation import evaluate
from rankscope.workflows.diagnose.findings import unjudged_findings
from rankscope.workflows.diagnose.misses import (
    first_relevant_ranks,
    judgment_table,
    loss_summary,
    loss_table,
    miss_breakdown,
    rank_distribution,
    relevant_ranks,
)

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


def test_relevant_ranks_list_every_relevant_document() -> None:
    ranks = relevant_ranks(RUN, QRELS, depth=10)
    rows = [(q, d, int(g), r) for q, d, g, r in ranks.itertuples(index=False)]
    assert rows[0] == ("q1", "d2", 1, 1.0)
    assert rows[1][:3] == ("q1", "d5", 2) and math.isnan(rows[1][3])  # judged, never retrieved
    assert rows[2] == ("q2", "d9", 1, 4.0)
    assert rows[3][:3] == ("q3", "d1", 1) and math.isnan(rows[3][3])
    assert len(rows) == 4  # q3's d7 (grade 0) and q4 (no relevant document) are not listed


def test_losses_by_hand() -> None:
    # q1: d2 at 1, d5 never; q2: d9 at 4; q3: d1 never.
    table = loss_table(relevant_ranks(RUN, QRELS, depth=3), cutoffs=(1, 3), depth=3).set_index(["K", "query_id"])
    assert table.loc[(1, "q1"), ["relevant", "found", "ranking_loss", "recall_loss"]].tolist() == [2, 1, 0, 1]
    # depth 3: d9 at rank 4 is beyond the candidates, so it is a recall loss, not a ranking loss
    assert table.loc[(3, "q2"), ["found", "ranking_loss", "recall_loss"]].tolist() == [0, 0, 1]
    deep = loss_table(relevant_ranks(RUN, QRELS, depth=10), cutoffs=(1, 3, 5), depth=10).set_index(["K", "query_id"])
    assert deep.loc[(3, "q2"), ["found", "ranking_loss", "recall_loss"]].tolist() == [0, 1, 0]
    assert deep.loc[(5, "q2"), ["found", "ranking_loss", "recall_loss"]].tolist() == [1, 0, 0]
    summary = loss_summary(deep.reset_index())
    assert summary["found"].tolist() == [1, 1, 2] and summary["recall_loss"].tolist() == [2, 2, 2]
    assert summary.loc[1, "found_share"] == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert summary.loc[1, "pooled_found_share"] == pytest.approx(1 / 4)


@pytest.mark.parametrize("seed", range(20))
def test_losses_add_up_and_found_share_is_recall(seed: int, random_case) -> None:
    qrels, run = random_case(seed)
    depth, cutoffs = 12, (1, 3, 5, 10, 12)
    table = loss_table(relevant_ranks(run, qrels, depth), cutoffs, depth)
    assert (table["found"] + table["ranking_loss"] + table["recall_loss"] == table["relevant"]).all()
    counts = qrels[qrels["relevance"] >= 1].groupby("query_id").size()
    assert table.groupby("query_id")["relevant"].first().to_dict() == counts.to_dict()
    recall = evaluate(qrels, run, [f"recall@{k}" for k in cutoffs], exclude_unjudged=True)
    per_query = recall.wide()
    for k in cutoffs:
        at_k = table[table["K"] == k].set_index("query_id")["found_share"]
        assert at_k.to_dict() == pytest.approx(per_query[f"recall@{k}"].to_dict())
        assert loss_summary(table).loc[k, "found_share"] == pytest.approx(recall.mean[f"recall@{k}"])
    # a recall loss stays one at every K; at K = depth nothing is a ranking loss
    assert table.groupby("query_id")["recall_loss"].nunique().eq(1).all()
    assert (table.loc[table["K"] == depth, "ranking_loss"] == 0).all()


@pytest.mark.parametrize("seed", range(10))
def test_one_relevant_document_per_query_is_the_first_relevant_view(seed: int, random_case) -> None:
    qrels, run = random_case(seed)
    single = qrels[qrels["relevance"] >= 1].groupby("query_id").head(1)
    cutoffs = (1, 3, 5, 10)
    summary = loss_summary(loss_table(relevant_ranks(run, single, 10), cutoffs, 10))
    misses = miss_breakdown(first_relevant_ranks(run, single, 10), cutoffs)
    assert summary["found"].tolist() == misses["hits"].tolist()
    assert summary["ranking_loss"].tolist() == misses["ranking_misses"].tolist()
    assert summary["recall_loss"].tolist() == misses["recall_misses"].tolist()


def test_judgment_table_tells_unjudged_from_judged_nonrelevant() -> None:
    """Top K of the hand-made run: q1 is d2 (relevant), d1, d3 (both unjudged); q2 is d3 (label -1:
    in the pool but unjudged, as trec_eval), d4 (judged 0), d5 (unjudged), d9; q3 is d7 (judged 0), d2
    (unjudged for q3); q5 has no judgments at all."""
    qrels = pd.concat(
        [QRELS, pd.DataFrame([("q2", "d3", -1), ("q2", "d4", 0)], columns=["query_id", "doc_id", "relevance"])]
    )
    table = judgment_table(RUN, qrels, cutoffs=(1, 3)).set_index(["K", "query_id"])
    expected = {
        (1, "q1"): (0, 0), (3, "q1"): (0, 2),
        (1, "q2"): (0, 1), (3, "q2"): (1, 2),
        (1, "q3"): (1, 0), (3, "q3"): (1, 1),
        (1, "q5"): (0, 1), (3, "q5"): (0, 1),
    }  # fmt: skip
    got = {key: (row.judged_nonrelevant, row.unjudged) for key, row in table.iterrows()}
    assert got == expected
    # a relevance level of 2 makes q1's grade-1 d2 a judged non-relevant document
    assert (
        judgment_table(RUN, qrels, (1,), relevance_level=2).set_index("query_id").loc["q1", "judged_nonrelevant"] == 1
    )
    losses = loss_table(relevant_ranks(RUN, qrels, depth=3), (1, 3), 3, judgment_table(RUN, qrels, (1, 3)))
    summary = loss_summary(losses)
    assert list(summary.loc[3, ["judged_nonrelevant", "unjudged"]]) == [2, 5]  # q1, q2, q3: q5 has nothing relevant
    assert losses.set_index(["K", "query_id"]).loc[(3, "q2"), "ranking_loss"] == 0  # d9 is beyond the depth
    text = unjudged_findings("bm25", summary, 3)
    assert text == [
        "bm25: the top 3 slots not holding a relevant document hold 2 judged non-relevant and 5 unjudged documents "
        "(71% unjudged): most losses are measured against documents nobody judged, so they may be holes in the "
        "judgments rather than ranking or recall errors (rankscope judge fills them)."
    ]
