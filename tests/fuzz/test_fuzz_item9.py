"""Fuzz: the rest found by issue 50 item 9, each class now one line naming what and where, or a warning.

Framework retrievers (LangChain, LlamaIndex, Haystack, real objects) that answer None, a string, a dict, a
number, a list of non-results, or raise (a long message, terminal escapes, no message), asked one query
after another and several at once: before, tracebacks, or the framework's exception naming neither the
system nor the query.

Streamed ``evaluate`` (``--memory-budget``) of runs not grouped by query, spread over temporary bucket
files: a pair repeated in two pieces (plain, CRLF, gzip, blank lines, tabs, several repeats, Parquet) was
named at the bucket file and its line (Parquet: accepted, silently wrong numbers); now the error of the
whole-file read, naming the user's file and line.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

sys.path.insert(0, str(Path(__file__).parents[1] / "workflows"))
sys.path.insert(0, str(Path(__file__).parents[1] / "corpora"))
import frameworks_cisi as built  # noqa: E402
from tiny_collection import small_dataset  # noqa: E402

import rankscope as rs  # noqa: E402
from rankscope.workflows.common.frameworks import adapt  # noqa: E402

FRAMEWORK_ANSWERS: dict[str, Any] = {
    "None": None,
    "empty string": "",
    "a string": "d01 d02",
    "bytes": b"d01",
    "a dict": {"d01": 1.0},
    "a number": 5,
    "a list of None": [None],
    "a list of numbers": [1, 2],
    "a long message": RuntimeError("x" * 20_000),
    "terminal escapes": RuntimeError("\x1b]0;pwned\x07\x1b[2Jdown\r\x08"),
    "no message": TimeoutError(),
}


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("framework", ["langchain", "llamaindex", "haystack"])
@pytest.mark.parametrize("answer", list(FRAMEWORK_ANSWERS))
def test_framework_retriever_answering_no_results(answer: str, framework: str, concurrency: int) -> None:
    pytest.importorskip({"langchain": "langchain_core", "llamaindex": "llama_index.core"}.get(framework, framework))
    retriever = adapt(built.misbehaving(framework, FRAMEWORK_ANSWERS[answer]), concurrency=concurrency)
    data = small_dataset()
    outcome = run_call(lambda: rs.compare(data, {"bm25": "bm25", "mine": retriever}, ["ndcg@10"]))
    if (answer, framework) == ("empty string", "llamaindex"):  # LlamaIndex's retrieve makes "" an empty list
        check(outcome, "error", "error: run 'mine' on 'small': the run is empty")
    else:
        check(outcome, "error", "error: system 'mine': query 'q0': ")
    assert len(outcome.err) < 600 and "\x1b" not in outcome.err


def _not_grouped(n: int = 10_000) -> list[str]:
    """Run lines cycling over 60 queries (not grouped), about 250 kB: pieces of 64 kB at --memory-budget 1M."""
    return [f"q{i % 60} Q0 d{i} 1 {i} tag" for i in range(n)]


def _repeat_late(lines: list[str]) -> list[str]:
    return [*lines, "q59 Q0 d119 1 0 tag"]


def _with_blanks(lines: list[str]) -> list[str]:
    return [*lines[:5000], "", " \t", *_repeat_late(lines)[5000:]]


STREAMED_RUNS = {
    "repeat in a late piece": (
        _repeat_late,
        "\n",
        "line 10001: duplicate run entry for query, document 'q59', 'd119' (first at line 120)",
    ),
    "CRLF lines": (_repeat_late, "\r\n", "line 10001: duplicate"),
    "blank lines": (
        _with_blanks,
        "\n",
        "line 10003: duplicate run entry for query, document 'q59', 'd119' (first at line 120)",
    ),
    "tabs between fields": (
        lambda ls: [ln.replace(" ", "\t") for ln in _repeat_late(ls)],
        "\n",
        "line 10001: duplicate",
    ),
    "repeat of the first line": (
        lambda ls: [*ls, ls[0]],
        "\n",
        "line 10001: duplicate run entry for query, document 'q0', 'd0' (first at line 1)",
    ),
}


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("case", list(STREAMED_RUNS))
def test_streamed_run_not_grouped_with_a_repeated_pair(case: str, gzipped: bool, tmp_path: Path) -> None:
    make, ending, fragment = STREAMED_RUNS[case]
    data = (ending.join(make(_not_grouped())) + ending).encode()
    run = tmp_path / ("run.txt.gz" if gzipped else "run.txt")
    run.write_bytes(gzip.compress(data) if gzipped else data)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = ["evaluate", str(tmp_path / "qrels.txt"), str(run), "ndcg"]
    streamed = run_cli([*argv, "--memory-budget", "1M"])
    check(streamed, "error", f"error: {run}, {fragment}" if fragment.startswith("line") else fragment)
    assert "rankscope_buckets" not in streamed.err
    assert streamed.err == run_cli(argv).err  # the whole-file read's words


@pytest.mark.parametrize("gzipped", [False, True])
def test_streamed_run_not_grouped_with_two_repeated_pairs(gzipped: bool, tmp_path: Path) -> None:
    """Two repeats in different buckets: the one named is the first of the first bucket holding one, which
    need not be the first in the file (the whole-file read names that one); both are at their lines in the run."""
    data = ("\n".join([*_repeat_late(_not_grouped()), "q0 Q0 d0 1 0 tag"]) + "\n").encode()
    run = tmp_path / ("run.txt.gz" if gzipped else "run.txt")
    run.write_bytes(gzip.compress(data) if gzipped else data)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    streamed = run_cli(["evaluate", str(tmp_path / "qrels.txt"), str(run), "ndcg", "--memory-budget", "1M"])
    check(streamed, "error", f"error: {run}, line 100")
    assert streamed.err.rstrip().endswith(
        ("10001: duplicate run entry for query, document 'q59', 'd119' (first at line 120)",
         "10002: duplicate run entry for query, document 'q0', 'd0' (first at line 1)")
    )  # fmt: skip


def test_streamed_parquet_run_not_grouped_with_a_repeated_pair(tmp_path: Path) -> None:
    pytest.importorskip("fastparquet")
    import pandas as pd
    from fastparquet import write

    rows = [line.split() for line in _repeat_late(_not_grouped(3000))]
    frame = pd.DataFrame(
        {"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "score": [float(r[4]) for r in rows]}
    )
    run = tmp_path / "run.parquet"
    write(str(run), frame, row_group_offsets=200)
    (tmp_path / "qrels.txt").write_text("q59 0 d119 1\n")
    argv = ["evaluate", str(tmp_path / "qrels.txt"), str(run), "ndcg"]
    streamed = run_cli([*argv, "--memory-budget", "1M"])
    check(streamed, "error", f"error: {run}: row 3000: duplicate query, document 'q59', 'd119'")
    assert streamed.err == run_cli(argv).err


# --- datasets from elsewhere: empty catalogue names, RANKSCOPE_OFFLINE, downloads cut short -------------------

CATALOGUE_NAMES = ["irds:", "irds:  ", "irds:/", "irds:\x1b[2J", "hf:", "hf:/", "hf://", "hf: /", "hf:a\nb"]


@pytest.mark.parametrize("name", CATALOGUE_NAMES)
def test_catalogue_prefix_naming_nothing(name: str) -> None:
    check(run_cli(["compare", "--dataset", name, "--retrievers", "bm25", "tfidf"]), "error", "names no dataset: write")


@pytest.fixture
def offline_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty caches of rankscope, ir_datasets and the Hub; RANKSCOPE_OFFLINE set."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path))
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--dataset", "irds:cranfield", "--retrievers", "bm25", "tfidf"],
        ["compare", "--dataset", "irds:beir/scifact/test", "--retrievers", "bm25", "tfidf"],
        ["index", "--dataset", "irds:cranfield", "--index-dir", "IX"],
        ["compare", "--dataset", "cranfield", "--retrievers", "bm25", "tfidf"],
    ],
)
def test_offline_dataset_that_would_download(argv: list[str], offline_caches: Path) -> None:
    pytest.importorskip("ir_datasets")
    argv = [str(offline_caches / "ix") if a == "IX" else a for a in argv]
    check(run_cli(argv), "error", "downloads are off (RANKSCOPE_OFFLINE is set)")


@pytest.mark.parametrize("behaviour", ["cut", "chunked-cut", "500", "404"])
def test_download_of_a_known_collection_failing(
    behaviour: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from http_files import serving  # tests/corpora/http_files.py

    from rankscope.corpora import registry
    from rankscope.corpora.registry import Collection

    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RANKSCOPE_OFFLINE", raising=False)
    with serving({"/cran.tar.gz": (behaviour, gzip.compress(b"x" * 300_000))}) as served:
        monkeypatch.setitem(
            registry.COLLECTIONS, "cranfield", Collection("cranfield", "t", served.url("/cran.tar.gz"), "cranfield")
        )
        outcome = run_cli(["compare", "--dataset", "cranfield", "--retrievers", "bm25", "tfidf"])
    check(outcome, "error", f"could not download cranfield from {served.url('/cran.tar.gz')}: ")
    assert not (tmp_path / "xdg" / "rankscope" / "cranfield").exists()
    assert list((tmp_path / "xdg" / "rankscope").iterdir()) == []  # nothing half-written left
