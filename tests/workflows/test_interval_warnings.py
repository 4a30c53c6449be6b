"""What the simulation says of the intervals' coverage reaches the terminal and summary.json: a warning line
from ``rankscope judge`` and under ``compare``'s intervals when the human sample is too small to trust, the
simulated coverage per row, and none when every judged query is labelled (the estimate is then exact)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.corpora.export import export_dataset
from rankscope.evaluation.ppi import coverage_warning
from tests.workflows.tiny_collection import small_dataset


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    export_dataset(small_dataset(), tmp_path / "small")
    return tmp_path / "small"


def _judge(folder: Path, out: Path, sample: int) -> list[str]:
    return ["judge", "--dataset", str(folder), "--systems", "bm25", "tfidf", "--judge", "qrels:flip=0.2,seed=1",
            "--human-sample", str(sample), "--metric", "precision@5", "--out", str(out), "--quiet"]  # fmt: skip


def test_judge_warns_of_a_small_sample_and_records_it(folder: Path, tmp_path: Path, capsys) -> None:
    assert main(_judge(folder, tmp_path / "out", 4)) == 0
    err = capsys.readouterr().err
    expected = coverage_warning(4, 12, 0.95)
    assert expected is not None and "fewer than the simulation's smallest sample" in expected
    assert f"rankscope judge: warning: {expected}\n" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ppi"]["warnings"] == [expected]
    for row in summary["ppi"]["means"] + summary["ppi"]["differences"]:
        assert row["ppi_simulated"] is None and row["ppipp_simulated"] is None  # not simulated below 5


def test_every_judged_query_labelled_is_exact_and_silent(folder: Path, tmp_path: Path, capsys) -> None:
    assert main(_judge(folder, tmp_path / "out", 12)) == 0
    assert "warning" not in capsys.readouterr().err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ppi"]["warnings"] == []
    for row in summary["ppi"]["means"]:
        assert row["ppi_low"] == row["ppi_estimate"] == row["ppi_high"]
        assert row["ppi_simulated"] == row["ppipp_simulated"] == 1.0


def test_compare_prints_the_warning_under_its_intervals(folder: Path, tmp_path: Path, capsys) -> None:
    argv = ["compare", "--dataset", str(folder), "--retrievers", "bm25", "tfidf", "--metrics", "ndcg@10",
            "--judge", "qrels:flip=0.2", "--human-sample", "6", "--pool-depth", "6", "--out", str(tmp_path / "c")]  # fmt: skip
    assert main(argv) == 0
    shown = capsys.readouterr().out
    expected = coverage_warning(6, 12, 0.95)
    assert expected is not None and "from 5 covered the truth" in expected
    assert "warning: 6 human-labelled queries: in simulation" in shown.split("6 human-labelled queries of 12")[1]
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert summary["interval_warnings"] == [expected]
    assert all(0.85 < row["ppipp_simulated"] < 0.935 for row in summary["intervals"] if row["baseline"] == "")
