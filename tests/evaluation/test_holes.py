"""Judged share by rank band, and the rule that warns of a run far below the baseline's share."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.corpora.schema import sort_run
from rankscope.evaluation.holes import band_table, hole_warnings, judged_by_band
from tests.evaluation.trec_reference import random_case


def test_bands_of_a_handmade_run() -> None:
    """q1: 20 documents, judged at ranks 1, 2 and 15; q2: 5 documents, all judged; q3 judged, not retrieved."""
    qrels = pd.DataFrame(
        [("q1", "a", 1), ("q1", "b", 0), ("q1", "o", -1), ("q3", "z", 1)] + [("q2", f"d{i}", i % 2) for i in range(5)],
        columns=["query_id", "doc_id", "relevance"],
    )
    q1 = ["a", "b"] + [f"x{i}" for i in range(12)] + ["o"] + [f"y{i}" for i in range(5)]
    run = pd.DataFrame(
        [("q1", doc, 100.0 - rank) for rank, doc in enumerate(q1)] + [("q2", f"d{i}", 5.0 - i) for i in range(5)],
        columns=["query_id", "doc_id", "score"],
    )
    shares = judged_by_band(qrels, run)
    assert shares["judged 1-10"] == pytest.approx((2 / 10 + 5 / 5) / 2)  # q3 retrieved nothing: not averaged
    assert shares["judged 11-100"] == pytest.approx(1 / 10)  # the -1 label at rank 15 counts as judged
    assert np.isnan(shares["judged 101-1000"])


@pytest.mark.parametrize("seed", range(3))
def test_bands_equal_a_loop_over_ranks(seed: int) -> None:
    qrels, run = random_case(seed, n_docs=300)
    bands = ((1, 5), (6, 20), (21, 300))
    ranked = sort_run(run)
    judged = set(zip(qrels["query_id"], qrels["doc_id"]))
    expected = {}
    for first, last in bands:
        shares = []
        for query_id, rows in ranked.groupby("query_id"):
            there = rows[(rows["rank"] >= first) & (rows["rank"] <= last)]
            if query_id in set(qrels["query_id"]) and len(there):
                shares.append(np.mean([(query_id, d) in judged for d in there["doc_id"]]))
        expected[f"judged {first}-{last}"] = np.mean(shares)
    assert judged_by_band(qrels, run, bands) == pytest.approx(expected, abs=1e-12)


def test_warning_rule_needs_half_and_ten_points() -> None:
    table = pd.DataFrame(
        {"judged 1-10": [0.9, 0.4, 0.8], "judged 11-100": [0.08, 0.03, 0.02]}, index=["base", "low", "fine"]
    )
    lines = hole_warnings(table, "base")
    assert len(lines) == 1  # 0.03 and 0.02 are under half of 0.08 but not 0.1 below it; 0.8 is not under half
    assert lines[0].startswith("low: 40% of its documents at ranks 1-10 are judged, against 90% for the baseline base")


def test_band_table_has_a_row_per_run() -> None:
    qrels, run = random_case(4)
    table = band_table(qrels, {"one": run, "half": run.iloc[::2]})
    assert list(table.index) == ["one", "half"] and table.index.name == "system"
    assert list(table.columns) == ["judged 1-10", "judged 11-100", "judged 101-1000"]
