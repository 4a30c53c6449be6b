"""Fuzz: bad inputs of every class for every reader, the CLI arguments and the environment.

Each case states its outcome (see ``conftest.py``): a one-line error naming the file,
line and problem with exit 2, a counted warning the CLI prints, or acceptance with
output equal to the clean input's. Cases are generated from a fixed seed.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.corpora.dataset import Dataset

SEED = 18
QRELS = "1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d1 1\n3 0 d2 1\n"
RUN = "".join(
    f"{q} Q0 {d} {r} {s} tag\n"
    for q, docs in (("1", "d1 d3 d2"), ("2", "d3 d2 d1"), ("3", "d1 d2 d3"))
    for r, (d, s) in enumerate(zip(docs.split(), ("3.5", "2.25", "1")), start=1)
)
BAD_INTEGERS = {
    "beyond int64": ("99999999999999999999", "out of range"),
    "5000 digits": ("9" * 5000, "out of range"),
    "fullwidth digit": ("\uff11", "must be an integer"),
    "arabic-indic digit": ("\u0663", "must be an integer"),
    "exponent": ("1e3", "must be an integer"),
    "decimal": ("1.0", "must be an integer"),
    "inf": ("inf", "must be an integer"),
    "word": ("x", "must be an integer"),
}
BAD_SCORES = {
    "inf": ("inf", "must be a finite number"),
    "nan": ("nan", "must be a finite number"),
    "1e999": ("1e999", "overflows"),
    "400 digits": ("9" * 400, "overflows"),
    "fullwidth digit": ("\uff11", "must be a finite number"),
    "word": ("x1", "must be a finite number"),
}
BAD_IDS = {
    "NUL byte": ("d\x001", "contains a NUL byte"),
    "quoted": ('"1"', "is quoted"),
}


def _pick_line(text: str, salt: str) -> int:
    """A deterministic line (0-based) to damage, different per case."""
    return random.Random(f"{SEED}:{salt}").randrange(text.count("\n"))


def _replace_field(text: str, field: int, value: str, salt: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    n = _pick_line(text, salt)
    parts = lines[n].split()
    parts[field] = value
    lines[n] = " ".join(parts) + "\n"
    return "".join(lines), n + 1


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def _evaluate(folder: Path, qrels: str = "qrels", run: str = "run") -> list[str]:
    return ["evaluate", str(folder / qrels), str(folder / run), "map", "ndcg@10", "--per-query"]


@pytest.fixture
def clean(files: Path):
    outcome = run_cli(_evaluate(files))
    assert outcome.kind == "accepted" and "map" in outcome.out
    return outcome


# --- TREC qrels and runs: field values ------------------------------------------------------
BAD_RANKS = BAD_SCORES
"""A run's rank is checked to be a number (as the score) but never used, so any finite number is accepted."""
FIELD_CASES = (
    [("qrels", 3, "relevance", name, value, problem) for name, (value, problem) in BAD_INTEGERS.items()]
    + [("run", 3, "rank", name, value, problem) for name, (value, problem) in BAD_RANKS.items()]
    + [("run", 4, "score", name, value, problem) for name, (value, problem) in BAD_SCORES.items()]
    + [
        (kind, field, col, name, value, problem)
        for kind, field, col in (
            ("qrels", 0, "query_id"),
            ("qrels", 2, "doc_id"),
            ("run", 0, "query_id"),
            ("run", 2, "doc_id"),
        )
        for name, (value, problem) in BAD_IDS.items()
    ]
)


@pytest.mark.parametrize(("target", "field", "column", "name", "value", "problem"), FIELD_CASES)
def test_trec_field_values(files: Path, target: str, field: int, column: str, name: str, value: str, problem: str):
    text = QRELS if target == "qrels" else RUN
    damaged, line = _replace_field(text, field, value, f"{target}{field}{name}")
    (files / target).write_text(damaged, encoding="utf-8")
    check(run_cli(_evaluate(files)), "error", f"{files / target}, line {line}: {column}")
    assert problem in run_cli(_evaluate(files)).err


@pytest.mark.parametrize("rank", ["7", "1.0", "1e3", "99999999999999999999"])
def test_run_rank_is_not_used(files: Path, clean, rank: str) -> None:
    """A run's rank is read as a number but never used (ranks come from the scores), as in trec_eval."""
    damaged, _ = _replace_field(RUN, 3, rank, f"rank-{rank}")
    (files / "run").write_text(damaged)
    check(run_cli(_evaluate(files)), "accepted", clean=clean)


# --- TREC files: structure ------------------------------------------------------------------
STRUCTURE: dict[str, tuple[Callable[[str], bytes], str]] = {
    "a field missing": (lambda t: t.replace(" 0 d3", " d3", 1).replace("2 Q0 d3", "2 d3", 1).encode(), "expected"),
    "100,000 fields": (lambda t: (t.rstrip("\n") + " x" * 100_000 + "\n").encode(), "found 100"),
    "duplicate pair": (lambda t: (t + t.splitlines(keepends=True)[0]).encode(), "duplicate"),
    "empty file": (lambda t: b"", "empty"),
    "only blank lines": (lambda t: b"\n \n\t\n", "empty"),
    "invalid UTF-8": (lambda t: t.encode().replace(b"d2", b"d\xff", 1), "invalid UTF-8 byte 0xff"),
    "NUL byte line": (lambda t: t.encode() + b"\x00\n", "line 6"),
}


@pytest.mark.parametrize("target", ["qrels", "run"])
@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_trec_structure(files: Path, target: str, name: str) -> None:
    damage, fragment = STRUCTURE[name]
    if name == "NUL byte line" and target == "run":
        fragment = "line 10"
    if name == "100,000 fields" and target == "run":  # trec_eval ignores the words after a run's tag
        clean = run_cli(_evaluate(files))
        (files / target).write_bytes(damage(RUN))
        check(run_cli(_evaluate(files)), "accepted", clean=clean)
        return
    (files / target).write_bytes(damage(QRELS if target == "qrels" else RUN))
    outcome = run_cli(_evaluate(files))
    check(outcome, "error", str(files / target))
    assert fragment in outcome.err


def test_truncated_gzip(files: Path) -> None:
    (files / "qrels.gz").write_bytes(gzip.compress(QRELS.encode())[:-12])
    check(run_cli(_evaluate(files, qrels="qrels.gz")), "error", "qrels.gz")


@pytest.mark.parametrize("kind", ["directory", "/dev/null", "FIFO", "missing"])
@pytest.mark.parametrize("target", ["qrels", "run"])
def test_not_a_file(files: Path, kind: str, target: str) -> None:
    path = files / target
    path.unlink()
    if kind == "directory":
        path.mkdir()
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "/dev/null":
        path = Path("/dev/null")
    argv = _evaluate(files)
    argv[1 if target == "qrels" else 2] = str(path)
    expected = {"directory": "is a directory", "FIFO": "not a regular file", "/dev/null": "not a regular file"}
    check(run_cli(argv), "error", expected.get(kind, "no such"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files of mode 000")
def test_unreadable_file(files: Path) -> None:
    (files / "qrels").chmod(0)
    check(run_cli(_evaluate(files)), "error", "Permission denied")


def test_permission_denied_while_reading(tmp_path: Path, monkeypatch) -> None:
    """What a file of mode 000 does for a user who is not root (the suite may run as root)."""
    folder = _smart(tmp_path)

    def denied(path: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "read_bytes", denied)
    check(run_cli(_search(folder, tmp_path)), "error", "cran.all.1400: Permission denied")


# --- TREC files: variants that must read the same -------------------------------------------
VARIANTS: dict[str, Callable[[str], bytes]] = {
    "CRLF": lambda t: t.replace("\n", "\r\n").encode(),
    "BOM": lambda t: b"\xef\xbb\xbf" + t.encode(),
    "tabs": lambda t: t.replace(" ", "\t").encode(),
    "trailing spaces": lambda t: t.replace("\n", "  \n").encode(),
    "blank lines": lambda t: t.replace("\n", "\n\n").encode(),
    "no final newline": lambda t: t.rstrip("\n").encode(),
}


@pytest.mark.parametrize("target", ["qrels", "run"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_trec_variants_accepted_unchanged(files: Path, clean, target: str, name: str) -> None:
    (files / target).write_bytes(VARIANTS[name](QRELS if target == "qrels" else RUN))
    check(run_cli(_evaluate(files)), "accepted", clean=clean)


def test_gzip_accepted_unchanged(files: Path, clean) -> None:
    (files / "run.gz").write_bytes(gzip.compress(RUN.encode()))
    check(run_cli(_evaluate(files, run="run.gz")), "accepted", clean=clean)


# --- run against qrels ----------------------------------------------------------------------
def test_zero_padded_queries_share_none(files: Path) -> None:
    (files / "run").write_text("".join(f"00{line}" for line in RUN.splitlines(keepends=True)))
    check(run_cli(_evaluate(files)), "error", "share none with the qrels' 3")


def test_quoted_and_padded_queries_half_shared(files: Path) -> None:
    lines = RUN.splitlines(keepends=True)
    (files / "run").write_text("".join(lines[:3]) + "".join(f"0{line}" for line in lines[3:]))
    check(run_cli(_evaluate(files)), "warning", "2 of 3 run queries are not in the qrels")


def test_float_doc_ids_retrieve_nothing_judged(files: Path) -> None:
    (files / "qrels").write_text(QRELS.replace(" d", " "))
    (files / "run").write_text(RUN.replace(" d1 ", " 1.0 ").replace(" d2 ", " 2.0 ").replace(" d3 ", " 3.0 "))
    check(run_cli(_evaluate(files)), "warning", "retrieves none of the 3 judged documents")


def test_huge_relevance_under_exponential_gain(files: Path) -> None:
    (files / "qrels").write_text(QRELS.replace("d1 2", "d1 5000"))
    check(run_cli(["evaluate", str(files / "qrels"), str(files / "run"), "ndcg_exp@10"]), "error", "too large")


# --- the number regex: linear (the harness's alarm would count a hang) ------------------------
@pytest.mark.parametrize(
    ("target", "field", "column"), [("run", 4, "score"), ("run", 3, "rank"), ("qrels", 3, "relevance")]
)
def test_80000_digits_then_a_letter_does_not_hang(files: Path, target: str, field: int, column: str) -> None:
    damaged, line = _replace_field(QRELS if target == "qrels" else RUN, field, "1" * 80_000 + "x", target)
    (files / target).write_text(damaged)
    check(run_cli(_evaluate(files)), "error", f"line {line}: {column}")


def test_long_smart_marker_line_does_not_hang(tmp_path: Path) -> None:
    folder = _smart(tmp_path)
    text = (folder / "cran.all.1400").read_text()
    (folder / "cran.all.1400").write_text(text.replace(".W\n", ".W x" + " " * 80_000 + "y\n", 1))
    check(run_cli(_search(folder, tmp_path)), "accepted")


# --- collections: SMART, BEIR, TREC-style folders -------------------------------------------
SMART_DOCS = "".join(f".I {i}\n.T\ntitle {i}\n.W\nwing lift heat {i} flow {'slab ' * i}\n" for i in range(1, 7))
SMART_QUERIES = ".I 001\n.W\nwing lift\n.I 004\n.W\nheat slab\n.I 009\n.W\nflow\n"
SMART_QRELS = "1 1 1\n1 2 2\n2 3 1\n2 6 -1\n3 5 2\n"


def _smart(tmp_path: Path, docs: str = SMART_DOCS, queries: str = SMART_QUERIES, qrels: str = SMART_QRELS) -> Path:
    folder = tmp_path / "mycran"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("cran.all.1400", docs), ("cran.qry", queries), ("cranqrel", qrels)):
        (folder / name).write_text(text)
    return folder


def _search(folder: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "search",
        "--dataset",
        str(folder),
        "--retriever",
        "tfidf",
        "--k",
        "5",
        "--out",
        str(tmp_path / "out.trec"),
        *extra,
    ]


def _searched(tmp_path: Path, argv: list[str]):
    outcome = run_cli(argv)
    out = tmp_path / "out.trec"
    return outcome, (out.read_text() if out.exists() else "")


SMART_CASES = {
    "lost .I merges two documents": (
        lambda d, q, r: (d.replace(".I 4\n", ""), q, r),
        "warning",
        "record 3 repeats section(s) T (line 16), W (line 18)",
    ),
    "lost .I merges a judged document": (
        lambda d, q, r: (d.replace(".I 5\n", ""), q, r),
        "warning",
        "1 judgment(s) name 1 document(s) not in the corpus",
    ),
    "lost .I merges two queries": (
        lambda d, q, r: (d, q.replace(".I 004\n", ""), r),
        "error",
        "cran.qry, line 1: record 001 repeats section(s) W (line 4): two records merged",
    ),
    "repeated .W": (
        lambda d, q, r: (d.replace(".W\nwing lift heat 2", ".W\nwing\n.W\nlift heat 2"), q, r),
        "warning",
        "record 2 repeats section(s) W",
    ),
    "cut in half": (lambda d, q, r: (d[: len(d) // 2], q, r), "warning", "not in the corpus"),
    "judgment for document 9999": (lambda d, q, r: (d, q, r + "1 9999 1\n"), "warning", "['9999']"),
    "judgment for query 0": (lambda d, q, r: (d, q, r + "0 1 1\n"), "warning", "['0']"),
    "float doc id in qrels": (lambda d, q, r: (d, q, r.replace("1 2 2", "1 2.0 2")), "error", "cranqrel, line 2"),
    "unknown relevance code": (lambda d, q, r: (d, q, r.replace("1 2 2", "1 2 5")), "error", "cranqrel, line 2"),
    "relevance beyond int64": (
        lambda d, q, r: (d, q, r.replace("1 2 2", "1 2 99999999999999999999")),
        "error",
        "out of range",
    ),
    "no .I line at all": (lambda d, q, r: ("just text\n", q, r), "error", "cran.all.1400, line 1"),
    "id of 5000 digits": (
        lambda d, q, r: (d.replace(".I 3\n", f".I {'7' * 5000}\n"), q, r),
        "warning",
        "not in the corpus",
    ),
}


@pytest.mark.parametrize("name", sorted(SMART_CASES))
def test_smart_folder(tmp_path: Path, name: str) -> None:
    damage, expect, fragment = SMART_CASES[name]
    folder = _smart(tmp_path, *damage(SMART_DOCS, SMART_QUERIES, SMART_QRELS))
    check(run_cli(_search(folder, tmp_path)), expect, fragment)
    if expect == "warning":
        check(
            run_cli(_search(folder, tmp_path, "--strict"))
            if "judgment" in fragment
            else run_cli(_search(folder, tmp_path)),
            "error" if "judgment" in fragment else "warning",
            fragment,
        )


def test_smart_clean_and_crlf_copy_read_the_same(tmp_path: Path) -> None:
    clean, clean_run = _searched(tmp_path, _search(_smart(tmp_path / "a"), tmp_path))
    folder = _smart(tmp_path / "b", *(t.replace("\n", "\r\n") for t in (SMART_DOCS, SMART_QUERIES, SMART_QRELS)))
    outcome, run = _searched(tmp_path, _search(folder, tmp_path))
    check(outcome, "accepted")
    assert run == clean_run and clean.kind == "accepted"


KNOWN_DAMAGE = {
    "lost .I in cran.qry": ("cran.qry", lambda b: b.replace(b".I 010\r\n", b"", 1)),
    "lost .I in cran.all.1400": ("cran.all.1400", lambda b: b.replace(b".I 700\r\n", b"", 1)),
    "repeated .W in cran.qry": ("cran.qry", lambda b: b.replace(b".W\r\n", b".W\r\n.W\r\n", 1)),
    "cran.all.1400 cut in half": ("cran.all.1400", lambda b: b[: len(b) // 2]),
    "cranqrel line dropped": ("cranqrel", lambda b: b[b.index(b"\n") + 1 :]),
}


@pytest.mark.parametrize("name", sorted(KNOWN_DAMAGE))
def test_known_collection_damage_is_an_error(data_dir: Path, tmp_path: Path, monkeypatch, name: str) -> None:
    file, damage = KNOWN_DAMAGE[name]
    shutil.copytree(data_dir / "cranfield", tmp_path / "data" / "cranfield")
    path = tmp_path / "data" / "cranfield" / file
    path.write_bytes(damage(path.read_bytes()))
    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path / "data"))
    argv = ["compare", "--retrievers", "bm25", "tfidf", "--quiet"]
    check(run_cli(argv), "error", f"{path}: differs from the cranfield file as distributed")


def _beir(tmp_path: Path) -> Path:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"t{i}", "text": f"wing lift heat {'flow ' * i}"} for i in range(1, 6)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": "q1", "text": "wing flow"}, {"_id": "q2", "text": "heat"}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t2\nq2\td2\t1\n")
    return folder


BEIR_CASES = {
    "two _id keys": (
        "corpus.jsonl",
        lambda t: t.replace('{"_id": "d2"', '{"_id": "d2", "_id": "d7"'),
        "error",
        "corpus.jsonl, line 2: invalid JSON (key '_id' appears twice",
    ),
    "NaN constant": (
        "corpus.jsonl",
        lambda t: t.replace('"title": "t3"', '"title": NaN'),
        "error",
        "corpus.jsonl, line 3: invalid JSON (NaN",
    ),
    "NUL in _id": ("corpus.jsonl", lambda t: t.replace('"d4"', '"d\\u00004"'), "error", "line 4: _id"),
    "not JSON": ("queries.jsonl", lambda t: t + "{oops\n", "error", "queries.jsonl, line 3: invalid JSON"),
    "null text": ("queries.jsonl", lambda t: t.replace('"heat"', "null"), "error", "queries.jsonl, line 2"),
    "score beyond int64": (
        "qrels/test.tsv",
        lambda t: t.replace("d3\t2", "d3\t99999999999999999999"),
        "error",
        "test.tsv, line 3: score",
    ),
    "score 1e3": ("qrels/test.tsv", lambda t: t.replace("d3\t2", "d3\t1e3"), "error", "test.tsv, line 3: score"),
    "arabic digit score": ("qrels/test.tsv", lambda t: t.replace("d3\t2", "d3\t\u0663"), "error", "line 3: score"),
    "quoted ids": ("qrels/test.tsv", lambda t: t.replace("q2\td2", '"q2"\t"d2"'), "error", "line 4: query-id"),
    "judgment for an unknown document": ("qrels/test.tsv", lambda t: t + "q1\td9999\t1\n", "warning", "['d9999']"),
    "float doc id": ("qrels/test.tsv", lambda t: t.replace("q2\td2", "q2\td2.0"), "warning", "['d2.0']"),
    "header missing": (
        "qrels/test.tsv",
        lambda t: t.split("\n", 1)[1],
        "error",
        "test.tsv, line 1: expected the header",
    ),
}


@pytest.mark.parametrize("name", sorted(BEIR_CASES))
def test_beir_folder(tmp_path: Path, name: str) -> None:
    file, damage, expect, fragment = BEIR_CASES[name]
    folder = _beir(tmp_path)
    (folder / file).write_text(damage((folder / file).read_text()))
    check(run_cli(_search(folder, tmp_path)), expect, fragment)


def test_beir_directory_as_corpus(tmp_path: Path) -> None:
    folder = _beir(tmp_path)
    (folder / "queries.jsonl").unlink()
    (folder / "queries.jsonl").mkdir()
    check(run_cli(_search(folder, tmp_path)), "error", "queries.jsonl")


def _trec_style(tmp_path: Path) -> Path:
    folder = tmp_path / "trecstyle"
    folder.mkdir()
    (folder / "corpus.tsv").write_text(
        "doc_id\ttitle\ttext\n" + "".join(f"d{i}\tt\twing {'heat ' * i}\n" for i in range(1, 5))
    )
    (folder / "queries.csv").write_text("query_id,text\n1,wing\n2,heat\n")
    (folder / "qrels").write_text("1 0 d1 1\n2 0 d2 1\n")
    return folder


TREC_STYLE_CASES = {
    "tsv row short": ("corpus.tsv", lambda t: t.replace("d2\tt\t", "d2\t"), "corpus.tsv, line 3"),
    "csv bad quote": ("queries.csv", lambda t: t.replace("1,wing", '1,"wi"ng'), "queries.csv, line 2"),
    "qrels relevance 1e3": ("qrels", lambda t: t.replace("d2 1", "d2 1e3"), "qrels, line 2: relevance"),
    "NUL in a doc id": ("corpus.tsv", lambda t: t.replace("d3", "d\x003"), "corpus.tsv, line 4"),
}


@pytest.mark.parametrize("name", sorted(TREC_STYLE_CASES))
def test_trec_style_folder(tmp_path: Path, name: str) -> None:
    file, damage, fragment = TREC_STYLE_CASES[name]
    folder = _trec_style(tmp_path)
    (folder / file).write_text(damage((folder / file).read_text()))
    check(run_cli(_search(folder, tmp_path)), "error", fragment)


# --- environment variables and CLI arguments ------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "0", "-1", "\uff12", "1.5", "", "99999999999"])
def test_bad_thread_count(tmp_path: Path, monkeypatch, value: str) -> None:
    monkeypatch.setenv("RANKSCOPE_NUM_THREADS", value)
    check(run_cli(_search(_smart(tmp_path), tmp_path)), "error", "RANKSCOPE_NUM_THREADS must be a positive integer")


def test_thread_count_does_not_change_the_run(tmp_path: Path, monkeypatch) -> None:
    folder = _smart(tmp_path)
    clean, clean_run = _searched(tmp_path, _search(folder, tmp_path))
    monkeypatch.setenv("RANKSCOPE_NUM_THREADS", "2")
    outcome, run = _searched(tmp_path, _search(folder, tmp_path))
    check(outcome, "accepted")  # stdout says how long it took: the run file is what must not change
    assert run == clean_run and clean.kind == "accepted"


ARGUMENT_CASES = {
    "k of 0": (["--k", "0"], "--k must be a positive integer"),
    "unknown retriever": (["--retriever", "nope"], "unknown retriever 'nope'"),
    "unbalanced spec": (["--retriever", "hybrid:retrievers=(bm25"], "a bracket is not closed"),
    "unknown parameter": (["--retriever", "bm25:zz=1"], "no parameter(s) ['zz']"),
    "dataset that is a file": (["--dataset", "/etc/hostname"], "is a file"),
    "dataset that does not exist": (["--dataset", "/nonexistent/x"], "neither an existing folder"),
}


@pytest.mark.parametrize("name", sorted(ARGUMENT_CASES))
def test_bad_arguments(tmp_path: Path, name: str) -> None:
    extra, fragment = ARGUMENT_CASES[name]
    argv = _search(_smart(tmp_path), tmp_path)
    for option, value in zip(extra[::2], extra[1::2]):
        argv[argv.index(option) + 1] = value
    check(run_cli(argv), "error", fragment)


@pytest.mark.parametrize(
    "spec",
    ["bm25:k1=-1", "bm25:k1=inf", "bm25:k1=1e400", "bm25:b=2", "bm25:epsilon=nan", "bm25:delta=abc", "hybrid:depth=0"],
)
def test_out_of_range_parameter_values(tmp_path: Path, spec: str) -> None:
    """Checked before indexing by the retrievers' parameter tables (retrieval/params.py)."""
    argv = _search(_smart(tmp_path), tmp_path)
    argv[argv.index("--retriever") + 1] = spec
    check(run_cli(argv), "error", spec.split(":")[1])


# --- DataFrames: the same integer rule as the files -------------------------------------------
@pytest.mark.parametrize("relevance", ["1e3", "1.0", "\uff11", "99999999999999999999", 1e20, 1.5, float("nan"), 2**70])
def test_dataframe_relevance_follows_the_file_rule(relevance: object) -> None:

    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [relevance, 1]})
    corpus = pd.DataFrame({"doc_id": ["d1", "d2"], "text": ["a", "b"]})
    queries = pd.DataFrame({"query_id": ["1"], "text": ["a"]})
    made = run_call(lambda: Dataset("frames", corpus, queries, qrels))
    check(made, "error", "relevance")


# --- interaction logs (MovieLens u.data) ------------------------------------------------------
INTERACTIONS = "1\t10\t4\t881250949\n1\t11\t3\t881250950\n2\t10\t5\t881250951\n"


@pytest.mark.parametrize(
    ("name", "field", "value", "problem"),
    [
        ("timestamp 1e3", 3, "1e3", "timestamp must be an integer"),
        ("timestamp of 5000 digits", 3, "9" * 5000, "out of range"),
        ("timestamp fullwidth", 3, "\uff11", "timestamp must be an integer"),
        ("rating inf", 2, "inf", "not a finite number"),
        ("rating of 400 digits", 2, "9" * 400, "not a finite number"),
        ("empty user", 0, " ", "empty user id"),
    ],
)
def test_interaction_log(tmp_path: Path, name: str, field: int, value: str, problem: str) -> None:
    from rankscope.corpora.interactions import read_interactions

    lines = INTERACTIONS.splitlines()
    parts = lines[1].split("\t")
    parts[field] = value
    lines[1] = "\t".join(parts)
    (tmp_path / "u.data").write_text("\n".join(lines) + "\n")
    check(run_call(lambda: read_interactions(tmp_path / "u.data")), "error", "u.data, line 2: ")
    assert problem in run_call(lambda: read_interactions(tmp_path / "u.data")).err
