"""Runs given as files are named by what the file says of the system, not by the file (issue 49 item 1:
``run.bm25s.trec (baseline)`` and ``--out`` writing ``run.run.bm25s.trec.trec``; evaluate took no NAME=PATH)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.run_names import named_path, run_name, system_run

TREC_EVAL = Path(os.environ.get("RANKSCOPE_DATA", "/work/shared/corpora")).parent / "trec_eval-test"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("run.bm25s.trec", "bm25s"),
        ("runs/run.rank_bm25.trec.gz", "rank_bm25"),
        ("bm25.run", "bm25"),
        ("splade_run-1.tsv", "splade_run-1"),
        ("k1=0.9.txt", "k1=0.9"),
        ("run.trec", "run"),  # nothing left after the noise: the name less its endings
        (".trec", ".trec"),
        ("run.", "run."),
    ],
)
def test_run_name_drops_the_noise_only(path: str, name: str) -> None:
    assert run_name(path) == name


def test_name_equals_path_names_a_run_and_an_existing_file_stays_a_path(tmp_path: Path) -> None:
    assert system_run("mine=runs/a.trec") == ("mine", "runs/a.trec")
    odd = tmp_path / "k1=0.9.trec"
    odd.write_text("")
    assert named_path(str(odd)) == (None, str(odd))  # a file whose name holds '=' is a path
    assert system_run(str(odd)) == ("k1=0.9", str(odd))
    for bad in ("=a.trec", "mine="):
        with pytest.raises(RankscopeError, match="PATH or NAME=PATH"):
            named_path(bad)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not TREC_EVAL.is_dir():
        pytest.skip("trec_eval test files not found")
    shutil.copy(TREC_EVAL / "results.test", tmp_path / "run.bm25s.trec")
    shutil.copy(TREC_EVAL / "results.trunc", tmp_path / "run.rank_bm25.trec")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_evaluate_latex_rows_are_named_by_stem_or_name(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = str(TREC_EVAL / "qrels.test")
    assert main(["evaluate", qrels, "run.bm25s.trec", "run.rank_bm25.trec", "-m", "map", "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert "bm25s (baseline) & \\textbf{0.1785}" in latex and "\nrank\\_bm25 & 0.1016" in latex
    assert "run.bm25s" not in latex and ".trec" not in latex.split("\\midrule")[1]
    assert main(["evaluate", qrels, "mine=run.bm25s.trec", "run.rank_bm25.trec", "-m", "map"]) == 0
    table = capsys.readouterr().out
    assert "mine (baseline)" in table and "0.1785" in table  # the plain table takes NAME=PATH too
    assert main(["evaluate", qrels, "a=run.bm25s.trec", "a=run.rank_bm25.trec", "-m", "map"]) == 2
    assert "a run name is given twice" in capsys.readouterr().err


def test_compare_names_a_bare_run_by_its_stem(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", "--dataset", str(TREC_EVAL / "qrels.test"), "--metrics", "map", "--quiet"]
    assert main([*args, "--run", "run.bm25s.trec", "--run", "rank=run.rank_bm25.trec", "--out", "o"]) == 0
    out = capsys.readouterr().out
    assert "bm25s (baseline)" in out and "rank " in out and "run.bm25s.trec (baseline)" not in out
    assert sorted(p.name for p in (runs / "o").glob("run.*.trec")) == ["run.bm25s.trec", "run.rank.trec"]
