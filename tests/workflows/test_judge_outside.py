"""``rankscope judge --outside-pool K``: K documents per query drawn outside everything judged (the qrels
and the pool), labelled by the judge, and R with its interval as Horvitz-Thompson by hand from them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.dataset import Dataset
from rankscope.judging.callable_judge import CallableJudge
from rankscope.workflows.judge import Study, judge

WORDS = "wing flow plate boundary layer heat shock wave load supersonic drag lift pressure".split()


def dataset() -> Dataset:
    """60 documents, 5 queries, 8 judged pairs a query."""
    rng = np.random.default_rng(7)
    texts = {f"d{i:02d}": " ".join(rng.choice(WORDS, size=8)) for i in range(60)}
    queries = {f"q{i}": " ".join(rng.choice(WORDS, size=2, replace=False)) for i in range(5)}
    qrels = {q: {d: int(rng.integers(0, 2)) for d in rng.choice(list(texts), size=8, replace=False)} for q in queries}
    return Dataset.from_dicts("outside", texts, queries, qrels)


def label(query: str, document: str) -> int:
    return int("wave" in document)


def test_the_sample_is_outside_everything_judged_and_r_is_horvitz_thompson(tmp_path: Path) -> None:
    data = dataset()
    asked: list[tuple[str, str]] = []

    def counting(query: str, document: str) -> int:
        asked.append((query, document))
        return label(query, document)

    result = judge(
        data, ["bm25"], CallableJudge(counting, name="stub"), tmp_path / "out", depth=3,
        judgments=tmp_path / "cache", study=Study(outside_pool=6),
    )  # fmt: skip
    assert result.outside is not None
    estimate = result.outside.estimate.queries.set_index("query_id")
    judged = result.qrels  # every pair judged: the qrels and the pool's judge labels
    judged_pairs = set(zip(judged["query_id"], judged["doc_id"]))
    sample = pd.read_csv(tmp_path / "out" / "outside_sample.csv", dtype={"query_id": str, "doc_id": str})
    drawn = list(zip(sample["query_id"], sample["doc_id"]))
    assert len(drawn) == len(set(drawn)) == 5 * 6 and not set(drawn) & judged_pairs
    query_text = dict(zip(data.queries["query_id"], data.queries["text"]))
    text = dict(zip(data.corpus["doc_id"], data.corpus["text"]))
    assert {(query_text[q], text[d]) for q, d in drawn} <= set(asked)  # the judge labelled them
    assert list(sample["relevance"]) == [label("", text[d]) for _, d in drawn]
    for query, group in sample.groupby("query_id"):
        relevant = group["relevance"] >= 1
        judged_relevant = int((judged.loc[judged["query_id"] == query, "relevance"] >= 1).sum())
        by_hand = judged_relevant + float((1 / group.loc[relevant, "inclusion_probability"]).sum())
        assert estimate.loc[query, "judged_relevant"] == judged_relevant
        assert estimate.loc[query, "r_hat"] == pytest.approx(by_hand, abs=1e-9)
        assert estimate.loc[query, "r_low"] >= judged_relevant + relevant.sum()  # what is known is a floor
    assert sample["relevance"].sum() > 0  # the judge found documents the pool missed: the test can fail
    written = pd.read_csv(tmp_path / "out" / "outside_queries.csv", dtype={"query_id": str}).set_index("query_id")
    assert written["r_hat"].to_numpy() == pytest.approx(estimate["r_hat"].to_numpy())
    recall = pd.read_csv(tmp_path / "out" / "outside_recall.csv")
    assert set(recall["metric"]) == {"recall@100", "rprec"} and set(recall["system"]) == {"bm25"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["outside"]["drawn"] == 30 and summary["provenance"]["settings"]["outside_pool"] == 6
    assert "outside the judged pairs: 30 drawn (6 a query), 30 labelled" in result.to_text()
    assert "its interval is too narrow" in " ".join(result.to_text().split())  # the mean's caveat is shown


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", "--outside-pool must be at least 1, got 0"), ("-3", "--outside-pool must be at least 1, got -3")],
)
def test_a_bad_k_is_one_line_before_loading(tmp_path: Path, capsys, value: str, message: str) -> None:
    argv = ["judge", "--dataset", str(tmp_path / "nowhere"), "--judge", "qrels:q.txt", "--outside-pool", value]
    (tmp_path / "q.txt").write_text("")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankscope judge: error: ") and message in err and err.count("\n") == 1
