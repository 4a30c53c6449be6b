"""Every report says how unjudged documents and negative labels were read and, when a record sits beside the
qrels (a collection folder's judgments.tsv, a judge folder's labels), who made the judgments."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora import load_dataset
from rankscope.corpora.beir import write_beir
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.workflows import compare, diagnose, tune
from rankscope.workflows.common.judgments import Judgments
from rankscope.workflows.rag import rag
from tests.workflows.tiny_collection import DATA

# who made each of the six judgments of DATA, as collection export writes judgments.tsv
SOURCES = {
    ("q1", "d1"): "human:alice",
    ("q1", "d6"): "human:alice+bob",
    ("q2", "d3"): "openai:m",
    ("q2", "d4"): "human:bob",
    ("q3", "d5"): "generated:m",
}  # ("q3", "d2") is not listed: unknown


def write_record(folder: Path) -> None:
    rows = [f"{q}\t{d}\t1\t{source}\t1\t" for (q, d), source in SOURCES.items()]
    header = "query_id\tdoc_id\trelevance\tsource\tpeople\tinclusion_probability"
    (folder / "judgments.tsv").write_text("\n".join([header, *rows]) + "\n")


def test_a_folder_with_its_record_says_who_made_the_judgments(tmp_path: Path) -> None:
    write_beir(DATA, tmp_path)
    write_record(tmp_path)
    data = load_dataset(tmp_path)
    assert data.label_sources is not None
    assert data.label_sources.counts == {"human": 3, "judge": 1, "generated": 1, "unknown": 1}
    result = compare(data, ["bm25", "tfidf"], ["map"], out=tmp_path / "cmp")
    text = result.to_text()
    said = f"Judgments: from {tmp_path}: 3 human (50%), 1 judge (17%), 1 generated (17%), 1 unknown (17%)"
    assert said in text.replace("\n", " ")
    assert "counts as non-relevant and keeps its rank" in text.replace("\n", " ")
    record = json.loads((tmp_path / "cmp" / "provenance.json").read_text())["judgments"]
    assert record["sources"]["shares"]["human"] == pytest.approx(0.5)
    assert said[len("Judgments: ") :] in (tmp_path / "cmp" / "report.md").read_text().replace("\n", " ")


def test_without_a_record_the_origin_is_said(tmp_path: Path) -> None:
    write_beir(DATA, tmp_path)
    text = compare(load_dataset(tmp_path), ["bm25", "tfidf"], ["map"]).to_text().replace("\n", " ")
    assert f"Judgments: from {tmp_path}; who made them is not recorded (no judgments.tsv beside them)" in text
    in_memory = compare(DATA, ["bm25", "tfidf"], ["map"]).to_text().replace("\n", " ")
    assert "Judgments: not recorded (judgments given in memory)" in in_memory


def test_evaluate_reads_the_record_beside_the_qrels_and_counts_negative_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = DATA.qrels.assign(relevance=[1, -1, 2, -2, 1, 1])
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    write_record(tmp_path)
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3"], "score": [1.0, 1.0]})
    write_trec_run(run, tmp_path / "run.trec")
    assert main(["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.trec"), "-m", "map"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith(f"judgments: from {tmp_path / 'qrels.txt'}: 3 human (50%), 1 judge (17%)")
    assert "2 judgments carry a negative label (-2, -1): read as pooled but not judged" in line


def test_a_judge_folder_says_which_labels_are_the_judges() -> None:
    """Merged qrels of four pairs: the judge filled two holes (one invalid reply left a third unjudged)."""
    qrels = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 2, 0]})
    labels = pd.DataFrame(
        {
            "query_id": ["q1"] * 4,
            "doc_id": ["a", "c", "d", "e"],
            "label": [1, 2, 0, -1],
            "source": ["human", "judge", "judge", "judge"],
            "status": ["ok", "ok", "ok", "invalid"],
        }
    )
    sources = Judgments(None, qrels, labels, None).sources()
    assert dict(sources.counts) == {"human": 2, "judge": 2}


def test_diagnose_tune_and_rag_print_the_conventions_under_their_tables(tmp_path: Path) -> None:
    """The sentence compare prints (one source, provenance.judgments_caption), now in the other workflows'
    terminal text too; rag scored by answers has no judgments, so it says none."""
    write_beir(DATA, tmp_path)
    data = load_dataset(tmp_path)
    said = f"Judgments: from {tmp_path}; who made them is not recorded"
    read_as = "Read as: relevant = label >= 1; a retrieved document without a judgment counts as non-relevant"
    diagnosed = diagnose(data, "bm25", depth=5).to_text()
    first_table_end = diagnosed.index("headroom:")
    assert said in diagnosed[:first_table_end].replace("\n", " ")  # under the first table, before the next
    tuned = tune(data, "bm25", params={"k1": "1.0:1.2:0.2", "b": "0.5"}, metric="ndcg@5", folds=2).to_text()
    chunked = rag(data, ["words:4"], ["bm25"], [4, 8]).to_text()
    for text in (diagnosed, tuned, chunked):
        assert said in text.replace("\n", " ") and read_as in text.replace("\n", " ")
    answers = tmp_path / "qa.jsonl"
    answers.write_text(json.dumps({"query_id": "a1", "text": "wing", "answers": ["wing"]}) + "\n")
    by_answers = rag(data, ["words:4"], ["bm25"], [4, 8], answers=answers)
    assert by_answers.provenance.judgments == {} and "Judgments:" not in by_answers.to_text()
