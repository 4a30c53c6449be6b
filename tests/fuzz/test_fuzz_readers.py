"""Fuzz: table, MS MARCO and corpus readers name the file's line, and read every edge one way.

Issue 33 item 3 (file lines, not data rows) and issue 28 item 4 (reader edge cases): each case is a
clean input with one damage, and the outcome it must have (see ``harness.py``).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

QRELS = "1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d1 1\n"
ROWS = [("1", "d1", "3.5"), ("1", "d3", "2.25"), ("1", "d2", "1"), ("2", "d3", "3"), ("2", "d1", "2")]


def _jsonl(rows: list[tuple[str, str, str]]) -> str:
    return "".join(json.dumps({"query_id": q, "doc_id": d, "score": float(s)}) + "\n" for q, d, s in rows)


def _delimited(rows: list[tuple[str, str, str]], sep: str) -> str:
    return sep.join(("query_id", "doc_id", "score")) + "\n" + "".join(sep.join(row) + "\n" for row in rows)


def _msmarco(rows: list[tuple[str, str, str]]) -> str:
    ranks: dict[str, int] = {}
    lines = []
    for q, d, _ in rows:
        ranks[q] = ranks.get(q, 0) + 1
        lines.append(f"{q}\t{d}\t{ranks[q]}\n")
    return "".join(lines)


WRITERS: dict[str, tuple[str, Callable[[list[tuple[str, str, str]]], str], int]] = {
    "jsonl": ("run.jsonl", _jsonl, 0),
    "csv": ("run.csv", lambda rows: _delimited(rows, ","), 1),
    "tsv": ("run.tsv", lambda rows: _delimited(rows, "\t"), 1),
}
"""Each table format: its file name, its text, and how many lines come before the first row."""


def _evaluate(folder: Path, run: str, *extra: str) -> list[str]:
    return ["evaluate", str(folder / "qrels"), str(folder / run), "map", "ndcg@10", "--per-query", *extra]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run.trec").write_text("".join(f"{q} Q0 {d} {n} {s} t\n" for n, (q, d, s) in enumerate(ROWS, start=1)))
    return tmp_path


# --- issue 33 item 3: the line of the file, not the row of the table ---------------------------
BAD_ROW_VALUES = {
    "score inf": (2, "inf", "score must be a finite number, found 'inf'"),
    "score word": (2, "x1", "score must be a finite number"),
    "score 1e999": (2, "1e999", "score '1e999' overflows a 64-bit float"),
    "doc_id empty": (1, "", "doc_id is empty"),
    "doc_id with a space": (1, "d 9", "doc_id 'd 9' contains whitespace"),
}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("name", sorted(BAD_ROW_VALUES))
@pytest.mark.parametrize("row", [0, 3])
def test_table_run_errors_name_the_file_line(folder: Path, fmt: str, name: str, row: int) -> None:
    file, write, header = WRITERS[fmt]
    field, value, problem = BAD_ROW_VALUES[name]
    rows = [list(r) for r in ROWS]
    rows[row][field] = value
    if fmt == "jsonl" and field == 2:  # a JSON number cannot be inf: the score is written as a string
        text = _jsonl([tuple(r) for r in ROWS]).splitlines(keepends=True)
        text[row] = json.dumps({"query_id": rows[row][0], "doc_id": rows[row][1], "score": value}) + "\n"
        (folder / file).write_text("".join(text))
    else:
        (folder / file).write_text(write([tuple(r) for r in rows]))
    check(run_cli(_evaluate(folder, file)), "error", f"{folder / file}, line {row + 1 + header}: {problem}")


JSON_VALUES = {
    "query_id true": ("query_id", True, "field 'query_id' is true"),
    "query_id false": ("query_id", False, "field 'query_id' is false"),
    "doc_id 1.0": ("doc_id", 1.0, "field 'doc_id' must be a string, found 1.0"),
    "score true": ("score", True, "field 'score' is true"),
}


@pytest.mark.parametrize("name", sorted(JSON_VALUES))
def test_jsonl_run_values_that_are_not_ids(folder: Path, name: str) -> None:
    key, value, problem = JSON_VALUES[name]
    lines = _jsonl(ROWS).splitlines(keepends=True)
    record = json.loads(lines[3])
    record[key] = value
    lines[3] = json.dumps(record) + "\n"
    (folder / "run.jsonl").write_text("".join(lines))
    check(run_cli(_evaluate(folder, "run.jsonl")), "error", f"run.jsonl, line 4: {problem}")


def test_jsonl_integer_ids_read_as_written(folder: Path) -> None:
    (folder / "qrels").write_text(QRELS.replace(" d", " 10"))
    (folder / "run.trec").write_text((folder / "run.trec").read_text().replace(" d", " 10"))
    clean = run_cli(_evaluate(folder, "run.trec"))
    rows = [json.dumps({"query_id": int(q), "doc_id": int("10" + d[1:]), "score": float(s)}) for q, d, s in ROWS]
    (folder / "run.jsonl").write_text("\n".join(rows) + "\n")
    check(run_cli(_evaluate(folder, "run.jsonl")), "accepted", clean=clean)


MSMARCO_DAMAGE = {
    "a document twice": (
        lambda t: t + "1\td1\t4\n",
        "line 6: duplicate query, document '1', 'd1' (first at line 1)",
    ),
    "two documents at one rank": (
        lambda t: t.replace("1\td2\t3", "1\td2\t2"),
        "line 3: query '1' has documents 'd3' and 'd2' both at rank 2 (first at line 2)",
    ),
    "ranks 2 and 02 are one rank": (
        lambda t: t.replace("1\td2\t3", "1\td2\t02"),
        "line 3: query '1' has documents 'd3' and 'd2' both at rank 02",
    ),
    "arabic-indic rank": (lambda t: t.replace("1\td2\t3", "1\td2\t\u0663"), "line 3: rank must be an integer"),
    "quoted doc id": (lambda t: t.replace("d3\t1", '"d3"\t1'), "line 4: doc_id '\"d3\"' is quoted"),
}


@pytest.mark.parametrize("name", sorted(MSMARCO_DAMAGE))
def test_msmarco_run(folder: Path, name: str) -> None:
    damage, fragment = MSMARCO_DAMAGE[name]
    (folder / "run.msmarco.tsv").write_text(damage(_msmarco(ROWS)))
    check(run_cli(_evaluate(folder, "run.msmarco.tsv")), "error", f"run.msmarco.tsv, {fragment}")


def test_msmarco_run_reads_as_its_trec_twin(folder: Path) -> None:
    """Scores are minus the ranks: the order of the MS MARCO file is the TREC run's, so the numbers agree."""
    clean = run_cli(_evaluate(folder, "run.trec"))
    (folder / "run.msmarco.tsv").write_text(_msmarco(ROWS))
    check(run_cli(_evaluate(folder, "run.msmarco.tsv")), "accepted", clean=clean)


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_parquet_without_rows(folder: Path, kind: str) -> None:
    pytest.importorskip("fastparquet")
    columns = {"query_id": pd.Series([], dtype=str), "doc_id": pd.Series([], dtype=str)}
    last = {"run": ("score", float), "qrels": ("relevance", "int64")}[kind]
    pd.DataFrame({**columns, last[0]: pd.Series([], dtype=last[1])}).to_parquet(folder / f"{kind}.parquet")
    argv = _evaluate(folder, "run.trec")
    argv[1 if kind == "qrels" else 2] = str(folder / f"{kind}.parquet")
    check(run_cli(argv), "error", f"{kind}.parquet: empty {kind} file: no rows")


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ("run.query_id=qid,run.doc_id=qid", "gives both the run's query_id and doc_id the column 'qid'"),
        ("run.doc_id=x,run.query_id=x", "gives both the run's query_id and doc_id the column 'x'"),
    ],
)
def test_fields_mapping_one_column_twice(folder: Path, fields: str, fragment: str) -> None:
    (folder / "run.csv").write_text(_delimited(ROWS, ",").replace("query_id", "qid", 1))
    check(run_cli(_evaluate(folder, "run.csv", "--fields", fields)), "error", fragment)


def test_mapped_column_is_not_also_an_alias(folder: Path) -> None:
    """``doc_id=qid`` takes the column ``qid``: the query id is not then read from it as an alias."""
    (folder / "run.csv").write_text(_delimited(ROWS, ",").replace("query_id,doc_id", "query,qid", 1))
    check(run_cli(_evaluate(folder, "run.csv", "--fields", "run.doc_id=qid")), "error", "run.csv, line 2: missing")


# --- issue 28 item 4: corpus edges (ids a run could not hold, texts that are numbers) -------------
DOCS = [(f"d{i}", f"t{i}", f"wing lift heat {'flow ' * i}") for i in range(1, 6)]


def _collection(tmp_path: Path, corpus_name: str, corpus: str) -> Path:
    """A TREC-style folder (``corpus.*``, ``queries.csv``, ``qrels``), or BEIR's when the corpus is
    ``corpus.jsonl`` with a ``qrels/`` folder beside it."""
    folder = tmp_path / "collection"
    folder.mkdir(parents=True)
    (folder / corpus_name).write_text(corpus)
    if corpus_name == "beir":
        (folder / "beir").rename(folder / "corpus.jsonl")
        (folder / "qrels").mkdir()
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td4\t1\n")
        (folder / "queries.jsonl").write_text('{"_id": "1", "text": "wing flow"}\n{"_id": "2", "text": "heat 4242"}\n')
    else:
        (folder / "queries.csv").write_text("query_id,text\n1,wing flow\n2,heat 4242\n")
        (folder / "qrels").write_text("1 0 d1 1\n2 0 d4 1\n")
    return folder


def _corpus_jsonl(docs: list[tuple[object, object, object]], id_key: str = "_id") -> str:
    return "".join(json.dumps({id_key: d, "title": t, "text": x}) + "\n" for d, t, x in docs)


def _corpus_tsv(docs: list[tuple[str, str, str]]) -> str:
    return "doc_id\ttitle\ttext\n" + "".join("\t".join(doc) + "\n" for doc in docs)


def _search(folder: Path, tmp_path: Path) -> list[str]:
    out = str(tmp_path / "out.trec")
    return ["search", "--dataset", str(folder), "--retriever", "bm25", "--k", "5", "--out", out]


CORPUS_EDGES = {
    "BEIR _id with a space": ("beir", 1, "_id", "d 2", "corpus.jsonl, line 2: _id 'd 2' contains whitespace"),
    "BEIR _id empty": ("beir", 2, "_id", "", "corpus.jsonl, line 3: _id is empty"),
    "JSONL doc_id with a tab": ("corpus.jsonl", 1, "doc_id", "d\t2", "corpus.jsonl, line 2: doc_id 'd\\t2'"),
    "JSONL text 4.5": ("corpus.jsonl", 3, "text", 4.5, "corpus.jsonl, line 4: field 'text' must be a string"),
    "JSONL title true": ("corpus.jsonl", 0, "title", True, "corpus.jsonl, line 1: field 'title' is true"),
    "TSV doc_id with a space": ("corpus.tsv", 1, "doc_id", "d 2", "corpus.tsv, line 3: doc_id 'd 2' contains"),
    "TSV doc_id empty": ("corpus.tsv", 4, "doc_id", "", "corpus.tsv, line 6: doc_id is empty"),
}


@pytest.mark.parametrize("name", sorted(CORPUS_EDGES))
def test_corpus_edges_are_refused(tmp_path: Path, name: str) -> None:
    file, row, column, value, fragment = CORPUS_EDGES[name]
    docs = [list(doc) for doc in DOCS]
    docs[row][("doc_id", "title", "text").index(column) if column != "_id" else 0] = value
    text = _corpus_tsv(docs) if file == "corpus.tsv" else _corpus_jsonl(docs, "_id" if file == "beir" else "doc_id")
    check(run_cli(_search(_collection(tmp_path, file, text), tmp_path)), "error", fragment)


@pytest.mark.parametrize("file", ["beir", "corpus.jsonl"])
def test_integer_text_reads_as_written(tmp_path: Path, file: str) -> None:
    """``"text": 42`` is the text "42", as ``"text": "42"`` is: the same run (one JSON rule, every reader)."""
    key = "_id" if file == "beir" else "doc_id"
    as_text: list[tuple[object, object, object]] = [*DOCS, ("d9", "t9", "4242")]
    clean = run_cli(_search(_collection(tmp_path / "a", file, _corpus_jsonl(as_text, key)), tmp_path))
    clean_run = (tmp_path / "out.trec").read_text()
    as_number = as_text[:-1] + [("d9", "t9", 4242)]
    folder = _collection(tmp_path / "b", file, _corpus_jsonl(as_number, key))
    check(run_cli(_search(folder, tmp_path)), "accepted")
    assert "d9" in clean_run and (tmp_path / "out.trec").read_text() == clean_run and clean.kind == "accepted"


# --- issue 33 item 4, issue 28 item 9: `rankscope index --corpus` reads as the BEIR reader does -----
INDEX_CORPUS = _corpus_jsonl(DOCS)
CORPUS_VARIANTS: dict[str, tuple[str, Callable[[str], bytes]]] = {
    "BOM": ("corpus.jsonl", lambda t: b"\xef\xbb\xbf" + t.encode()),
    "BOM and CRLF": ("corpus.jsonl", lambda t: b"\xef\xbb\xbf" + t.replace("\n", "\r\n").encode()),
    "BOM and CRLF, gzipped": (
        "corpus.jsonl.gz",
        lambda t: gzip.compress(b"\xef\xbb\xbf" + t.replace("\n", "\r\n").encode(), mtime=0),
    ),
    "CSV with BOM and CRLF": (
        "corpus.csv",
        lambda t: b"\xef\xbb\xbf" + _delimited_corpus(t, ",").replace("\n", "\r\n").encode(),
    ),
}


def _delimited_corpus(jsonl: str, sep: str) -> str:
    rows = [json.loads(line) for line in jsonl.splitlines()]
    return f"doc_id{sep}title{sep}text\n" + "".join(sep.join((r["_id"], r["title"], r["text"])) + "\n" for r in rows)


def _index(corpus: Path, index: Path) -> list[str]:
    return ["--quiet", "index", "--corpus", str(corpus), "--index-dir", str(index)]


def _arrays(index: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(index.glob("*.npy"))}


@pytest.mark.parametrize("name", sorted(CORPUS_VARIANTS))
def test_index_reads_bom_and_crlf_as_the_clean_file(tmp_path: Path, name: str) -> None:
    (tmp_path / "corpus.jsonl").write_text(INDEX_CORPUS)
    clean = run_cli(_index(tmp_path / "corpus.jsonl", tmp_path / "idx"))
    assert clean.kind == "accepted", clean.err
    file, variant = CORPUS_VARIANTS[name]
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / file).write_bytes(variant(INDEX_CORPUS))
    outcome = run_cli(_index(tmp_path / "v" / file, tmp_path / "v" / "idx"))
    check(outcome, "accepted")
    assert _arrays(tmp_path / "v" / "idx") == _arrays(tmp_path / "idx") != {}


INDEX_DAMAGE: dict[str, tuple[Callable[[str], bytes], str]] = {
    "doc id with a space": (lambda t: t.replace('"d3"', '"d 3"').encode(), "line 3: _id 'd 3' contains whitespace"),
    "empty doc id": (lambda t: t.replace('"d3"', '""').encode(), "line 3: _id is empty"),
    "repeated doc id": (lambda t: t.replace('"d4"', '"d2"').encode(), "line 4: duplicate _id 'd2' (first at line 2)"),
    "Latin-1 byte": (lambda t: t.replace("t3", "t\xe9").encode("latin-1"), "line 3: invalid UTF-8 byte 0xe9"),
    "only blank lines": (lambda t: b"\n\r\n\n", "empty file"),
}


@pytest.mark.parametrize("name", sorted(INDEX_DAMAGE))
def test_index_refuses_what_the_beir_reader_refuses(tmp_path: Path, name: str) -> None:
    """The same file, the same one line from `index --corpus` and from `search --dataset` (BEIR)."""
    damage, fragment = INDEX_DAMAGE[name]
    folder = _collection(tmp_path, "beir", "")
    (folder / "corpus.jsonl").write_bytes(damage(INDEX_CORPUS))
    indexed = run_cli(_index(folder / "corpus.jsonl", tmp_path / "idx"))
    check(indexed, "error", f"{folder / 'corpus.jsonl'}, {fragment}" if "line" in fragment else fragment)
    searched = run_cli(_search(folder, tmp_path))
    assert searched.err.split(": error: ")[1] == indexed.err.split(": error: ")[1]
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [
        ("directory", "is a directory, not a corpus file"),
        ("missing", "no such corpus file"),
        ("FIFO", "is not a regular file"),
    ],
)
def test_index_corpus_that_is_not_a_file(tmp_path: Path, kind: str, fragment: str) -> None:
    path = tmp_path / "corpus.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "FIFO":
        os.mkfifo(path)
    check(run_cli(_index(path, tmp_path / "idx")), "error", f"{path}: {fragment}")


def test_index_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress((INDEX_CORPUS * 50).encode())[:-40])
    check(run_cli(_index(path, tmp_path / "idx")), "error", f"{path}: not a valid gzip file")


# --- issue 28 item 5: damaged copies of SMART collections loaded by path -------------------------
def _record(raw: bytes, rec_id: bytes) -> tuple[int, int]:
    """Where the record ``.I rec_id`` starts and where the next one does (or the end)."""
    start = raw.index(b".I " + rec_id + b"\r\n") if b".I " + rec_id + b"\r\n" in raw else raw.index(b".I " + rec_id)
    following = raw.find(b"\n.I ", start + 1)
    return start, len(raw) if following < 0 else following + 1


def _without(rec_id: bytes) -> Callable[[bytes], bytes]:
    def damage(raw: bytes) -> bytes:
        start, end = _record(raw, rec_id)
        return raw[:start] + raw[end:]

    return damage


def _twice(rec_id: bytes) -> Callable[[bytes], bytes]:
    def damage(raw: bytes) -> bytes:
        start, end = _record(raw, rec_id)
        return raw[:end] + raw[start:end] + raw[end:]

    return damage


def _swapped(first: bytes, second: bytes) -> Callable[[bytes], bytes]:
    def damage(raw: bytes) -> bytes:
        (a, b), (c, d) = _record(raw, first), _record(raw, second)
        return raw[:a] + raw[c:d] + raw[b:c] + raw[a:b] + raw[d:]

    return damage


def _lost_i_line(rec_id: bytes) -> Callable[[bytes], bytes]:
    def damage(raw: bytes) -> bytes:
        start = _record(raw, rec_id)[0]
        return raw[:start] + raw[raw.index(b"\n", start) + 1 :]

    return damage


SMART_DAMAGE: dict[str, tuple[str, str, Callable[[bytes], bytes], str, str]] = {
    "Cranfield: a lost .I line merges queries 9 and 10": (
        "cranfield", "cran.qry", _lost_i_line(b"010"), "error", "cran.qry, line 18: record 009 repeats section(s) W",
    ),
    "Cranfield: query 004 twice": (
        "cranfield", "cran.qry", _twice(b"004"), "error", "cran.qry, line 13: record 004 follows record 004 (line 9)",
    ),
    "Cranfield: queries 008 and 009 swapped": (
        "cranfield", "cran.qry", _swapped(b"008", b"009"), "error", "record 008 follows record 009",
    ),
    "Cranfield: query 009 deleted": (
        "cranfield", "cran.qry", _without(b"009"), "error", "judges record 225 by position, but cran.qry holds 224",
    ),
    "Cranfield: the last query deleted": (
        "cranfield", "cran.qry", _without(b"365"), "error", "judges record 225 by position, but cran.qry holds 224",
    ),
    "CISI: query 5 deleted": (
        "cisi", "CISI.QRY", _without(b"5"), "warning", "CISI.QRY: record ids jump from 4 to 6 (line 18)",
    ),
    "CISI: a lost .I line merges queries 4 and 5": (
        "cisi", "CISI.QRY", _lost_i_line(b"5"), "warning", "CISI.QRY: record ids jump from 4 to 6",
    ),
    "CISI: document 100 deleted": (
        "cisi", "CISI.ALL", _without(b"100"), "warning", "CISI.ALL: record ids jump from 99 to 101",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SMART_DAMAGE))
def test_damaged_smart_copy_by_path(data_dir: Path, tmp_path: Path, name: str) -> None:
    """A copy loaded by path has no checksum to meet: its structure tells a lost, repeated or moved record.
    Numbered by position (Cranfield's queries), such damage would judge every later query as another: an
    error; numbered by id (CISI), a gap in ids the distribution numbers 1, 2, 3, ...: a warning."""
    collection, file, damage, expect, fragment = SMART_DAMAGE[name]
    folder = tmp_path / collection
    shutil.copytree(data_dir / collection, folder)
    (folder / file).write_bytes(damage((folder / file).read_bytes()))
    argv = ["search", "--dataset", str(folder), "--retriever", "tfidf", "--k", "3", "--out", str(tmp_path / "r")]
    check(run_cli(argv), expect, fragment)


@pytest.mark.parametrize("collection", ["cranfield", "cisi"])
def test_distributed_smart_files_by_path_raise_no_structure_warning(data_dir: Path, collection: str) -> None:
    from rankscope.corpora.smart import read_smart

    warnings = read_smart(data_dir / collection).warnings
    assert not [w for w in warnings if "jump" in w or "merged" in w], warnings


# --- issue 28 item 10: metric names in ir_measures' and trec_eval's words mean what they mean there ---
SAME_METRIC = {
    "NumRet(rel=1)": "num_rel_ret(rel=1)",
    "NumRet(rel=2)": "num_rel_ret(rel=2)",
    "nDCG(dcg=exp-log2)@10": "ndcg_exp@10",
    "nDCG(dcg='exp-log2')": "ndcg_exp",
    "rbp.p=0.9": "rbp(p=0.9)",
    "nDCG(gains={0:0,1:1,2:2})@10": "ndcg@10",
}


@pytest.mark.parametrize("name", sorted(SAME_METRIC))
def test_other_tools_metric_names(folder: Path, name: str) -> None:
    argv = ["evaluate", str(folder / "qrels"), str(folder / "run.trec"), "--per-query", "-m"]
    clean = run_cli([*argv, SAME_METRIC[name]])
    assert clean.kind == "accepted", clean.err
    check(run_cli([*argv, name]), "accepted", clean=clean)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("rbp", "rbp needs p"),
        ("RBP", "rbp needs p"),
        ("RBP@10", "rbp needs p"),
        ("nDCG(gains={0:1})", "gains give label 0 the gain 1"),
    ],
)
def test_bare_rbp_is_refused(folder: Path, name: str, fragment: str) -> None:
    """ir_measures' RBP means p = 0.8, trec_eval's rbp p = 0.9: a name without p would be one of them silently."""
    argv = ["evaluate", str(folder / "qrels"), str(folder / "run.trec"), "-m", name]
    check(run_cli(argv), "error", fragment)


def test_rbp_without_rel_is_graded_as_in_ir_measures(folder: Path) -> None:
    """Query 1 ranks d1 (label 2) first: graded RBP counts 2, binary RBP 1, so the two names differ."""
    argv = ["evaluate", str(folder / "qrels"), str(folder / "run.trec"), "--per-query", "--format", "json", "-m"]
    graded = json.loads(run_cli([*argv, "RBP(p=0.5)@1"]).out)
    binary = json.loads(run_cli([*argv, "RBP(p=0.5,rel=1)@1"]).out)
    assert graded["per_query"]["1"]["rbp(p=0.5)@1"] == 0.5 * 2
    assert binary["per_query"]["1"]["rbp(p=0.5,rel=1)@1"] == 0.5 * 1
