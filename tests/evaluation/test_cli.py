"""``rankscope evaluate``: formats, options and one-line errors, through the real command hub."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation import evaluate
from tests.evaluation.trec_reference import random_case

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\nq3 0 d9 0\n"
# q1 ranking: d3 (0.9), d1 (0.5), d5 (0.1); rank column deliberately wrong
RUN = "q1 Q0 d1 1 0.5 x\nq1 Q0 d3 2 0.9 x\nq1 Q0 d5 3 0.1 x\nq2 Q0 d2 1 3 x\nq4 Q0 d1 1 3 x\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["evaluate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_means_and_per_query(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *files, "mrr@10", "precision@2", "--format", "json", "--per-query")
    assert code == 0
    data = json.loads(out)
    assert data["mean"] == pytest.approx({"mrr@10": 1 / 3, "precision@2": 1 / 3})  # q1 = 1 and 1; q2, q3 = 0
    assert data["per_query"]["q1"] == {"mrr@10": 1.0, "precision@2": 1.0}
    assert set(data["per_query"]) == {"q1", "q2", "q3"}  # q4 is not judged
    assert data["n_unjudged"] == 1


def test_json_without_per_query_and_options(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, *files, "recall", "--format", "json", "--judged-only", "--relevance-level", "2")
    data = json.loads(out)
    assert "per_query" not in data
    assert data["mean"] == {"recall": pytest.approx(1 / 2)}  # q1: d3 found; q2 has no label-2 doc
    _, out, _ = run_cli(capsys, *files, "recall", "--format", "json", "--exclude-unjudged")
    assert json.loads(out)["mean"]["recall"] == pytest.approx(1 / 2)  # q1 = 1, q2 = 0


def test_metric_names_may_follow_options(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *files, "mrr@10", "--per-query", "precision@2", "--format", "json", "map")
    assert code == 0
    data = json.loads(out)
    assert list(data["mean"]) == ["mrr@10", "precision@2", "map"]  # the order written, across the options
    # q1 ranks d3 (2), d1 (1), d5: AP = (1/1 + 2/2) / 2 = 1; q2 and q3 score 0
    assert data["mean"]["map"] == pytest.approx(1 / 3)
    assert data["per_query"]["q1"]["map"] == 1.0
    code, out, _ = run_cli(capsys, "--format", "csv", *files, "--judged-only", "map")
    assert code == 0
    assert out.splitlines() == ["metric,value", "map,0.5"]  # q1 = 1, q2 = 0 (q3 is not in the run)


def test_default_metrics_table(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *files)
    lines = out.splitlines()
    assert code == 0
    assert [line.split()[0] for line in lines[1:7]] == [
        "ndcg@10",
        "recall@100",
        "mrr@10",
        "hit@10",
        "map",
        "precision@10",
    ]
    assert lines[3].split() == ["mrr@10", "0.3333"]
    assert lines[-4] == "queries: 3 (without relevant judgments: 1)"
    # q1's d3 d1 d5: 2 of 3 judged; q2's d2 is judged for q1 only: 0 of 1; q3 retrieved nothing
    assert lines[-3] == "judged share by rank band: 1-10 0.3333, 11-100 -, 101-1000 -"
    assert lines[-2].startswith("judged a-b = share of the documents")
    assert lines[-1].startswith("judgments: from ") and "no judgment carries a negative label" in lines[-1]
    code, out, _ = run_cli(capsys, *files, "--format", "json")
    assert json.loads(out)["judged_by_band"] == {
        "judged 1-10": pytest.approx(1 / 3),
        "judged 11-100": None,
        "judged 101-1000": None,
    }


def test_per_query_table_and_csv(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "--per-query", *files, "map")
    rows = [line.split() for line in out.splitlines()[2:6]]
    assert rows == [["q1", "1.0000"], ["q2", "0.0000"], ["q3", "0.0000"], ["all", "0.3333"]]
    _, out, _ = run_cli(capsys, "--per-query", "--format", "csv", *files, "map")
    table = pd.read_csv(io.StringIO(out), dtype={"query_id": str})
    assert list(table.columns) == ["query_id", "metric", "value"]
    assert table["query_id"].tolist() == ["q1", "q2", "q3", "all"]
    _, out, _ = run_cli(capsys, "--format", "csv", *files, "map")
    assert out.splitlines() == ["metric,value", "map,0.3333333333333333"]


@pytest.mark.parametrize(
    ("run_text", "message"),
    [
        ("q1 Q0 d1 1 abc x\n", "line 1"),
        ("q1 Q0 d1 1\n", "line 1"),
        ("q1 Q0 d1 1 0.5 x\nq1 Q0 d1 2 0.4 x\n", "d1"),
    ],
)
def test_bad_run_file_is_one_line_and_exit_2(
    tmp_path: Path, files: tuple[str, str], capsys: pytest.CaptureFixture[str], run_text: str, message: str
) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text(run_text)
    code, out, err = run_cli(capsys, files[0], str(bad))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "bad.run" in err


def test_missing_file_and_unknown_metric(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, files[0], "/nonexistent/run.txt")
    assert code == 2 and "no such" in err
    code, _, err = run_cli(capsys, *files, "ndcg@ten")
    assert code == 2 and "unknown metric 'ndcg@ten'" in err and len(err.strip().splitlines()) == 1


def test_query_named_all_is_refused_in_per_query_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q").write_text("all 0 d1 1\n")
    (tmp_path / "r").write_text("all Q0 d1 1 1.0 x\n")
    code, _, err = run_cli(capsys, "--per-query", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 2 and "use --format json" in err
    code, out, _ = run_cli(capsys, "--per-query", "--format", "json", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 0 and json.loads(out)["per_query"]["all"]["map"] == 1.0


def test_files_written_by_corpora_trec_score_as_in_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = random_case(21)
    write_trec_qrels(qrels, tmp_path / "qrels.gz")
    write_trec_run(run, tmp_path / "run.gz")
    metrics = ["ndcg@10", "map", "bpref", "mrr@5"]
    files = (str(tmp_path / "qrels.gz"), str(tmp_path / "run.gz"))
    code, out, _ = run_cli(capsys, *files, *metrics, "--format", "json", "--per-query")
    assert code == 0
    expected = evaluate(qrels, run, metrics)
    data = json.loads(out)
    assert data["mean"] == pytest.approx(expected.mean, abs=1e-12)
    wide = expected.wide()
    assert data["per_query"] == {q: pytest.approx(dict(wide.loc[q]), abs=1e-12) for q in wide.index}
