"""Files other tools write: Parquet runs/qrels (ranx), ir_measures' namedtuples, Pyserini JSONL,
headerless MS MARCO/Pyserini TSV, and --fields for any table file; bad input names file and line."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError, SchemaError
from rankscope.corpora.foreign import read_qrels, read_run
from rankscope.corpora.load import load_folder
from rankscope.corpora.tabular import read_table
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation import evaluate
from tests.evaluation.trec_reference import random_case

METRICS = ["ndcg@10", "precision@10", "map", "mrr"]


def test_parquet_in_ranx_layout_reads_as_its_trec_twin(tmp_path: Path) -> None:
    """ranx 0.3's ``Run.save("x.parquet")`` / ``Qrels.save`` write columns q_id, doc_id, score (checked by hand
    with ranx 0.3.21; ranx itself is not used here: building a Run compiles numba code for a minute)."""
    qrels, run = random_case(5)
    ranx_names = {"query_id": "q_id", "relevance": "score"}
    run[["query_id", "doc_id", "score"]].rename(columns=ranx_names).to_parquet(tmp_path / "run.parquet")
    qrels.rename(columns=ranx_names).to_parquet(tmp_path / "qrels.parquet")
    write_trec_run(run, tmp_path / "run.trec")
    pd.testing.assert_frame_equal(read_run(tmp_path / "run.parquet"), read_run(tmp_path / "run.trec"))
    pd.testing.assert_frame_equal(read_qrels(tmp_path / "qrels.parquet"), qrels)


def test_parquet_with_qid_docid_columns_scores_like_trec_files(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_case(6)
    run[["query_id", "doc_id", "score"]].rename(columns={"query_id": "qid", "doc_id": "docid"}).to_parquet(
        tmp_path / "run.parquet"
    )
    qrels.to_parquet(tmp_path / "qrels.parquet")
    write_trec_run(run, tmp_path / "run.trec")
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    outputs = []
    for qrels_file, run_file in (("qrels.parquet", "run.parquet"), ("qrels.txt", "run.trec")):
        assert main(["evaluate", str(tmp_path / qrels_file), str(tmp_path / run_file), *METRICS, "--format=json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out)["mean"])
    assert outputs[0] == outputs[1]
    assert outputs[0]["map"] == pytest.approx(evaluate(qrels, run, ["map"]).mean["map"], abs=1e-15)


def test_ir_measures_namedtuples_score_as_ir_measures_scores_them() -> None:
    qrels, run = random_case(7)
    run_rows = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in run[["query_id", "doc_id", "score"]].values]
    qrels_rows = [ir_measures.Qrel(q, d, int(r)) for q, d, r in qrels.values]
    ours = evaluate(qrels_rows, run_rows, METRICS).wide()
    pd.testing.assert_frame_equal(ours, evaluate(qrels, run, METRICS).wide())
    measures = {"ndcg@10": ir_measures.nDCG @ 10, "precision@10": ir_measures.P @ 10, "map": ir_measures.AP}
    reference = list(ir_measures.iter_calc(list(measures.values()), qrels_rows, run_rows))
    assert len(reference) > 30
    names = {str(measure): name for name, measure in measures.items()}
    for value in reference:
        assert ours.loc[value.query_id, names[str(value.measure)]] == pytest.approx(value.value, abs=1e-9)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def pyserini_folder(root: Path) -> Path:
    """A Pyserini/MS MARCO-shaped collection: JSONL {id, contents}, headerless TSV queries, TREC qrels."""
    folder = root / "collection"
    folder.mkdir()
    docs = [
        {"id": "7", "contents": 'the "quoted" rocket engine'},
        {"id": "8", "contents": "jet wing lift"},
        {"id": "9", "contents": "wing flutter at speed"},
    ]
    write(folder / "corpus.jsonl", "".join(json.dumps(doc) + "\n" for doc in docs))
    write(folder / "queries.tsv", '1\t"rocket" engine\n2\twing lift\n')
    write(folder / "qrels", "1 0 7 1\n2 0 8 2\n2 0 9 1\n")
    return folder


def test_pyserini_jsonl_and_headerless_tsv_queries(tmp_path: Path) -> None:
    data = load_folder(pyserini_folder(tmp_path))
    assert data.corpus.values.tolist() == [
        ["7", "", 'the "quoted" rocket engine'],
        ["8", "", "jet wing lift"],
        ["9", "", "wing flutter at speed"],
    ]
    assert data.queries.values.tolist() == [["1", '"rocket" engine'], ["2", "wing lift"]]  # quotes are text
    headed = write(tmp_path / "headed.tsv", "query_id\ttext\nq1\tfirst\n")
    assert read_table(headed, "queries").values.tolist() == [["q1", "first"]]
    renamed = write(tmp_path / "renamed.tsv", "qid\tquery\nq1\tfirst\n")  # a header the mapping names
    assert read_table(renamed, "queries", {"text": "query"}).values.tolist() == [["q1", "first"]]


def test_fields_maps_columns_from_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "mine"
    folder.mkdir()
    write(folder / "corpus.csv", "pid,passage\n7,rocket engine\n8,jet wing lift\n9,wing flutter\n")
    write(folder / "queries.tsv", "1\trocket engine\n2\twing lift\n")
    write(folder / "qrels", "1 0 7 1\n2 0 8 1\n")
    run = tmp_path / "run.trec"
    search = ["search", "--dataset", str(folder), "--retriever", "bm25", "--out", str(run)]
    assert main(search) == 2
    assert capsys.readouterr().err.endswith(
        "corpus.csv, line 2: missing field(s) ['doc_id', 'text']; found ['passage', 'pid'] "
        "(map columns with --fields corpus.doc_id=NAME)\n"
    )
    assert main([*search, "--fields", "corpus.doc_id=pid,corpus.text=passage"]) == 0
    assert read_run(run)[["query_id", "doc_id", "rank"]].values.tolist()[:2] == [["1", "7", 1], ["2", "8", 1]]
    write(tmp_path / "run.csv", "topic,document,value\n1,7,2.5\n1,8,1.0\n2,8,3.0\n")
    mapping = "run.query_id=topic,run.doc_id=document,run.score=value"
    assert main(["evaluate", str(folder / "qrels"), str(tmp_path / "run.csv"), "mrr", "--fields", mapping]) == 0
    assert "mrr 1.0000" in " ".join(capsys.readouterr().out.split())
    assert (
        main(["search", "--dataset", "cranfield", "--retriever", "bm25", "--out", str(run), "--fields", "text=x"]) == 2
    )
    assert "cranfield is a known collection, whose fields are fixed" in capsys.readouterr().err
    assert main(["evaluate", str(folder / "qrels"), str(run), "--fields", "run.score=x"]) == 2
    assert "run.trec: is a TREC run file, whose fields are fixed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "text", "kind", "message"),
    [
        ("queries.tsv", "1\tfirst\n2\tsecond\n3\tthird\textra\n", "queries", r"queries.tsv, line 3: expected 2 fields"),
        ("corpus.jsonl", '{"id": "1", "_id": "2", "contents": "x"}\n', "corpus", r"columns \['_id', 'id'\] could each"),
        ("run.csv", "qid,docid,score\nq1,d1,1.0\nq1,d1,2.0\n", "run", r"run.csv, line 3: duplicate"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path: Path, name: str, text: str, kind: str, message: str) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises((FormatError, SchemaError), match=message):
        read_run(path) if kind == "run" else read_table(path, kind)


def test_bad_parquet_names_file_and_row(tmp_path: Path) -> None:
    pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d1"], "score": [1.0, 2.0]}).to_parquet(tmp_path / "dup.parquet")
    with pytest.raises(SchemaError, match=r"dup.parquet: row 1: duplicate query, document 'q1', 'd1'"):
        read_run(tmp_path / "dup.parquet")
    pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "score": [None]}).to_parquet(tmp_path / "nan.parquet")
    with pytest.raises(SchemaError, match=r"nan.parquet: run column 'score' has a missing value at row 0"):
        read_run(tmp_path / "nan.parquet")
    write(tmp_path / "text.parquet", "not parquet")
    assert main(["evaluate", str(tmp_path / "text.parquet"), str(tmp_path / "dup.parquet")]) == 2


def test_compare_runs_in_table_formats_with_fields(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from rankscope.workflows.common.systems import sha256_of

    folder = pyserini_folder(tmp_path)
    write(tmp_path / "a.csv", "topic,document,value\n1,7,2.0\n1,8,1.0\n2,9,3.0\n2,8,1.0\n")
    rows = {"topic": ["1", "1", "2", "2"], "document": ["8", "7", "8", "9"], "value": [2.0, 1.0, 3.0, 1.0]}
    pd.DataFrame(rows).to_parquet(tmp_path / "b.parquet")
    mapping = "run.query_id=topic,run.doc_id=document,run.score=value"
    runs = ["--run", f"a={tmp_path / 'a.csv'}", "--run", f"b={tmp_path / 'b.parquet'}"]
    assert (
        main(["compare", "--dataset", str(folder), *runs, "--fields", mapping, "--metrics", "mrr", "--format=json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    # a: q1 finds 7 first (1.0), q2 finds 9 first (1/1 = 1.0); b: q1 8 then 7 (0.5), q2 8 first (1.0)
    assert {name: row["mrr"] for name, row in result["mean"].items()} == {"a": 1.0, "b": 0.75}
    assert (
        result["systems"]["b"]["description"]
        == f"run file {tmp_path / 'b.parquet'} (sha256 {sha256_of(tmp_path / 'b.parquet')})"
    )
