"""Every report says what produced it: one provenance record (rankscope/reporting/provenance.py) in
summary.json, provenance.json beside the CSV files, the report's last section and summary.tex."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core import invocation
from rankscope.core.version import __version__
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import write_trec_run
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from rankscope.workflows.options import Execution
from rankscope.workflows.rag import rag
from rankscope.workflows.tune import tune
from tests.workflows.tiny_collection import DATA, QRELS, QUERIES, TEXTS


def test_dataset_fingerprint_follows_the_content_and_repr_is_short() -> None:
    again = Dataset.from_dicts("tiny", TEXTS, QUERIES, QRELS)
    assert DATA.fingerprint == again.fingerprint and len(DATA.fingerprint) == 64
    changed_grade = Dataset.from_dicts("tiny", TEXTS, QUERIES, {**QRELS, "q1": {"d1": 2, "d6": 1}})
    changed_text = Dataset.from_dicts("tiny", {**TEXTS, "d6": "structural loads on wings"}, QUERIES, QRELS)
    assert len({DATA.fingerprint, changed_grade.fingerprint, changed_text.fingerprint}) == 3
    assert repr(DATA) == "Dataset('tiny', split='test': 6 documents, 3 queries, 6 judgments, 0 warnings)"


def written_record(out: Path) -> dict:
    """provenance.json, checked to be the record summary.json holds too."""
    record = json.loads((out / "provenance.json").read_text())
    assert json.loads((out / "summary.json").read_text())["provenance"] == record
    html = (out / "report.html").read_text()
    assert "<h2>Provenance</h2>" in html and record["dataset"]["fingerprint"] in html
    assert "## Provenance" in (out / "report.md").read_text()
    return record


@pytest.mark.slow
def test_compare_records_full_specs_run_file_checksum_and_settings(tmp_path: Path) -> None:
    run = make_retriever("tfidf").index(DATA.corpus).search(DATA.queries, k=10)
    run_file = tmp_path / "tfidf.run"
    write_trec_run(run, run_file)
    out = tmp_path / "cmp"
    result = compare(
        DATA,
        {"bm25": "bm25:k1=0.9", "mine": run_file},
        ["ndcg@10", "map"],
        out=out,
        execution=Execution(seed=7, test="t"),
    )
    record = written_record(out)
    assert record["workflow"] == "compare" and record["rankscope_version"] == __version__
    assert record["command"] is None  # called from Python
    assert record["dataset"] == {"name": "tiny", "fingerprint": DATA.fingerprint}
    full = make_retriever("bm25:k1=0.9").spec()
    assert record["systems"]["bm25"] == full and "b=0.75" in full and "k1=0.9" in full  # defaults included
    digest = hashlib.sha256(run_file.read_bytes()).hexdigest()
    assert str(run_file) in record["systems"]["mine"] and digest in record["systems"]["mine"]
    assert record["settings"] == {
        "metrics": ["ndcg@10", "map"],
        "baseline": "bm25",
        "test": "t",
        "correction": "holm",
        "alpha": 0.05,
        "seed": 7,
        "depth": None,  # run files are scored as given unless --depth is set
    }
    assert record["created"].endswith("+00:00")
    assert result.to_dict()["provenance"] == record
    deep = compare(DATA, {"bm25": "bm25:k1=0.9", "mine": run_file}, ["map"], depth=5).provenance.to_dict()
    assert deep["settings"]["depth"] == 5
    # the CSV files stay plain tables: pandas reads them with no options
    assert list(pd.read_csv(out / "summary.csv").columns) == ["retriever", "ndcg@10", "map"]
    tex = (out / "summary.tex").read_text()
    assert tex.startswith(f"% rankscope: {__version__}\n") and "% seed: 7\n" in tex
    assert tex.split("\\begin{table}")[0].count("\n") == tex.split("\\begin{table}")[0].count("\n% ") + 1


def test_the_cli_command_line_is_recorded() -> None:
    with invocation.command_line(["compare", "--dataset", "my data"]):
        record = compare(DATA, ["bm25", "tfidf"], ["ndcg@10"]).provenance
    assert record.command == "rankscope compare --dataset 'my data'"
    assert invocation.current() is None  # only inside the block


@pytest.mark.slow
def test_diagnose_tune_and_rag_write_the_same_record(tmp_path: Path) -> None:
    diag = diagnose(DATA, "bm25", vs="tfidf", depth=5, out=tmp_path / "diag", seed=3).provenance.to_dict()
    assert written_record(tmp_path / "diag") == diag
    assert diag["systems"] == {s: make_retriever(s).spec() for s in ("bm25", "tfidf")}
    assert diag["settings"]["depth"] == 5 and diag["settings"]["seed"] == 3 and diag["workflow"] == "diagnose"

    tuned = tune(
        DATA, "bm25", params={"k1": "1.0:1.2:0.2", "b": "0.5"}, folds=2, out=tmp_path / "tune"
    ).provenance.to_dict()
    assert written_record(tmp_path / "tune") == tuned
    assert tuned["systems"] == {"bm25": make_retriever("bm25").spec()}
    assert tuned["settings"]["grid"] == {"bm25": {"k1": [1.0, 1.2], "b": [0.5]}}
    assert tuned["settings"]["folds"] == 2 and tuned["settings"]["metric"] == "ndcg@10"

    chunked = rag(
        DATA, ["words:3"], ["bm25"], [5], out=tmp_path / "rag", execution=Execution(test="t")
    ).provenance.to_dict()
    assert written_record(tmp_path / "rag") == chunked
    assert chunked["settings"]["chunkings"] == ["whole", "words:3:0"] and chunked["settings"]["budgets"] == [5]
    assert chunked["dataset"]["fingerprint"] == DATA.fingerprint


@pytest.mark.parametrize("workflow", ["compare", "diagnose"])
def test_results_repr_in_one_line(workflow: str) -> None:
    result = compare(DATA, ["bm25", "tfidf"], ["ndcg@10"]) if workflow == "compare" else diagnose(DATA, "bm25")
    text = repr(result)
    assert "\n" not in text and len(text) < 200 and "tiny" in text
