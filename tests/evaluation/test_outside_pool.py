"""Strata over the unjudged documents and the draw from them: sizes as written out by hand, no judged
pair and no pair twice, each document included at its stated probability (checked over many draws,
the rest stratum's positions among the excluded ones included), and one query's draw independent of
the others'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.outside_pool import draw_outside, outside_strata, parse_cuts, stratum_names

DOCS = [f"d{i:02d}" for i in range(40)]


def scorer_run() -> pd.DataFrame:
    """q1 ranks d00..d29 in that order; q2 ranks d39 down to d30 (ten documents)."""
    q1 = pd.DataFrame({"query_id": "q1", "doc_id": DOCS[:30], "score": np.arange(30, 0, -1, dtype=float)})
    q2 = pd.DataFrame({"query_id": "q2", "doc_id": DOCS[39:29:-1], "score": np.arange(10, 0, -1, dtype=float)})
    return pd.concat([q1, q2], ignore_index=True)


def judged() -> pd.DataFrame:
    pairs = [("q1", "d00"), ("q1", "d01"), ("q1", "d07"), ("q1", "d35"), ("q2", "d39"), ("q2", "d00"), ("q2", "gone")]
    return pd.DataFrame(pairs, columns=["query_id", "doc_id"])


def test_strata_sizes_as_written_out() -> None:
    strata = outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20))
    assert strata.queries == ("q1", "q2")
    assert strata.names == ["ranks 1-5", "ranks 6-20", "rest"]
    # q1: top 5 less d00, d01 -> 3; ranks 6-20 less d07 -> 14; rest: 40 - |judged (4 in corpus) + top 20| = 40 - 21
    # q2: top 5 less d39 -> 4; ranks 6-10 -> 5; rest: 40 - |{d39..d30} + d00| = 29
    assert strata.sizes.tolist() == [[3, 14, 19], [4, 5, 29]]
    assert [DOCS[p] for p in strata.members[0][0]] == ["d02", "d03", "d04"]
    assert strata.stratum_of(0, np.array([2, 7, 25, 35, 6])).tolist() == [0, -1, 2, -1, 1]


def test_the_draw_never_takes_a_judged_pair_or_one_twice() -> None:
    strata = outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20))
    sample = draw_outside(strata, pairs=12, seed=3)
    pairs = sample.pairs
    assert not pairs.duplicated(["query_id", "doc_id"]).any()
    taken = set(zip(judged()["query_id"], judged()["doc_id"]))
    assert not any(pair in taken for pair in zip(pairs["query_id"], pairs["doc_id"]))
    assert sample.drawn.sum(axis=1).tolist() == [12, 12]
    assert (sample.drawn >= 1).all()  # one per stratum first
    rest = pairs[(pairs["query_id"] == "q1") & (pairs["stratum"] == "rest")]["doc_id"]
    assert all(DOCS.index(doc) >= 20 and doc != "d35" for doc in rest)
    table = sample.table
    assert np.allclose(table["probability"], table["drawn"] / table["size"])
    merged = pairs.merge(table, on=["query_id", "stratum"])
    assert np.allclose(merged["inclusion_probability"], merged["probability"])
    again = draw_outside(strata, pairs=12, seed=3).pairs
    assert again.equals(pairs)
    assert not draw_outside(strata, pairs=12, seed=4).pairs.equals(pairs)


def test_a_query_draw_does_not_depend_on_the_other_queries() -> None:
    both = draw_outside(outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20)), pairs=6, seed=9).pairs
    alone_judged = judged()[judged()["query_id"] == "q2"]
    alone = draw_outside(outside_strata(alone_judged, scorer_run(), DOCS, cuts=(5, 20)), pairs=6, seed=9).pairs
    assert both[both["query_id"] == "q2"].reset_index(drop=True).equals(alone)


def test_every_document_is_included_at_its_stated_probability() -> None:
    """800 draws: each document's inclusion frequency within 4.5 binomial standard errors of drawn/size,
    in every stratum (the rest's positions skip the excluded documents, none drawn more often)."""
    strata = outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20))
    times = 800
    counts: dict[tuple[str, str], int] = {}
    stated: dict[tuple[str, str], float] = {}
    for seed in range(times):
        pairs = draw_outside(strata, pairs=7, seed=seed).pairs
        for key, probability in zip(zip(pairs["query_id"], pairs["doc_id"]), pairs["inclusion_probability"]):
            counts[key] = counts.get(key, 0) + 1
            stated[key] = probability
    assert len(counts) == int(strata.sizes.sum())  # every unjudged document drawn sometime
    for key, count in counts.items():
        p = stated[key]
        assert abs(count / times - p) <= 4.5 * np.sqrt(p * (1 - p) / times) + 1e-12, (key, count / times, p)


def test_a_share_is_rounded_up_per_query() -> None:
    strata = outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20))
    assert draw_outside(strata, share=0.1, seed=0).drawn.sum(axis=1).tolist() == [4, 4]  # 3.6 and 3.8, up
    assert draw_outside(strata, share=1.0, seed=0).drawn.tolist() == strata.sizes.tolist()


@pytest.mark.parametrize("text", ["", "a", "100,50", "0,5", "-1", "10,,20", "5.5"])
def test_bad_cuts_are_one_line(text: str) -> None:
    with pytest.raises(RankscopeError, match="cuts"):
        parse_cuts(text)


def test_cuts_and_names() -> None:
    assert parse_cuts(" 100, 1000 ") == (100, 1000)
    assert stratum_names((10,)) == ["ranks 1-10", "rest"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({}, "one of them"), ({"pairs": 0}, "positive"), ({"pairs": 2.5}, "positive"), ({"share": 0}, "share"),
     ({"share": 1.5}, "share"), ({"pairs": 3, "share": 0.1}, "one of them")],
)  # fmt: skip
def test_bad_budgets_are_refused(arguments: dict[str, float], message: str) -> None:
    strata = outside_strata(judged(), scorer_run(), DOCS, cuts=(5, 20))
    with pytest.raises(RankscopeError, match=message):
        draw_outside(strata, **arguments)  # type: ignore[arg-type]


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(RankscopeError, match="no documents"):
        outside_strata(judged(), scorer_run(), [])
    with pytest.raises(RankscopeError, match="not a document of the corpus"):
        outside_strata(judged(), scorer_run(), DOCS[:35])
    with pytest.raises(RankscopeError, match="repeats"):
        outside_strata(judged(), scorer_run(), [*DOCS, "d01"])
    with pytest.raises(RankscopeError, match="no query"):
        outside_strata(judged().iloc[:0], scorer_run(), DOCS)
