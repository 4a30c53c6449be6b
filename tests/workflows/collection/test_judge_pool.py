"""collection judge: a judge labels the whole pool (every question), cached in the collection; export merges
people over the judge, writes their agreement by rank band or warns that it was never measured, lists the
questions left out, and puts the sample's estimate beside each system's mean."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.judging.base import Pair
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.stub_server import StubServer, hashed_grade
from rankscope.workflows.collection.judge_pool import judge_collection
from rankscope.workflows.collection.labels import person, save_label
from rankscope.workflows.collection.makeup import NOT_MEASURED
from rankscope.workflows.compare import compare
from tests.needs import needs
from tests.workflows.collection.labelled import sampled_collection
from tests.workflows.tiny_collection import QUERIES, TEXTS

pytestmark = needs("httpx")

UNANSWERED = {**QUERIES, "q4": "zebra giraffe"}  # no document holds either word: bm25 pools nothing for it


def pool_pairs(folder: Path) -> set[tuple[str, str]]:
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype=str)
    return set(zip(pool["query_id"], pool["doc_id"]))


def test_the_judge_labels_every_pooled_pair_and_export_warns_agreement_was_never_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = sampled_collection(tmp_path, TEXTS, UNANSWERED, depth=3, budget=4)
    pooled = pool_pairs(folder)
    with StubServer() as server:
        spec = f"openai:model=stub,base_url={server.url}"
        assert main(["collection", "judge", str(folder), "--judge", spec]) == 0
        out = capsys.readouterr().out
        assert (
            len(server.requests) == len(pooled) == 8
        )  # every pooled pair once: q1 and q3 3, q2 2 (two documents hold its words)
        assert f"{len(pooled)} pairs of 4 questions" in out and "judge calls 8, cache hits 0" in out
        assert "question q4: no label from the judge (no pooled document" in out
        again = judge_collection(folder, spec)  # the cache in the folder: nothing asked twice
        assert (again.outcome.calls, again.outcome.cache_hits, len(server.requests)) == (0, 8, 8)
        grades = {hashed_grade(r) for r in server.requests}
    assert main(["collection", "export", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"warning: {NOT_MEASURED}" in out
    assert "questions left out: 1" in out and "q4: not in the pool" in out
    provenance = json.loads((folder / "collection.json").read_text())
    assert provenance["labels"] == {"openai:stub": 8} and provenance["warnings"][0] == NOT_MEASURED
    assert list(provenance["left_out"]) == ["q4"]
    assert not [row for row in provenance["agreement"] if row["between"] == "people and judges"]
    report = (folder / "report.md").read_text()
    assert NOT_MEASURED in report and "q4: not in the pool" in report
    table = pd.read_csv(folder / "judgments.tsv", sep="\t", dtype=str)
    assert set(zip(table["query_id"], table["doc_id"])) == pooled and set(table["source"]) == {"openai:stub"}
    compared = " ".join(compare(folder, ["bm25", "tfidf"], ["ndcg@10"]).to_text().split())  # every report on it says so
    assert f"warning: {NOT_MEASURED}" in compared and "questions left out: q4 (not in the pool" in compared
    assert {str(g) for g in table["relevance"]} <= {g.split()[-1] for g in grades}


def test_people_win_over_the_judge_and_agreement_is_written_by_rank_band(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3, budget=4)
    with StubServer(reply=lambda request: "Final score: 2") as server:
        result = judge_collection(folder, f"openai:model=stub,base_url={server.url}")
    assert result.outcome.calls == 8 and result.unlabelled == {}
    sample = pd.read_csv(folder / "sample.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    grades = [2, 0, 0, 2]  # people agree on two pairs and give 0 to two the judge called 2
    with JudgmentCache(folder) as cache:
        for (q, d), grade in zip(zip(sample["query_id"], sample["doc_id"]), grades):
            save_label(cache, person("alice"), Pair(q, d, QUERIES[q], TEXTS[Path(d).stem]), grade, "", 1.0)
    assert main(["collection", "export", str(folder)]) == 0
    out = capsys.readouterr().out
    assert NOT_MEASURED not in out and "agreement people and judges: kappa" in out and "on 4 pairs" in out
    provenance = json.loads((folder / "collection.json").read_text())
    row = next(r for r in provenance["agreement"] if r["between"] == "people and judges")
    assert row["pairs"] == 4 and sum(band["pairs"] for band in row["bands"]) == 4
    assert {band["band"] for band in row["bands"]} == set(sample["band"])
    table = pd.read_csv(folder / "judgments.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    merged = dict(zip(zip(table["query_id"], table["doc_id"]), zip(table["relevance"], table["source"])))
    first, second = (tuple(pair) for pair in sample[["query_id", "doc_id"]].to_numpy()[1:3])
    assert merged[first] == (0, "human:alice") and merged[second] == (0, "human:alice")  # not the judge's 2
    assert len(merged) == 8 and provenance["left_out"] == {}
    estimates = {r["system"]: r for r in provenance["estimates"]}
    bm25 = estimates["bm25"]
    # the judge says 2 (relevant) everywhere, people say 0 on two sampled pairs: the merged mean counts those
    # two as 0, and the estimate subtracts each weighted by 1 / its inclusion probability
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    top = pool[pool["rank"] <= 3]
    corrected = sample.iloc[1:3]
    corrected = corrected[
        [pair in set(zip(top["query_id"], top["doc_id"])) for pair in zip(corrected["query_id"], corrected["doc_id"])]
    ]
    expected = (len(top) - (1 / corrected["inclusion_probability"]).sum()) / (3 * 3)
    assert bm25["metric"] == "precision@3" and bm25["mean"] == pytest.approx((len(top) - len(corrected)) / 9)
    assert bm25["sample_estimate"] == pytest.approx(expected) and bm25["low"] <= expected <= bm25["high"]


def test_a_question_whose_labels_hold_no_relevant_document_is_listed_and_left_out_of_compare(tmp_path: Path) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3, budget=4)
    with StubServer(reply=lambda r: "Final score: 0" if "heat transfer" in r.prompt else "Final score: 2") as server:
        judge_collection(folder, f"openai:model=stub,base_url={server.url}")
    assert main(["--quiet", "collection", "export", str(folder)]) == 0
    provenance = json.loads((folder / "collection.json").read_text())
    assert provenance["left_out"] == {
        "q2": "none of its 2 labelled documents is relevant: compare, diagnose and rag leave it out of the means"
    }
    compared = compare(folder, ["bm25", "tfidf"], ["ndcg@10"])
    assert set(compared.per_query["query_id"]) == {"q1", "q3"}
    text = " ".join(compared.to_text().split())
    assert "(1 of 3 judged queries here) is left out of the means" in text and "questions left out: q2 (none" in text
