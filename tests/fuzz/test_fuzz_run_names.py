"""Fuzz: run arguments named by ``rankscope.corpora.run_names`` (issue 49 item 1): ``NAME=PATH`` and bare
paths to ``evaluate`` (plain and ``--format latex``) and ``compare --run``. Empty names or paths, a
missing file behind a name, two runs whose file names give one system name, one name given twice, a
file whose own name holds ``=``: each one line naming the problem, or accepted with the right rows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

TREC_EVAL = Path(os.environ.get("RANKSCOPE_DATA", "/work/shared/corpora")).parent / "trec_eval-test"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not TREC_EVAL.is_dir():
        pytest.skip("trec_eval test files not found")
    for name in ("run.a.trec", "a.trec", "k1=0.9.trec"):
        shutil.copy(TREC_EVAL / "results.test", tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


ERRORS = {
    "empty name": (["=a.trec"], "a run is PATH or NAME=PATH, got '=a.trec'"),
    "empty path": (["a.trec", "x="], "nor is 'x=' a run file"),
    "empty path first": (["x="], "a run is PATH or NAME=PATH, got 'x='"),
    "missing file behind a name": (["a.trec", "x=nothere.trec"], "nothere.trec"),
    "one name twice": (["x=a.trec", "x=run.a.trec"], "a run name is given twice"),
    "one file twice under two names": (["x=a.trec", "y=a.trec"], "a run file is listed twice"),
}


@pytest.mark.parametrize("case", list(ERRORS))
@pytest.mark.parametrize("form", [[], ["--format", "latex"]])
def test_evaluate_refuses_bad_run_arguments(folder: Path, case: str, form: list[str]) -> None:
    runs, fragment = ERRORS[case]
    check(run_cli(["evaluate", str(TREC_EVAL / "qrels.test"), *runs, "-m", "map", *form]), "error", fragment)


def test_two_files_one_stem_are_refused_in_a_report(folder: Path) -> None:
    """run.a.trec and a.trec both read ``a``: refused by the system-name rule, never one row lost."""
    argv = ["evaluate", str(TREC_EVAL / "qrels.test"), "run.a.trec", "a.trec", "-m", "map", "--format", "latex"]
    check(run_cli(argv), "error", "'a' is listed twice")
    check(
        run_cli(["compare", "--dataset", str(TREC_EVAL / "qrels.test"), "--run", "run.a.trec", "--run", "a.trec"]),
        "error",
        "'a' is listed twice",
    )


def test_a_file_named_with_equals_is_a_path(folder: Path) -> None:
    argv = ["evaluate", str(TREC_EVAL / "qrels.test"), "k1=0.9.trec", "a.trec", "-m", "map", "--quiet"]
    shown = run_cli([*argv, "--format", "latex"])
    check(shown, "accepted")
    assert "k1=0.9 (baseline) & " in shown.out and "\na & " in shown.out
