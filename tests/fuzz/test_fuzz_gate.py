"""Fuzz: hostile inputs to ``rankscope gate`` (issue 43 item 6): each one clear line (exit 2) before any
number is given, or, for two gates writing the same files at once, two whole files."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

from tests.workflows.gate_files import QUERIES, write_qrels, write_run


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    return {
        "qrels": str(write_qrels(tmp_path)),
        "base": str(write_run(tmp_path / "base.trec")),
        "cand": str(write_run(tmp_path / "cand.trec", ["q01"])),
        "first": str(write_run(tmp_path / "first.trec", queries=QUERIES[:15])),
        "other": str(write_run(tmp_path / "other.trec", queries=QUERIES[15:])),
    }


def argv(files: dict[str, str], **changed: str) -> list[str]:
    given = {"baseline": files["base"], "candidate": files["cand"], "metric": "precision@1", "margin": "0.1", **changed}
    line = ["gate", "--dataset", files["qrels"]]
    for flag, value in given.items():
        line += [] if value == "" else [f"--{flag}", value]
    return line


@pytest.mark.parametrize(
    ("changed", "fragment"),
    [
        ({"candidate": "runs/missing.trec"}, "missing.trec"),
        ({"metric": "ndgc@10"}, "ndgc@10"),
        ({"margin": "-0.01"}, "--margin must be a finite number at least 0, got -0.01"),
        ({"margin": "nan"}, "--margin must be a finite number at least 0, got nan"),
        ({"margin": "inf"}, "--margin must be a finite number at least 0"),
        ({"margin": ""}, "--margin is required"),
        ({"alpha": "0.5"}, "--alpha must be between 0 and 0.5"),
        ({"candidate": "BASE"}, "--baseline and --candidate are the same system"),
        ({"baseline": "FIRST", "candidate": "OTHER"}, "answer no judged query in common"),
        ({"baseline": "bm25"}, "holds judgments only"),
        ({"judge": "qrels:flip=0.2"}, "--judge needs --human-sample N"),
        ({"human-sample": "3"}, "--human-sample needs --judge SPEC"),
        ({"judge": "qrels:", "human-sample": "3", "judgments": "judged"}, "not both"),
        ({"judge": "qrels:", "human-sample": "3", "pool-depth": "0"}, "--pool-depth"),
    ],
    ids=[
        "missing run",
        "unknown metric",
        "negative margin",
        "NaN margin",
        "infinite margin",
        "no margin",
        "alpha 0.5",
        "baseline is candidate",
        "no shared query",
        "a spec on qrels alone",
        "a judge without a human sample",
        "a human sample without a judge",
        "a judge and a folder",
        "pool depth 0",
    ],
)
def test_bad_gates_are_one_line(files: dict[str, str], changed: dict[str, str], fragment: str) -> None:
    named = {key: files.get(value.lower(), value) if value.isupper() else value for key, value in changed.items()}
    check(run_cli(argv(files, **named)), "error", fragment)


def test_a_junit_file_in_a_read_only_folder_is_refused_before_any_work(files: dict[str, str], tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes in a read-only folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        outcome = run_cli([*argv(files), "--junit", str(locked / "gate.xml")])
    finally:
        locked.chmod(0o755)
    check(outcome, "error", f"--junit {locked / 'gate.xml'}: cannot write in {locked} (permission denied)")
    assert outcome.out == ""  # refused before the systems were scored
    assert list(locked.iterdir()) == []


def test_junit_and_summary_naming_one_file_are_refused(files: dict[str, str], tmp_path: Path) -> None:
    same = str(tmp_path / "ci.out")
    check(run_cli([*argv(files), "--junit", same, "--summary", same]), "error", "name the same file")


@pytest.mark.slow  # two processes importing and scoring
def test_two_gates_writing_the_same_files_at_once_leave_whole_files(files: dict[str, str], tmp_path: Path) -> None:
    """Two processes write one JUnit file and one summary together: each file is one gate's, whole."""
    junit, summary = tmp_path / "ci" / "gate.xml", tmp_path / "ci" / "summary.md"
    line = [
        sys.executable,
        "-m",
        "rankscope.cli",
        "--quiet",
        *argv(files),
        "--junit",
        str(junit),
        "--summary",
        str(summary),
    ]
    running = [subprocess.Popen(line, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in running]
    assert results == [(0, ""), (0, "")]
    suite = ET.parse(junit).getroot()  # whole XML: one gate's, never a mix
    assert (suite.get("tests"), suite.get("failures")) == ("1", "0")
    text = summary.read_text()
    assert text.startswith("# rankscope gate:") and text.count("# rankscope gate:") == 1
    assert sorted(p.name for p in junit.parent.iterdir()) == ["gate.xml", "summary.md"]  # no temporary left


def test_hostile_query_ids_are_escaped_in_the_junit_file(tmp_path: Path) -> None:
    """A query id with markup and quotes stays text in the XML (the standard library escapes it)."""
    evil = 'q<"&>]]>'
    (tmp_path / "qrels.txt").write_text(f"{evil} 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\n")
    (tmp_path / "a.trec").write_text(f"{evil} Q0 d1 1 2 a\nq2 Q0 d1 1 2 a\nq3 Q0 d1 1 2 a\n")
    (tmp_path / "b.trec").write_text(f"{evil} Q0 d9 1 2 b\nq2 Q0 d1 1 2 b\nq3 Q0 d1 1 2 b\n")
    line = ["gate", "--dataset", str(tmp_path / "qrels.txt"), "--baseline", str(tmp_path / "a.trec")]
    outcome = run_cli(
        [*line, "--candidate", str(tmp_path / "b.trec"), "--margin", "0.5", "--junit", str(tmp_path / "j.xml")]
    )
    assert outcome.code == 3, outcome.err
    out = ET.parse(tmp_path / "j.xml").getroot().find("testcase/system-out")
    assert out is not None and evil in (out.text or "")


def test_sequential_with_judgments_is_refused_before_any_work(files: dict[str, str], tmp_path: Path) -> None:
    outcome = run_cli([*argv(files), "--sequential", "--judgments", str(tmp_path / "judged")])
    check(outcome, "error", "--sequential decides from the per-query differences alone")
