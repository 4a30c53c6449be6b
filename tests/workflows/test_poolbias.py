"""``rankscope poolbias`` on qrels and run files whose answer is worked out by hand
(tests/evaluation/pool_case.py, worked out in tests/evaluation/test_pool_bias.py: A alone found d2, B alone d3, C nothing relevant)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.workflows import poolbias
from tests.evaluation.pool_case import QRELS, RUNS


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    write_trec_qrels(QRELS, tmp_path / "qrels.txt")
    paths = {"qrels": tmp_path / "qrels.txt"}
    for name, run in RUNS.items():
        write_trec_run(run, tmp_path / f"{name}.trec")
        paths[name] = tmp_path / f"{name}.trec"
    return paths


def test_the_command_flags_the_runs_that_found_relevant_documents_alone(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [arg for name in RUNS for arg in ("--run", f"{name}={files[name]}")]
    args = ["poolbias", "--qrels", str(files["qrels"]), *runs, "--metrics", "P@2", "AP", "--depth", "2"]
    assert main([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["flagged"] == ["A", "B"] and document["depth"] == 2
    rows = {(row["system"], row["metric"]): row for row in document["rows"]}
    assert rows[("A", "precision@2")]["score_without"] == pytest.approx(0.5)
    assert (rows[("A", "precision@2")]["rank"], rows[("A", "precision@2")]["rank_without"]) == (1, 2)
    assert rows[("C", "map")]["unique_relevant"] == 0 and rows[("C", "map")]["drop"] == 0
    out = tmp_path / "report"
    assert main([*args, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "flagged: A, B" in text and "Zobel 1998" in text
    table = pd.read_csv(out / "pool_bias.csv")
    assert len(table) == 6 and (out / "report.html").is_file()


def test_qrels_with_retrievers_is_refused(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["poolbias", "--qrels", str(files["qrels"]), "--retrievers", "bm25", "tfidf"]) == 2
    assert "--qrels gives judgments alone" in capsys.readouterr().err


def test_the_function_takes_frames() -> None:
    result = poolbias(QRELS, dict(RUNS), ["precision@2"], depth=2)
    assert result.flagged == ["A", "B"]
    assert result.table.set_index("system").loc["C", "score"] == 0
