"""compare reports each system's judged share by rank band and warns of one far below the baseline's."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.workflows.compare import compare

QRELS = pd.DataFrame(
    [(f"q{q}", f"j{d}", int(d % 3 == 0)) for q in range(4) for d in range(10)],
    columns=["query_id", "doc_id", "relevance"],
)


def run(prefix: str, judged_on_top: int) -> pd.DataFrame:
    """Per query 20 documents: ``judged_on_top`` judged ones first, then documents the qrels never saw."""
    rows = []
    for q in range(4):
        docs = [f"j{d}" for d in range(judged_on_top)] + [f"{prefix}{d}" for d in range(20 - judged_on_top)]
        rows += [(f"q{q}", doc, 20.0 - rank) for rank, doc in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def test_a_system_far_below_the_baseline_is_warned_of() -> None:
    runs = {"base": run("x", 10), "holes": run("y", 3), "close": run("z", 8)}
    result = compare(qrels=QRELS, runs=runs, metrics=["map"], baseline="base")
    assert result.systems["judged 1-10"].to_dict() == pytest.approx({"base": 1.0, "holes": 0.3, "close": 0.8})
    assert result.systems["judged 11-100"].to_dict() == pytest.approx({"base": 0.0, "holes": 0.0, "close": 0.0})
    assert result.systems["judged 101-1000"].isna().all()  # no run reaches rank 101
    assert result.warnings == (
        "holes: 30% of its documents at ranks 1-10 are judged, against 100% for the baseline base; "
        "its metrics there count the rest as non-relevant",
    )
    text = result.to_text()
    assert "warning: holes: 30% of its documents" in text and "under 50% of it and at least 0.10 lower" in text
    assert result.to_dict()["warnings"] == list(result.warnings)
