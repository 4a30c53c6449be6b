"""A run and qrels about different queries: counted warnings, and an error when they share none."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.cli import main

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
