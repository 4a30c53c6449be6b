"""The ways in without a full collection (issue 29 items 4 and 9): ``search`` with an index alone
(its source.json names the corpus) or a queries file, ``rag --answers`` on a folder holding a
corpus and questions but no judgments, and ``--split`` for BEIR folders with only ``dev``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.corpora.beir import write_beir
from rankscope.corpora.trec import read_trec_run
from rankscope.reporting.tables import to_json
from tests.workflows.tiny_collection import QUERIES, TEXTS, small_dataset


def _corpus_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": d, "title": f"title {d}", "text": t}) + "\n" for d, t in TEXTS.items()))
    return path


def test_search_with_an_index_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus_file(tmp_path / "data")
    index = tmp_path / "idx"
    assert main(["--quiet", "index", "--corpus", str(corpus), "--index-dir", str(index)]) == 0
    capsys.readouterr()
    assert main(["search", "--index-dir", str(index), "--query", "boundary layer plate", "--k", "2"]) == 0
    shown = capsys.readouterr().out.splitlines()
    frame = pd.DataFrame({"doc_id": list(TEXTS), "title": [f"title {d}" for d in TEXTS], "text": list(TEXTS.values())})
    expected = rs.make_retriever("bm25").index(frame).search(["boundary layer plate"], k=2)
    top = expected.iloc[0]
    assert shown[1].split()[:3] == ["1", top["doc_id"], f"{top['score']:.4f}"]  # rank, document, score
    assert f"title {top['doc_id']}" in shown[1] and "[boundary] [layer]" in shown[2]  # title and snippet from the file
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    out = tmp_path / "run.trec"
    assert main(["search", "--index-dir", str(index), "--queries", str(queries), "--out", str(out), "--k", "3"]) == 0
    written = read_trec_run(out)
    run = (
        rs.make_retriever("bm25").index(frame).search(pd.DataFrame(QUERIES.items(), columns=["query_id", "text"]), k=3)
    )
    pd.testing.assert_frame_equal(
        written[["query_id", "doc_id", "rank"]].reset_index(drop=True), run[["query_id", "doc_id", "rank"]]
    )
    assert main(["search", "--index-dir", str(index), "--out", str(out)]) == 2  # no queries: said in one line
    assert "--queries FILE" in capsys.readouterr().err


def test_rag_with_answers_and_no_judgments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "qa"
    _corpus_file(folder)
    questions = folder / "questions.jsonl"
    questions.write_text(
        json.dumps({"query_id": "q1", "text": "supersonic heat", "answers": ["supersonic"]})
        + "\n"
        + json.dumps({"query_id": "q2", "text": "wing loads", "answers": ["structural loads"]})
        + "\n"
    )
    argv = ["--quiet", "rag", "--dataset", str(folder), "--answers", str(questions), "--chunking", "words:4:0"]
    assert main([*argv, "--budget", "10", "--retrievers", "bm25", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    direct = rs.rag(
        rs.Dataset.corpus_only(
            pd.DataFrame({"doc_id": list(TEXTS), "title": [f"title {d}" for d in TEXTS], "text": list(TEXTS.values())}),
            "qa",
        ),
        ["words:4:0"],
        ["bm25"],
        [10],
        questions,
    )
    assert printed["mean"] == json.loads(to_json(direct.to_dict()))["mean"]  # the same numbers as in Python
    assert main(["rag", "--dataset", str(folder), "--budget", "10"]) == 2  # without answers judgments are needed
    assert "no judgments" in capsys.readouterr().err


def test_split_on_a_beir_folder_with_only_dev(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = small_dataset()
    write_beir(data, tmp_path / "beir")
    (tmp_path / "beir" / "qrels" / "test.tsv").rename(tmp_path / "beir" / "qrels" / "dev.tsv")
    argv = [
        "--quiet",
        "compare",
        "--dataset",
        str(tmp_path / "beir"),
        "--retrievers",
        "bm25",
        "tfidf",
        "--format",
        "json",
    ]
    assert main(argv) == 2
    assert "splits found: ['dev'] (choose one with --split NAME" in capsys.readouterr().err
    assert main([*argv, "--split", "dev"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = rs.compare(rs.load_dataset(tmp_path / "beir", split="dev"), ["bm25", "tfidf"])
    assert printed["mean"]["bm25"] == pytest.approx(expected.summary.loc["bm25"].to_dict(), abs=1e-12)
    out = tmp_path / "run.trec"
    assert (
        main(
            ["search", "--dataset", str(tmp_path / "beir"), "--split", "dev", "--retriever", "bm25", "--out", str(out)]
        )
        == 0
    )
    assert set(read_trec_run(out)["query_id"]) == set(data.queries["query_id"])
