"""The pool-bias test on a pool whose answer is worked out by hand."""

from __future__ import annotations

import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.pool_bias import pool_bias, unique_contributions
from tests.evaluation.pool_case import QRELS, RUNS


def test_unique_contributions_at_depth_two() -> None:
    unique = unique_contributions(RUNS, 2)
    assert {name: sorted(frame["doc_id"]) for name, frame in unique.items()} == {
        "A": ["d2"], "B": ["d3"], "C": ["d5", "d6"]
    }  # fmt: skip


def test_leave_one_run_out_by_hand() -> None:
    """Pool of depth 2: A alone found d2, B alone d3 (both relevant), C nothing relevant.

    A: P@2 1 -> 1/2 (d2 no longer judged), AP 2/3 (d1, d2 of R = 3) -> 1/2 (d1 of R = 2); with all
    judgments A and B tie first (rank 1), without its own A's 1/2 is below B's 1: rank 2, flagged.
    C: its unique documents are unjudged or non-relevant, nothing is removed, nothing moves.
    """
    table = pool_bias(QRELS, RUNS, ["precision@2", "map"], depth=2).set_index(["system", "metric"])
    a_p, a_ap = table.loc[("A", "precision@2")], table.loc[("A", "map")]
    assert a_p["unique_relevant"] == 1
    assert (a_p["score"], a_p["score_without"], a_p["drop"]) == pytest.approx((1.0, 0.5, 0.5))
    assert (a_p["rank"], a_p["rank_without"], bool(a_p["flagged"])) == (1, 2, True)
    assert (a_ap["score"], a_ap["score_without"], a_ap["relative_drop"]) == pytest.approx((2 / 3, 1 / 2, 0.25))
    c = table.loc[("C", "map")]  # d1 at rank 3: 1/3 of R = 3
    assert (c["unique_relevant"], c["score"], c["drop"], c["rank"], c["rank_without"]) == (
        0,
        pytest.approx(1 / 9),
        0,
        3,
        3,
    )
    assert not table.loc["C"]["flagged"].any()


def test_deeper_pool_shares_more() -> None:
    """At depth 3 C's d1 is in the pool too: still only A found d2 and only B d3; the table is the same for them."""
    deep = pool_bias(QRELS, RUNS, ["map"], depth=3).set_index("system")
    assert deep.loc["A", "score_without"] == pytest.approx(1 / 2)
    assert deep.loc["B", "unique_relevant"] == 1


def test_refusals() -> None:
    with pytest.raises(RankscopeError, match="at least two runs"):
        pool_bias(QRELS, {"A": RUNS["A"]})
    with pytest.raises(RankscopeError, match="pool depth"):
        pool_bias(QRELS, RUNS, depth=0)
