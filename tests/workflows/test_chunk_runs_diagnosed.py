"""A RAG system's run diagnosed (issue 29 item 5): rag writes the chunk table it used, and a chunk
run (ids ``DOC#N``) given to compare or diagnose is scored per document by MaxP, said in the output."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.corpora.chunking import chunk_corpus
from rankscope.corpora.trec import read_trec_run
from rankscope.evaluation.chunk_runs import aggregate_run
from tests.workflows.tiny_collection import small_dataset

CHUNKING = "words:5:1"


@pytest.fixture(scope="module")
def rag_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rag") / "out"
    rs.rag(small_dataset(), [CHUNKING], ["bm25"], [20, 40], out=out)
    return out


def test_rag_writes_the_chunk_table_it_used(rag_folder: Path) -> None:
    table = pd.read_csv(rag_folder / "chunk_table.words_5_1.csv", dtype={"chunk_id": str, "doc_id": str})
    expected = chunk_corpus(small_dataset().corpus, CHUNKING)
    assert list(table.columns) == ["chunk_id", "doc_id", "position", "start", "end", "tokens"]
    pd.testing.assert_frame_equal(table, expected[list(table.columns)])
    run = read_trec_run(rag_folder / "run.words_5_1_bm25.trec")
    assert run["doc_id"].isin(table["chunk_id"]).all()  # every id of the run is in the table


def test_a_chunk_run_is_scored_per_document_by_maxp(rag_folder: Path) -> None:
    data = small_dataset()
    path = rag_folder / "run.words_5_1_bm25.trec"
    documents = aggregate_run(read_trec_run(path), chunk_corpus(data.corpus, CHUNKING), "maxp")
    given = rs.compare(data, {"chunks": path, "maxp": documents}, ["ndcg@10", "map"])
    assert given.summary.loc["chunks"].to_dict() == given.summary.loc["maxp"].to_dict()
    assert given.summary.loc["chunks", "map"] > 0
    assert "scored per document by MaxP" in given.systems.loc["chunks", "notes"]
    diagnosed = rs.diagnose(data, path, depth=20)
    assert "MaxP" in diagnosed.to_text()
