"""The three commands end to end on the real collections, through ``rankscope.cli.main``.

Every written file is re-read and checked against an independent computation
(evaluate() on the written run files, counts of the first-relevant ranks).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora import load_dataset
from rankscope.corpora.trec import read_trec_run
from rankscope.evaluation import DEFAULT_METRICS, evaluate


@pytest.fixture(scope="module")
def compared(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("compare")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKSCOPE_DATA", str(data_dir))
        code = main(
            ["--quiet", "compare", "--dataset", "cranfield", "--retrievers", "tfidf", "bm25", "--out", str(out)]
        )
    assert code == 0
    return out, str(data_dir)


@pytest.mark.slow
def test_compare_writes_everything(compared: tuple[Path, str]) -> None:
    out, _ = compared
    for name in (
        "summary.csv",
        "summary.json",
        "per_query.csv",
        "significance.csv",
        "curves.csv",
        "run.tfidf.trec",
        "run.bm25.trec",
        "report.md",
        "report.html",
        *(f"{plot}.svg" for plot in ("hit_recall_at_k", "per_query_difference")),
    ):
        assert (out / name).stat().st_size > 0, name
    assert not list(out.glob("*.pdf")) and not list(out.glob("*.png"))  # on request (--figure-format svg png pdf)


def test_compare_summary_equals_evaluate_on_written_runs(compared: tuple[Path, str], monkeypatch) -> None:
    out, data_dir = compared
    monkeypatch.setenv("RANKSCOPE_DATA", data_dir)
    qrels = load_dataset("cranfield").qrels
    summary = pd.read_csv(out / "summary.csv", index_col="retriever")
    assert list(summary.columns) == list(DEFAULT_METRICS) and list(summary.index) == ["tfidf", "bm25"]
    per_query = pd.read_csv(out / "per_query.csv", dtype={"query_id": str})
    for spec in summary.index:
        run = read_trec_run(out / f"run.{spec}.trec")
        assert run.groupby("query_id").size().max() == 1000
        expected = evaluate(qrels, run, DEFAULT_METRICS).mean
        assert summary.loc[spec].to_dict() == pytest.approx(expected, abs=1e-12)
        means = per_query[per_query["retriever"] == spec].groupby("metric")["value"].mean()
        assert means.to_dict() == pytest.approx(expected, abs=1e-12)
    as_json = json.loads((out / "summary.json").read_text())
    assert as_json["mean"]["tfidf"] == pytest.approx(summary.loc["tfidf"].to_dict(), abs=1e-15)
    curves = pd.read_csv(out / "curves.csv").set_index(["retriever", "K"])
    assert curves.loc[("bm25", 10), "hit"] == pytest.approx(summary.loc["bm25", "hit@10"])
    assert curves.loc[("tfidf", 100), "recall"] == pytest.approx(summary.loc["tfidf", "recall@100"])
    significance = pd.read_csv(out / "significance.csv")
    assert len(significance) == len(DEFAULT_METRICS) and set(significance["system"]) == {"tfidf"}
    delta = significance.set_index("metric")["delta"]
    assert delta["map"] == pytest.approx(summary.loc["tfidf", "map"] - summary.loc["bm25", "map"])


def test_compare_report_is_self_contained(compared: tuple[Path, str]) -> None:
    out, _ = compared
    html = (out / "report.html").read_text()
    summary = pd.read_csv(out / "summary.csv", index_col="retriever")
    assert (
        html.count("<svg") == 3 and "<img" not in html
    )  # Hit/Recall@K, precision-recall, per-query difference, inline SVG
    assert 'src="http' not in html and "<script" not in html
    assert f"{summary.loc['bm25', 'ndcg@10']:.4f}" in html
    md = (out / "report.md").read_text()
    assert "![Hit@K and Recall@K against K](hit_recall_at_k.svg)" in md
    record = json.loads((out / "provenance.json").read_text())  # the command line as typed, in every report
    assert record["command"] == f"rankscope --quiet compare --dataset cranfield --retrievers tfidf bm25 --out {out}"
    assert record["command"] in html and record["command"] in md
    assert "![interpolated precision at the 11 recall points](precision_recall.svg)" in md


def run_cli(argv: list[str], data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> str:
    """Run ``rankscope`` on the real collections; it must exit 0. Returns what it printed."""
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.slow
def test_tune_cli(data_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [
        "tune",
        "--quiet",
        "--dataset",
        "cranfield",
        "--k1",
        "1.0:2.0:0.5",
        "--b",
        "0.55:0.95:0.2",
        "--folds",
        "3",
        "--out",
        str(tmp_path),
        "--figures",
        "png",
        "pdf",
    ]
    printed = run_cli(argv, data_dir, monkeypatch, capsys)
    assert "in-sample gain" in printed and "cross-validated gain" in printed
    grid = pd.read_csv(tmp_path / "grid.csv")
    assert len(grid) == 9
    summary = json.loads((tmp_path / "summary.json").read_text())
    # bm25's defaults (k1=1.5, b=0.75) are a grid point: re-weighting must give the fresh-index score
    at_default = grid[(grid["k1"] == 1.5) & (grid["b"] == 0.75)]["mean"].item()
    assert at_default == pytest.approx(summary["default"]["score"], abs=1e-12)
    assert summary["best"]["score"] == pytest.approx(grid["mean"].max())
    assert len(pd.read_csv(tmp_path / "folds.csv")) == 3
    assert (tmp_path / "heatmap.png").stat().st_size > 0 and (tmp_path / "heatmap.pdf").read_bytes()[:5] == b"%PDF-"
    assert not (tmp_path / "heatmap.svg").exists()


@pytest.mark.slow
def test_diagnose_cli_on_cisi(data_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [
        "--quiet",
        "diagnose",
        "--dataset",
        "cisi",
        "--retriever",
        "bm25",
        "--vs",
        "tfidf",
        "--sampled",
        "--sampled-repeats",
        "1",
        "--out",
        str(tmp_path),
    ]
    printed = run_cli(argv, data_dir, monkeypatch, capsys)
    assert "bm25 vs tfidf" in printed and "76 judged queries" in printed
    ranks = pd.read_csv(tmp_path / "first_ranks.csv", dtype={"query_id": str}, index_col="query_id")
    assert len(ranks) == 76
    for spec in ("bm25", "tfidf"):
        table = pd.read_csv(tmp_path / f"cutoffs.{spec}.csv", index_col="K")
        found = ranks[spec].to_numpy(dtype=float)
        for k in table.index:
            hits = int(np.sum(found <= k))
            assert table.loc[k, "hits"] == hits
            assert table.loc[k, "Hit@K"] == pytest.approx(hits / 76)
            assert table.loc[k, "recall_misses"] == int(np.isnan(found).sum())
            assert table.loc[k, "ranking_misses"] == 76 - hits - int(np.isnan(found).sum())
        # every relevant document at depth 100: CISI has many per query, most not within the top 100
        losses = pd.read_csv(tmp_path / f"losses.{spec}.csv", dtype={"query_id": str}).groupby("K")
        assert losses["relevant"].sum().eq(3114).all()
        assert losses["recall_loss"].sum().gt(1000).all()
        assert losses["found_share"].mean().to_dict() == pytest.approx(table["Recall@K"].to_dict())
        assert losses["recall_loss_share"].mean().to_dict() == pytest.approx(
            dict.fromkeys(table.index, 1 - table.loc[100, "Recall@K"])
        )
        sampled = pd.read_csv(tmp_path / f"sampled.{spec}.csv")
        assert sampled["metric"].tolist() == ["hit@10", "mrr@10", "ndcg@10"]
        assert sampled.set_index("metric").loc["hit@10", "full"] == pytest.approx(table.loc[10, "Hit@K"])
    findings = json.loads((tmp_path / "summary.json").read_text())["findings"]
    assert any(f.startswith("bm25 vs tfidf:") for f in findings)
    assert f"- {findings[0]}" in printed
    # every recall loss explained, and counted once per reason
    failures = pd.read_csv(tmp_path / "recall_failures.bm25.csv", dtype={"query_id": str, "doc_id": str})
    bm25_losses = pd.read_csv(tmp_path / "losses.bm25.csv", dtype={"query_id": str})
    assert len(failures) == bm25_losses.loc[bm25_losses["K"] == 100, "recall_loss"].sum()
    assert set(failures["reason"]) <= {"vocabulary mismatch", "outscored", "not in the corpus"}
    html = (tmp_path / "report.html").read_text()
    assert html.count("<section id=") == 76 and "not within 100" in html and "<mark>" in html
    for name in ("report.md", "report.html", "first_relevant_rank.svg", "misses.bm25.svg", "misses.tfidf.svg"):
        assert (tmp_path / name).stat().st_size > 0


def test_tune_json_on_a_one_point_grid_at_the_defaults(data_dir: Path, monkeypatch, capsys) -> None:
    argv = ["--quiet", "tune", "--k1", "1.5", "--b", "0.75", "--folds", "2", "--format", "json"]
    result = json.loads(run_cli(argv, data_dir, monkeypatch, capsys))
    assert result["grid_points"] == 1 and result["queries"] == 225
    assert result["best"]["score"] == result["default"]["score"]
    assert result["in_sample_gain"] == 0 and result["cross_validated"]["gain"] == pytest.approx(0, abs=1e-15)
    assert [row["k1"] for row in result["fold_choices"]] == [1.5, 1.5]


def test_user_errors_exit_2_with_one_line(capsys) -> None:
    assert main(["compare", "--retrievers", "tfidf", "w2v", "--baseline", "bm25"]) == 2
    assert "baseline 'bm25' is not among the systems" in capsys.readouterr().err
    assert main(["compare", "--retrievers", "tfidf", "--run", "x=/nonexistent/run.trec"]) == 2
    assert "no such run file" in capsys.readouterr().err
    assert main(["compare", "--run", "prod"]) == 2
    assert "prod: no such run file" in capsys.readouterr().err  # a bare PATH is a run named by its file
    assert main(["compare", "--run", "=run.trec"]) == 2
    assert "a run is PATH or NAME=PATH, got '=run.trec'" in capsys.readouterr().err
    assert main(["tune", "--k1", "0.2:2.0:0.25"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "whole number of steps" in err
