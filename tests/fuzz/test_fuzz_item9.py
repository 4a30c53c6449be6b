"""Fuzz: the rest found by issue 50 item 9, each class now one line naming what and where, or a warning.

Framework retrievers (LangChain, LlamaIndex, Haystack, real objects) that answer None, a string, a dict, a
number, a list of non-results, or raise (a long message, terminal escapes, no message), asked one query
after another and several at once: before, tracebacks, or the framework's exception naming neither the
system nor the query.

Streamed ``evaluate`` (``--memory-budget``) of runs not grouped by query, spread over temporary bucket
files: a pair repeated in two pieces (plain, CRLF, gzip, blank lines, tabs, several repeats, Parquet) was
named at the bucket file and its line (Parquet: accepted, silently wrong numbers); now the error of the
whole-file read, naming the user's file and line.

Datasets from elsewhere: ``irds:``/``hf:`` naming nothing (``hf:`` was an IndexError), ``RANKSCOPE_OFFLINE``
with a dataset ir_datasets would download (it downloaded), a download cut short or refused (IncompleteRead
was a traceback). Options: a retriever listed twice (``rag`` accepted it), depths of other names
(``--pool-bias 0`` was refused as ``--depth``), baselines that are all the systems with ``--groups``
(refused). Answer patterns that do not compile (``rag --answers --answer-mode regex``): DPR's numbers,
now with one warning per pattern naming it (they matched nothing silently).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import check, run_call, run_cli, timeless  # tests/fuzz/harness.py

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
        ["compare", "--dataset", "hf:nobody/nothing", "--retrievers", "bm25", "tfidf"],
    ],
)
def test_offline_dataset_that_would_download(argv: list[str], offline_caches: Path) -> None:
    pytest.importorskip("ir_datasets")
    pytest.importorskip("datasets")
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


# --- options: names listed twice, depths of other names, baselines that are all the systems -------------------


@pytest.fixture(scope="module")
def small_beir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/workflows/tiny_collection.py's small dataset (40 documents, 12 queries) as a BEIR folder."""
    from rankscope.corpora.beir import write_beir

    root = tmp_path_factory.mktemp("item9") / "data"
    write_beir(small_dataset(), root)
    return root


REPEATS = {
    "rag bm25 bm25": (["rag", "--retrievers", "bm25", "bm25"], "retriever 'bm25' is listed twice"),
    "rag tfidf bm25 tfidf": (["rag", "--retrievers", "tfidf", "bm25", "tfidf"], "retriever 'tfidf' is listed twice"),
    "rag two spellings": (["rag", "--retrievers", "bm25:k1=0.9", "bm25: k1=0.9"], "would share output file names"),
    "compare bm25 bm25": (["compare", "--retrievers", "bm25", "bm25"], "system 'bm25' is listed twice"),
    "compare a spec and a run of its name": (
        ["compare", "--retrievers", "bm25", "--run", "bm25=RUN"],
        "system 'bm25' is listed twice",
    ),
    "poolbias tfidf tfidf": (["poolbias", "--retrievers", "tfidf", "tfidf"], "system 'tfidf' is listed twice"),
    "diagnose bm25 --vs bm25": (["diagnose", "--retriever", "bm25", "--vs", "bm25"], "listed twice"),
}


@pytest.mark.parametrize("case", list(REPEATS))
def test_a_system_listed_twice(case: str, small_beir: Path, tmp_path: Path) -> None:
    argv, fragment = REPEATS[case]
    run = tmp_path / "run.trec"
    run.write_text("q0 Q0 d0 1 1.0 r\n")
    argv = [f"bm25={run}" if a == "bm25=RUN" else a for a in argv]
    check(run_cli([argv[0], "--dataset", str(small_beir), *argv[1:]]), "error", fragment)


DEPTHS = {
    "--pool-bias 0": (["--pool-bias", "0"], "--pool-bias must be at least 1, got 0"),
    "--pool-bias -5": (["--pool-bias", "-5"], "--pool-bias must be at least 1, got -5"),
    "--pool-bias 2**63": (["--pool-bias", str(2**63)], "--pool-bias must be at most 9223372036854775807"),
    "--pool-depth 0": (["--judge", "qrels", "--pool-depth", "0"], "--pool-depth must be at least 1, got 0"),
    "--depth 0": (["--depth", "0"], "--depth must be at least 1, got 0"),
}


@pytest.mark.parametrize("case", list(DEPTHS))
def test_a_depth_of_each_name(case: str, small_beir: Path) -> None:
    extra, fragment = DEPTHS[case]
    check(
        run_cli(["compare", "--dataset", str(small_beir), "--retrievers", "bm25", "tfidf", *extra]), "error", fragment
    )


@pytest.mark.parametrize(
    "baselines",
    [["bm25", "tfidf"], ["tfidf", "bm25"], ["bm25", "tfidf", "bm25:k1=0.5"]],
    ids=["two", "reversed", "three"],
)
def test_groups_with_baselines_that_are_all_the_systems(baselines: list[str], small_beir: Path) -> None:
    systems = sorted(set(baselines), key=baselines.index)
    argv = ["compare", "--dataset", str(small_beir), "--retrievers", *systems, "--groups", "length"]
    given = [word for name in baselines for word in ("--baseline", name)]
    outcome = run_cli([*argv, *given])
    check(outcome, "accepted")
    assert "1-3 terms" in outcome.out  # the groups' table, tested against each baseline


# --- answer patterns that do not compile: DPR's numbers, one warning per pattern -------------------------------

PATTERNS = {
    "unclosed group": ("(wing", "missing )"),
    "(?a)": ("(?a)flow", "mutually incompatible"),
    "(?L)": ("(?L)flow", "mutually incompatible"),
    "nested 5,000 deep": ("(" * 5000 + "wing" + ")" * 5000, "does not compile"),
    "bad escape": ("wing\\", "does not compile"),
    "terminal escapes": ("\x1b[2J(", "does not compile"),
}


@pytest.mark.parametrize("case", list(PATTERNS))
def test_rag_answer_pattern_that_does_not_compile(
    case: str, small_beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("regex")
    import json

    from rankscope.corpora import answers

    pattern, reason = PATTERNS[case]
    queries = small_dataset().queries

    def questions(path: Path, extra: list[str]) -> Path:
        rows = [
            {"query_id": query_id, "text": text, "answers": [text.split()[0], *extra]}
            for query_id, text in zip(queries["query_id"], queries["text"])
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        return path

    argv = ["rag", "--dataset", str(small_beir), "--chunking", "words:4", "--retrievers", "bm25", "tfidf"]
    argv += ["--budget", "20", "--answer-mode", "regex", "--answers"]
    monkeypatch.setattr(answers, "_WARNED", set())
    outcome = run_cli([*argv, str(questions(tmp_path / "bad.jsonl", [pattern]))])
    clean = run_cli([*argv, str(questions(tmp_path / "clean.jsonl", ["zzzz-matches-nothing"]))])  # a valid pattern
    check(outcome, "warning", "does not compile (")
    assert len(outcome.err.splitlines()) == 1 and reason in outcome.err  # once, for 12 questions x 4 systems
    assert "\x1b" not in outcome.err
    assert timeless(outcome.out).replace("bad.jsonl", "clean.jsonl") == timeless(clean.out)  # DPR: it matches nothing
