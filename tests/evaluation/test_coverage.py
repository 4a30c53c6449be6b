"""A run and qrels about different queries: counted warnings, and an error when they share none."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.corpora.foreign import read_qrels, read_run
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation.coverage import CoverageWarning, DisjointRunError

QRELS = "1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n4 0 d4 1\n"


def _files(tmp_path: Path, run: str) -> list[str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(run)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def test_disjoint_run_is_an_error_with_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = "001 Q0 d1 1 2.0 t\n002 Q0 d2 1 2.0 t\n"
    assert main(["evaluate", *_files(tmp_path, run), "map"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "the run's 2 queries share none with the qrels' 4" in err
    assert "2 of them match once written alike (e.g. '001'" in err


def test_partial_overlap_is_counted_and_printed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = "1 Q0 d1 1 2.0 t\n2 Q0 d2 1 2.0 t\n9 Q0 d9 1 2.0 t\n"
    assert main(["evaluate", *_files(tmp_path, run), "map"]) == 0
    captured = capsys.readouterr()
    assert "warning: 1 of 3 run queries are not in the qrels (ignored; e.g. ['9'])" in captured.err
    assert "warning: 2 of 4 qrels queries are not in the run (they score 0; e.g. ['3', '4'])" in captured.err
    assert "map 0.5000" in captured.out  # 1, 1, 0, 0 over the 4 qrels queries: the numbers are unchanged
    assert main(["evaluate", *_files(tmp_path, run), "map", "--strict"]) == 2
    assert "(--strict)" in capsys.readouterr().err


def test_no_judged_document_retrieved_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = "".join(f"{q} Q0 {d}.0 1 1.0 t\n" for q, d in (("1", "d1"), ("2", "d2"), ("3", "d3"), ("4", "d4")))
    assert main(["evaluate", *_files(tmp_path, run), "map"]) == 0
    assert "the run retrieves none of the 4 judged documents" in capsys.readouterr().err


def _tables(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Qrels of queries 1..n (one relevant document each) and a run ranking it first for every query."""
    ids = [str(i) for i in range(1, n + 1)]
    qrels = pd.DataFrame({"query_id": ids, "doc_id": [f"d{i}" for i in ids], "relevance": 1})
    run = pd.DataFrame(
        {
            "query_id": [q for q in ids for _ in range(2)],
            "doc_id": [d for q in ids for d in (f"d{q}", "other")],
            "score": [2.0, 1.0] * n,
        }
    )
    return qrels, run


def test_python_refuses_float_ids_with_the_cli_message(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 29 item 2: query ids read as floats ('1.0') scored nDCG@10 0.0 without a word in Python,
    while the CLI refused the same run. One check (evaluation.coverage), one message."""
    qrels, run = _tables(4)
    floats = run.assign(query_id=run["query_id"].astype(float))
    with pytest.raises(DisjointRunError) as raised:
        rs.evaluate(qrels, floats, ["ndcg@10"])
    assert "4 of them match once written alike (e.g. '1.0'" in str(raised.value)
    write_trec_qrels(qrels, tmp_path / "qrels")
    write_trec_run(floats.assign(query_id=floats["query_id"].astype(str)), tmp_path / "run")
    assert main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "ndcg@10"]) == 2
    assert capsys.readouterr().err == f"rankscope evaluate: error: {raised.value}\n"
    coded = read_run(tmp_path / "run", coded=True)  # the compiled reader's tables take the same check
    with pytest.raises(DisjointRunError, match="match once written alike"):
        rs.evaluate(read_qrels(tmp_path / "qrels", coded=True), coded, ["ndcg@10"])


def test_python_warns_of_zero_padded_ids_and_the_numbers_stand() -> None:
    """Zero-padded ids ('001') match the qrels' only from 100 up: nDCG@10 0.505 (101 of 200 queries
    found), as before, now with a warning saying that 99 ids match once written alike."""
    qrels, run = _tables(200)
    padded = run.assign(query_id=run["query_id"].str.zfill(3))
    with pytest.warns(CoverageWarning, match=r"99 of 200 run queries are not in the qrels .*99 of them match once"):
        result = rs.evaluate(qrels, padded, ["ndcg@10"])
    assert result.mean["ndcg@10"] == pytest.approx(101 / 200)  # 100..200 ranked first; the others score 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ids written alike: nothing to say
        assert rs.evaluate(qrels, run, ["ndcg@10"]).mean["ndcg@10"] == 1.0


def test_a_disjoint_run_is_scored_only_when_allowed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """trec_eval -c prints zeros for a run of other queries; rankscope refuses it everywhere unless
    --allow-disjoint / allow_disjoint=True, which scores it as trec_eval does, with a warning."""
    qrels, run = _tables(3)
    other = run.assign(query_id="x" + run["query_id"])
    with pytest.warns(CoverageWarning, match="every query scores 0 \\(allowed\\)"):
        result = rs.evaluate(qrels, other, ["map", "ndcg@10"], allow_disjoint=True)
    assert result.n_queries == 3 and result.mean == {"map": 0.0, "ndcg@10": 0.0}
    files = _files(tmp_path, "".join(f"x{q} Q0 d{q} 1 2.0 t\n" for q in range(1, 5)))
    assert main(["evaluate", *files, "map"]) == 2
    assert "is it the run of another collection? (to score it anyway: --allow-disjoint" in capsys.readouterr().err
    assert main(["evaluate", *files, "map", "--allow-disjoint"]) == 0
    captured = capsys.readouterr()
    assert "warning: the run's 4 queries share none with the qrels' 4" in captured.err
    assert "map 0.0000" in captured.out
