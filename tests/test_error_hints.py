"""Errors that name the likely cause (issue 29 item 12): swapped QRELS and RUN, a collection folder
missing one of its files, and "did you mean" for collections and retrievers as for metrics (one
helper, rankscope.core.suggest)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.core.suggest import did_you_mean
from rankscope.corpora import load_dataset
from rankscope.retrieval.registry import make_retriever

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.4 tag\n"


def test_swapped_qrels_and_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    assert main(["evaluate", str(tmp_path / "run.trec"), str(tmp_path / "qrels.txt")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "line 1" in error
    assert error.endswith("this looks like a run file (a TREC run); did you swap QRELS and RUN?")
    assert main(["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "qrels.txt")]) == 2  # qrels as the run
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("this looks like a qrels file (TREC qrels); did you swap QRELS and RUN?")
    )
    (tmp_path / "bad.txt").write_text("q1 d1\n")  # neither: no guess
    assert main(["evaluate", str(tmp_path / "bad.txt"), str(tmp_path / "run.trec")]) == 2
    assert "did you swap" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            ["queries.jsonl", "qrels/test.tsv"],
            "has queries.jsonl, qrels/ but no corpus.jsonl (or corpus.tsv / corpus.csv)",
        ),
        (
            ["corpus.jsonl", "queries.jsonl"],
            "has corpus.jsonl, queries.jsonl but no judgments: qrels/<split>.tsv (BEIR)",
        ),
        (["corpus.jsonl", "qrels/test.tsv"], "no queries.jsonl"),
    ],
)
def test_a_folder_missing_a_file_names_it(tmp_path: Path, files: list[str], message: str) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    with pytest.raises((RankscopeError, FileNotFoundError)) as caught:  # the CLI prints either in one line
        load_dataset(tmp_path)
    assert message in str(caught.value) and "cannot tell the format" not in str(caught.value)


def test_did_you_mean_for_collections_and_retrievers() -> None:
    with pytest.raises(RankscopeError, match=r"'cransfield' is neither .*; did you mean 'cranfield'\?"):
        load_dataset("cransfield")
    with pytest.raises(RankscopeError, match=r"unknown retriever 'tfdif'; did you mean 'tfidf'\?; known: "):
        make_retriever("tfdif")
    with pytest.raises(RankscopeError, match=r"did you mean 'tfidf'\?"):  # before compare's count of systems
        rs.compare("cranfield", ["tfdif"])
    assert did_you_mean("zzzz", ["bm25", "tfidf"]) == ""  # nothing close: no guess
