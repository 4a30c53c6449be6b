"""BEIR folders, JSONL/CSV/TSV tables and DataFrames; round trips through Dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import FormatError, SchemaError
from rankscope.corpora.beir import beir_splits, read_beir, write_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.smart import read_smart
from rankscope.corpora.tabular import dataset_from_frames, from_frame, read_table, read_tabular_dataset
from rankscope.corpora.trec import read_trec_qrels, write_trec_qrels


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _beir(folder: Path, qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td2\t2\n") -> Path:
    _jsonl(
        folder / "corpus.jsonl",
        [
            {"_id": "d1", "title": "First", "text": "alpha beta", "metadata": {}},
            {"_id": "d2", "text": "gamma"},
            {"_id": 3, "title": "", "text": "délta"},
        ],
    )
    _jsonl(
        folder / "queries.jsonl",
        [{"_id": "q1", "text": "alpha?"}, {"_id": "q2", "text": "gamma?"}, {"_id": "q9", "text": "x"}],
    )
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return folder


# --- BEIR ----------------------------------------------------------------------------------
def test_beir_reads_split_and_reports_queries_of_other_splits(tmp_path: Path) -> None:
    ds = read_beir(_beir(tmp_path / "mini"))
    assert ds.name == "mini" and ds.split == "test"
    assert ds.corpus.values.tolist() == [["d1", "First", "alpha beta"], ["d2", "", "gamma"], ["3", "", "délta"]]
    assert ds.queries.values.tolist() == [["q1", "alpha?"], ["q2", "gamma?"]]
    assert ds.qrels.values.tolist() == [["q1", "d1", 1], ["q1", "d2", 0], ["q2", "d2", 2]]
    assert (
        "1 of 3 queries in queries.jsonl are not in qrels/test.tsv (another split's, or not judged yet; not loaded)"
        in ds.warnings
    )
    assert beir_splits(tmp_path / "mini") == ["test"]
    with pytest.raises(FileNotFoundError, match=r"no qrels/dev.tsv; splits found: \['test'\]"):
        read_beir(tmp_path / "mini", split="dev")


def test_beir_round_trip(tmp_path: Path) -> None:
    first = read_beir(_beir(tmp_path / "a"))
    write_beir(first, tmp_path / "b")
    second = read_beir(tmp_path / "b")
    for table in ("corpus", "queries", "qrels"):
        pd.testing.assert_frame_equal(getattr(first, table), getattr(second, table))
    assert (tmp_path / "b" / "qrels" / "test.tsv").read_text().splitlines() == [
        "query-id\tcorpus-id\tscore",
        "q1\td1\t1",
        "q1\td2\t0",
        "q2\td2\t2",
    ]
    assert json.loads((tmp_path / "b" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[2]) == {
        "_id": "3",
        "title": "",
        "text": "délta",
    }


def test_cranfield_through_beir_and_trec_round_trips(data_dir: Path, tmp_path: Path) -> None:
    cran = read_smart(data_dir / "cranfield")
    write_beir(cran, tmp_path / "beir")
    back = read_beir(tmp_path / "beir", name="cranfield")
    assert back.stats() == cran.stats()
    pd.testing.assert_frame_equal(back.corpus, cran.corpus)
    write_trec_qrels(cran.qrels, tmp_path / "cran.qrels")
    pd.testing.assert_frame_equal(read_trec_qrels(tmp_path / "cran.qrels"), cran.qrels)


@pytest.mark.parametrize(
    "qrels, line, fragment",
    [
        ("q1\td1\t1\n", 1, "expected the header 'query-id\\tcorpus-id\\tscore'"),
        ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "expected 3 tab-separated fields"),
        ("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", 2, "score must be an integer, found 'yes'"),
        ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n", 3, "(first at line 2) with conflicting grades 1 and 2"),
        ("query-id\tcorpus-id\tscore\n", None, "no judgments after the header"),
        ("", None, "empty qrels file"),
    ],
)
def test_bad_beir_qrels(tmp_path: Path, qrels: str, line: int | None, fragment: str) -> None:
    folder = _beir(tmp_path / "x", qrels)
    with pytest.raises(FormatError) as info:
        read_beir(folder)
    assert info.value.line == line and fragment in str(info.value)


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ('{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n', 2, "duplicate _id 'd1' (first at line 1)"),
        ('{"_id": "d1", "text": "a"}\n{"_id": "d2"}\n', 2, "missing field 'text'; found fields ['_id']"),
        ('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"\n', 2, "invalid JSON"),
        ('["d1", "a"]\n', 1, "expected a JSON object, found list"),
        ('{"_id": "d1", "text": ["a"]}\n', 1, "field 'text' must be a string"),
        ("", None, "empty file"),
    ],
)
def test_bad_beir_corpus(tmp_path: Path, text: str, line: int | None, fragment: str) -> None:
    folder = _beir(tmp_path / "x")
    (folder / "corpus.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_beir(folder)
    assert info.value.line == line and fragment in str(info.value)
    assert info.value.path.endswith("corpus.jsonl")


def test_beir_bom_and_invalid_utf8(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "x")
    (folder / "queries.jsonl").write_bytes(b'\xef\xbb\xbf{"_id": "q1", "text": "a"}\r\n{"_id": "q2", "text": "b"}\r\n')
    assert read_beir(folder).queries.values.tolist() == [["q1", "a"], ["q2", "b"]]
    (folder / "queries.jsonl").write_bytes(b'{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "\xc3"}\n')
    with pytest.raises(FormatError) as info:
        read_beir(folder)
    assert info.value.line == 2 and "invalid UTF-8" in str(info.value)


# --- tables --------------------------------------------------------------------------------
def test_csv_tsv_jsonl_with_column_mapping(tmp_path: Path) -> None:
    (tmp_path / "docs.csv").write_text('pid,passage\n007,"hello, ""world"""\nNA,"two\nlines"\n', encoding="utf-8")
    (tmp_path / "q.tsv").write_text("qid\tquestion\n1\thello?\n", encoding="utf-8")
    _jsonl(tmp_path / "qrels.jsonl", [{"qid": 1, "pid": "007", "label": 2}, {"qid": 1, "pid": "NA", "label": -1}])
    ds = read_tabular_dataset(
        "mine",
        tmp_path / "docs.csv",
        tmp_path / "q.tsv",
        tmp_path / "qrels.jsonl",
        columns={
            "corpus": {"doc_id": "pid", "text": "passage"},
            "queries": {"query_id": "qid", "text": "question"},
            "qrels": {"query_id": "qid", "doc_id": "pid", "relevance": "label"},
        },
    )
    assert ds.corpus.values.tolist() == [["007", "", 'hello, "world"'], ["NA", "", "two\nlines"]]
    assert ds.queries.values.tolist() == [["1", "hello?"]]
    assert ds.qrels.values.tolist() == [["1", "007", 2], ["1", "NA", -1]]


@pytest.mark.parametrize(
    "name, text, line, fragment",
    [
        ("q.csv", "query_id,doc_id,relevance\n1,a,1\n1,b\n", 3, "expected 3 fields as in the header"),
        ("q.csv", "query_id,doc_id,relevance\n1,a,1\n1,b,high\n", 3, "relevance must be an integer, found 'high'"),
        ("q.tsv", "query_id\tdoc_id\trelevance\n1\ta\t1\n1\ta\t0\n", 3, "with conflicting grades 1 and 0"),
        (
            "q.jsonl",
            '{"query_id": "1", "doc_id": "a", "relevance": 1}\n{"query_id": "1", "doc_id": "b"}\n',
            2,
            "missing field(s) ['relevance']",
        ),
        (
            "q.jsonl",
            '{"query_id": "1", "doc_id": "a", "relevance": 1.5}\n',
            1,
            "relevance must be an integer, found '1.5'",
        ),
        ("q.jsonl", '{"query_id": null, "doc_id": "a", "relevance": 1}\n', 1, "field 'query_id' is null"),
        ("q.csv", "query_id,doc_id,relevance\n", None, "empty qrels file: no rows"),
        ("q.xlsx", "", None, "unknown table format '.xlsx'"),
    ],
)
def test_bad_tables(tmp_path: Path, name: str, text: str, line: int | None, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_table(path, "qrels")
    assert info.value.line == line and fragment in str(info.value)


def test_duplicate_document_ids_name_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("doc_id\ttext\nx\tone\ny\ttwo\nx\tthree\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"line 4: duplicate doc_id 'x' \(first at line 2\)"):
        read_table(path, "corpus")


def test_frames_with_mapping_and_clear_schema_errors() -> None:
    corpus = pd.DataFrame({"id": [1, 2], "body": ["a", "b"]})
    queries = pd.DataFrame({"qid": ["q"], "q": ["a"]})
    qrels = pd.DataFrame({"qid": ["q"], "id": [2], "rel": [1]})
    before = corpus.copy()
    ds = dataset_from_frames(
        "frames",
        corpus,
        queries,
        qrels,
        columns={
            "corpus": {"doc_id": "id", "text": "body"},
            "queries": {"query_id": "qid", "text": "q"},
            "qrels": {"query_id": "qid", "doc_id": "id", "relevance": "rel"},
        },
    )
    pd.testing.assert_frame_equal(corpus, before)
    assert ds.corpus.values.tolist() == [["1", "", "a"], ["2", "", "b"]]
    assert ds.to_dicts()["qrels"] == {"q": {"2": 1}}
    with pytest.raises(SchemaError, match=r"lacks text \(as 'body'\); found columns \['id', 'text'\]"):
        from_frame(pd.DataFrame({"id": [1], "text": ["a"]}), "corpus", {"doc_id": "id", "text": "body"})
    with pytest.raises(SchemaError, match="not corpus columns"):
        from_frame(corpus, "corpus", {"docid": "id"})


def test_dataset_refuses_duplicate_ids_from_frames() -> None:
    with pytest.raises(SchemaError, match="duplicate doc_id"):
        Dataset(
            "d",
            pd.DataFrame({"doc_id": ["a", "a"], "text": ["x", "y"]}),
            pd.DataFrame({"query_id": ["q"], "text": ["t"]}),
            pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}),
        )


def test_trec_folder_to_dataset_to_trec_files(tmp_path: Path) -> None:
    from rankscope.corpora import load_dataset
    from rankscope.corpora.trec import read_trec_run, write_trec_run

    folder = tmp_path / "trec"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text('{"doc_id": "D2", "text": "x"}\n{"doc_id": "D10", "text": "y"}\n')
    (folder / "queries.tsv").write_text("query_id\ttext\n301\tfirst\n7\tsecond\n")
    qrels_text = "301 0 D2 2\n301 0 D10 0\n7 0 D10 1\n"
    (folder / "qrels").write_text(qrels_text)
    ds = load_dataset(folder)
    write_trec_qrels(ds.qrels, tmp_path / "qrels.out")
    assert (tmp_path / "qrels.out").read_text() == qrels_text
    run_text = "301 Q0 D10 1 2.5 sys\n301 Q0 D2 2 2.5 sys\n7 Q0 D2 1 -1.0 sys\n"
    (tmp_path / "run").write_text(run_text)
    write_trec_run(read_trec_run(tmp_path / "run"), tmp_path / "run.out", tag="sys")
    # same scores, ties by doc_id descending: "D2" > "D10" in byte order, so D2 takes rank 1
    assert (tmp_path / "run.out").read_text() == "301 Q0 D2 1 2.5 sys\n301 Q0 D10 2 2.5 sys\n7 Q0 D2 1 -1.0 sys\n"


def test_from_dicts_round_trips_and_refuses_a_document_without_text() -> None:
    shapes = {
        "corpus": {"d1": {"title": "T", "text": "body"}, "d2": {"title": "", "text": "plain"}},
        "queries": {"q1": "body"},
        "qrels": {"q1": {"d1": 2}},
    }
    ds = Dataset.from_dicts("small", shapes["corpus"], shapes["queries"], shapes["qrels"])
    assert ds.to_dicts() == shapes
    with pytest.raises(SchemaError, match=r"document 'd2' has no 'text' \(keys: \['title'\]\)"):
        Dataset.from_dicts("small", {"d1": "body", "d2": {"title": "only a title"}}, {"q1": "x"}, {"q1": {"d1": 1}})
