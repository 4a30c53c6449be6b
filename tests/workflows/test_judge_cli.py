"""``rankscope judge`` from the command line, on CISI with its own qrels as a noisy judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.corpora import load_dataset
from rankscope.corpora.trec import read_trec_qrels, write_trec_qrels


def test_judge_on_cisi_then_again_from_the_cache(data_dir: Path, tmp_path: Path, capsys) -> None:
    data = load_dataset("cisi")
    write_trec_qrels(data.qrels, tmp_path / "cisi.qrels")
    spec = f"qrels:{tmp_path / 'cisi.qrels'},flip=0.2,seed=1"
    base = ["judge", "--dataset", "cisi", "--systems", "bm25", "tfidf", "--depth", "10", "--judge", spec]
    base += ["--judgments", str(tmp_path / "cache"), "--format", "json", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "out")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["calls"] == first["unjudged_pairs"] == first["distinct_asked"] > 1000  # 1146 on CISI
    assert first["pairs"] == first["unjudged_pairs"] + first["human_pairs"]
    written = {path.name for path in (tmp_path / "out").iterdir()}
    assert {"qrels.txt", "labels.jsonl", "summary.json", "systems.csv", "provenance.json", "report.html"} <= written
    merged = read_trec_qrels(tmp_path / "out" / "qrels.txt")
    labels = [json.loads(line) for line in (tmp_path / "out" / "labels.jsonl").read_text().splitlines()]
    flipped_in = sum(r["label"] == 1 for r in labels if r["source"] == "judge")
    assert len(merged) == len(data.qrels) + first["unjudged_pairs"]  # every hole got a label (0s included)
    assert merged["relevance"].sum() == len(data.qrels) + flipped_in  # CISI's qrels are all 1; a hole is 0 there
    assert 0.15 < flipped_in / first["unjudged_pairs"] < 0.25  # ... unless flipped, 20% of the time
    assert main(base) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["calls"], second["cache_hits"]) == (0, first["calls"])
    assert second["systems"] == first["systems"]
    assert isinstance(first["systems"]["bm25"]["invalid@10"], int)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--systems", "bm25", "--judge", "gpt:x"], "judge spec 'gpt:x': unknown judge 'gpt'; known: openai, qrels"),
        (
            ["--systems", "bm25", "--judge", "qrels:q.txt,flip=2"],
            "flip=2 is not allowed; flip must be a number in [0.0, 1.0]",
        ),
        (["--systems", "bm25:k1=-1", "--judge", "qrels:q.txt"], "bm25: k1=-1 is not allowed"),
        (["--judge", "qrels:q.txt"], "q.txt: no such qrels file"),
        (["--judge", "qrels:q.txt", "--audit", "--audit-pairs", "1"], "--audit-pairs must be at least 2, got 1"),
        (["--systems", "bm25", "--depth", "0", "--judge", "qrels:q.txt"], "--depth must be at least 1, got 0"),
    ],
)
def test_bad_arguments_are_one_line_before_loading(tmp_path: Path, capsys, arguments: list[str], message: str) -> None:
    assert main(["judge", "--dataset", str(tmp_path / "nowhere"), *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankscope judge: error: ") and message in err and err.count("\n") == 1


def test_blind_calibration_on_cisi(data_dir: Path, tmp_path: Path, capsys) -> None:
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    data = load_dataset("cisi")
    write_trec_qrels(data.qrels, tmp_path / "cisi.qrels")
    spec = f"qrels:{tmp_path / 'cisi.qrels'},flip=0.2,seed=1"
    argv = ["judge", "--dataset", "cisi", "--systems", "bm25", "tfidf", "--judge", spec, "--blind"]
    argv += ["--human-sample", "30", "--judgments", str(tmp_path / "cache"), "--format", "json", "--quiet"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["calls"] == summary["pairs"]  # blind: the judge labels every pooled pair
    means = {row["system"]: row for row in summary["ppi"]["means"]}
    run = make_retriever("bm25").index(data.corpus).search(data.queries, k=10)
    truth = evaluate(data.qrels, run, ["ndcg@10"]).mean["ndcg@10"]
    assert means["bm25"]["truth"] == pytest.approx(truth, abs=1e-12)
    assert (means["bm25"]["n_labelled"], means["bm25"]["n_total"]) == (30, data.qrels["query_id"].nunique())
    for row in means.values():
        assert row["ppi_low"] < row["ppi_estimate"] < row["ppi_high"]
        assert row["naive_covered"] == (row["naive_low"] <= row["truth"] <= row["naive_high"])
