"""Hostile inputs to sampling outside the pool and its estimate: ``judge --outside-pool K`` with a bad K,
an empty or repeating corpus, strata cuts that do not parse, bad budgets, labels and settings. Each is
one clear error line (the library's RankscopeError is the line the CLI prints), never a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness import check, run_call, run_cli

from rankscope.evaluation.outside_pool import draw_outside, outside_strata, parse_cuts
from rankscope.evaluation.recall_estimate import estimate_recall

DOCS = [f"d{i}" for i in range(30)]
RUN = pd.DataFrame({"query_id": "q1", "doc_id": DOCS[:20], "score": np.arange(20, 0, -1.0)})
JUDGED = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d0", "d1"], "relevance": [1, 0]})


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("0", "--outside-pool must be at least 1, got 0"), ("-2", "--outside-pool must be at least 1, got -2")],
)  # a K that is not a whole number is argparse's, as for every int option: its usage line, then the error
def test_judge_with_a_bad_k(tmp_path: Path, value: str, fragment: str) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d0 1\n")
    argv = [
        "judge",
        "--dataset",
        str(tmp_path / "none"),
        "--judge",
        f"qrels:{tmp_path / 'q.txt'}",
        "--outside-pool",
        value,
    ]
    check(run_cli(argv), "error", fragment)


@pytest.mark.parametrize("text", ["", " ", "x", "100,10", "0,5", "1e3", "100;1000", "5,5", "-1,10", "10,", "١٠٠"])
def test_cuts_that_do_not_parse(text: str) -> None:
    check(run_call(lambda: parse_cuts(text)), "error", "strata cuts must be increasing positive ranks")


@pytest.mark.parametrize(
    ("corpus", "fragment"),
    [([], "the corpus has no documents"), ([*DOCS, "d3"], "the corpus repeats the document id 'd3'"),
     (DOCS[:10], "the scorer run ranks 'd10' for query 'q1', not a document of the corpus")],
)  # fmt: skip
def test_bad_corpora(corpus: list[str], fragment: str) -> None:
    check(run_call(lambda: outside_strata(JUDGED, RUN, corpus)), "error", fragment)


@pytest.mark.parametrize(
    "budget",
    [{"pairs": 0}, {"pairs": -1}, {"pairs": True}, {"pairs": 2.5}, {"pairs": "5"}, {"share": 0.0}, {"share": 1.5},
     {"share": float("nan")}, {"share": float("inf")}, {"share": -0.1}, {}, {"pairs": 1, "share": 0.5}],
)  # fmt: skip
def test_bad_budgets(budget: dict[str, object]) -> None:
    strata = outside_strata(JUDGED, RUN, DOCS)
    check(run_call(lambda: draw_outside(strata, **budget)), "error", "per query")  # type: ignore[arg-type]


def _estimate(**changes: object) -> None:
    sample = draw_outside(outside_strata(JUDGED, RUN, DOCS, cuts=(10,)), pairs=6, seed=1)
    labels = sample.pairs.assign(relevance=1)
    arguments: dict[str, object] = {"labels": labels, "judged": JUDGED, "runs": {"a": RUN}, **changes}
    estimate_recall(sample, **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [({"labels": pd.DataFrame({"query_id": ["q1"], "doc_id": ["d0"], "relevance": [1]})}, "is not of a drawn pair"),
     ({"labels": pd.DataFrame({"query_id": ["q1"], "doc_id": ["d5"], "relevance": ["yes"]})}, "must hold integers"),
     ({"labels": pd.DataFrame({"query_id": ["q1"], "doc_id": ["d5"]})}, "missing column"),
     ({"judged": JUDGED.assign(relevance=[1, None])}, "has a missing value"),
     ({"runs": {"a": RUN.assign(doc_id="nowhere")}}, "not a document of the corpus"),
     ({"confidence": 0.0}, "confidence"), ({"confidence": float("nan")}, "confidence"), ({"confidence": 95}, "confidence"),
     ({"draws": 0}, "draws"), ({"draws": "many"}, "draws"), ({"draws": 100.5}, "draws")],
)  # fmt: skip
def test_bad_labels_and_settings(changes: dict[str, object], fragment: str) -> None:
    check(run_call(lambda: _estimate(**changes)), "error", fragment)


def test_a_clean_estimate_is_accepted() -> None:
    check(run_call(_estimate), "accepted")
