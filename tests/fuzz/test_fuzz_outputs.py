"""Fuzz: output paths that cannot be written are refused before any computing; report folders swap in whole."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

compare_module = importlib.import_module("rankscope.workflows.compare")  # the package re-exports compare()

DOCS = "".join(f".I {i}\n.T\ntitle {i}\n.W\nwing lift heat {i} flow {'slab ' * i}\n" for i in range(1, 9))
QUERIES = ".I 001\n.W\nwing lift\n.I 004\n.W\nheat slab\n.I 009\n.W\nflow\n"
QRELS = "1 1 1\n1 2 2\n2 3 1\n2 8 1\n3 5 2\n"


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    folder = tmp_path / "mycran"
    folder.mkdir()
    for name, text in (("cran.all.1400", DOCS), ("cran.qry", QUERIES), ("cranqrel", QRELS)):
        (folder / name).write_text(text)
    return folder


def _bad_out(tmp_path: Path, kind: str) -> str:
    if kind == "directory":
        (tmp_path / "adir").mkdir()
        return str(tmp_path / "adir")
    if kind == "under a regular file":
        (tmp_path / "afile").write_text("x")
        return str(tmp_path / "afile" / "out")
    if kind == "character device":
        return "/dev/null"
    if kind == "read-only folder":
        (tmp_path / "ro").mkdir(mode=0o500)
        return str(tmp_path / "ro" / "out")
    return ""


OUT_FILE_CASES = {
    "directory": "is a directory",
    "under a regular file": "is a file, not a folder",
    "character device": "not a regular file",
    "empty": "is a directory",  # argparse makes "" the path "."
    "read-only folder": "permission denied",
}


@pytest.mark.parametrize("kind", sorted(OUT_FILE_CASES))
def test_search_out_checked_first(collection: Path, tmp_path: Path, kind: str) -> None:
    if kind == "read-only folder" and os.geteuid() == 0:
        pytest.skip("root writes in read-only folders")
    index = tmp_path / "index"
    argv = ["search", "--dataset", str(collection), "--retriever", "bm25", "--index-dir", str(index)]
    check(run_cli([*argv, "--out", _bad_out(tmp_path, kind)]), "error", OUT_FILE_CASES[kind])
    assert not index.exists()  # refused before indexing
    assert Path("/dev/null").is_char_device()


OUT_FOLDER_CASES = {
    "a regular file": "exists and is not a folder",
    "under a regular file": "is a file, not a folder",
    "empty": "--out is empty",
    "a folder of other files": "a folder of other files",
}


def _compare(collection: Path, out: str) -> list[str]:
    return [
        "compare",
        "--dataset",
        str(collection),
        "--retrievers",
        "tfidf",
        "bm25",
        "--metrics",
        "ndcg@10",
        "--out",
        out,
        "--quiet",
    ]


@pytest.mark.parametrize("command", ["compare", "tune", "diagnose"])
@pytest.mark.parametrize("kind", sorted(OUT_FOLDER_CASES))
def test_workflow_out_checked_first(collection: Path, tmp_path: Path, monkeypatch, command: str, kind: str) -> None:
    if kind == "a regular file":
        (tmp_path / "afile").write_text("x")
        out = str(tmp_path / "afile")
    elif kind == "a folder of other files":
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "thesis.tex").write_text("x")
        out = str(tmp_path / "mine")
    else:
        out = _bad_out(tmp_path, "under a regular file" if kind == "under a regular file" else "empty")
    monkeypatch.setattr("rankscope.workflows.common.systems.produce_run", _never)
    argv = {
        "compare": _compare(collection, out)[:-3],
        "tune": ["tune", "--dataset", str(collection)],
        "diagnose": ["diagnose", "--dataset", str(collection)],
    }[command]
    check(run_cli([*argv, "--out", out]), "error", OUT_FOLDER_CASES[kind])
    if kind == "a folder of other files":
        assert os.listdir(out) == ["thesis.tex"]


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("computing started before the output path was checked")


@pytest.mark.slow
def test_interrupted_compare_leaves_the_previous_report(collection: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "cmp"
    check(run_cli(_compare(collection, str(out))), "accepted")
    (out / "stale.csv").write_text("from an older run")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "summary.json" in before

    def interrupted(result: object, folder: Path) -> list[Path]:
        (folder / "summary.csv").write_text("half")
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(compare_module.CompareResult, "write_tables", interrupted)
        assert run_cli(_compare(collection, str(out))).code == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched: no mix of old and new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp", "mycran"]  # no temporary folder left
    check(run_cli(_compare(collection, str(out))), "accepted")
    assert not (out / "stale.csv").exists()  # a finished run replaces the folder whole
    assert (out / "summary.csv").read_bytes() == before["summary.csv"]
