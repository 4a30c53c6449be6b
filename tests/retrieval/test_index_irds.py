"""``rankscope index --dataset irds:NAME``: an ir_datasets collection's documents streamed from its
docs_iter into the bounded-memory index (a 40 kB budget, so several spills, two workers) give the index,
file for file, and the run that the in-memory path (``search --dataset irds:NAME --index-dir``) gives."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from rankscope.cli import main
from rankscope.core.notices import set_verbose
from rankscope.retrieval.saved_index import index_alone
from rankscope.retrieval.storage import load_index
from tests.corpora.irds_local import cisi_in_irds
from tests.needs import needs

pytestmark = needs("ir_datasets")


@pytest.fixture
def irds_cisi(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    monkeypatch.setenv("RANKSCOPE_QUIET", "1")
    return "irds:" + cisi_in_irds(data_dir, tmp_path)[0]


@pytest.mark.slow
def test_a_streamed_irds_index_equals_the_in_memory_one(irds_cisi: str, tmp_path: Path, capsys) -> None:
    streamed, in_memory = tmp_path / "streamed", tmp_path / "in-memory"
    build = ["index", "--dataset", irds_cisi, "--index-dir", str(streamed), "--memory-budget", "40K", "--workers", "2"]
    assert main(build) == 0
    assert capsys.readouterr().out.startswith("indexed 1,460 documents")
    search = ["search", "--dataset", irds_cisi, "--retriever", "bm25", "--k", "100"]
    assert main([*search, "--index-dir", str(in_memory), "--out", str(tmp_path / "in-memory.trec")]) == 0
    (meta_a, arrays_a), (meta_b, arrays_b) = load_index(streamed, "bm25"), load_index(in_memory, "bm25")
    assert meta_a["checksums"] == meta_b["checksums"]  # byte for byte the same files
    for name in arrays_b:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)
    stamp = (streamed / "meta.json").stat().st_mtime_ns
    assert main([*search, "--index-dir", str(streamed), "--out", str(tmp_path / "streamed.trec")]) == 0
    assert (streamed / "meta.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert (tmp_path / "streamed.trec").read_text() == (tmp_path / "in-memory.trec").read_text()
    capsys.readouterr()
    assert main(["search", "--index-dir", str(streamed), "--query", "information retrieval systems"]) == 0
    shown = capsys.readouterr().out
    assert "(text not found" not in shown and "[retrieval]" in shown  # titles and snippets streamed from irds


def test_fields_and_sources_are_checked_in_one_line(irds_cisi: str, tmp_path: Path, capsys) -> None:
    base = ["index", "--index-dir", str(tmp_path / "idx")]
    cases = [
        ([*base, "--dataset", irds_cisi, "--fields", "corpus.text=body"], "have no field 'body'; they have doc_id"),
        ([*base, "--dataset", irds_cisi, "--fields", "queries.text=text"], "--fields: index reads documents only"),
        ([*base, "--dataset", "cisi"], "index streams the documents of an ir_datasets collection (irds:NAME)"),
        ([*base, "--dataset", "irds:no-such/set"], "ir_datasets knows no dataset 'no-such/set'"),
        ([*base, "--corpus", str(tmp_path / "c.jsonl"), "--fields", "corpus.text=x"], "--fields picks an ir_datasets"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "idx").exists()
    assert main([*base, "--dataset", irds_cisi, "--fields", "corpus.text=title", "--memory-budget", "1M"]) == 0
    assert "indexed 1,460 documents" in capsys.readouterr().out
    assert json.loads((tmp_path / "idx" / "source.json").read_text())["fields"] == {"text": "title"}
    shown = index_alone(tmp_path / "idx", None)[1]({"1", "2"})  # snippets read from the fields indexed
    assert shown["text"].tolist() == shown["title"].tolist() and len(shown) == 2 and shown["text"].str.len().min() > 0


def test_the_documents_are_read_once_from_docs_iter(irds_cisi: str, tmp_path: Path, monkeypatch) -> None:
    from ir_datasets.datasets.beir import BeirDocs

    passes: list[int] = []
    reading = BeirDocs.docs_iter

    def counted(self):  # each pass of ir_datasets' reader, and the documents it handed out
        passes.append(0)
        for document in reading(self):
            passes[-1] += 1
            yield document

    monkeypatch.setattr(BeirDocs, "docs_iter", counted)
    argv = ["index", "--dataset", irds_cisi, "--index-dir", str(tmp_path / "idx"), "--memory-budget", "40K"]
    assert main([*argv, "--workers", "1"]) == 0
    assert passes == [1460]  # one pass, every document once


def test_an_index_of_other_fields_is_not_reused(irds_cisi: str, tmp_path: Path, capsys) -> None:
    idx = tmp_path / "idx"
    built = ["index", "--dataset", irds_cisi, "--index-dir", str(idx), "--fields", "corpus.text=title"]
    assert main([*built, "--workers", "1"]) == 0
    stamp = (idx / "meta.json").stat().st_mtime_ns
    search = ["search", "--dataset", irds_cisi, "--retriever", "bm25", "--index-dir", str(idx)]
    capsys.readouterr()
    assert main([*search, "--out", str(tmp_path / "run.trec")]) == 2  # the same ids, other texts
    assert capsys.readouterr().err.splitlines() == [  # ir_datasets' own lines left out (it built its docstore here)
        f"rankscope search: error: {idx}: index was built from the corpus fields {{'text': 'title'}}, not the "
        "default corpus fields (--fields); use a new --index-dir"
    ]
    assert main([*search, "--fields", "corpus.text=title", "--out", str(tmp_path / "run.trec")]) == 0
    assert (idx / "meta.json").stat().st_mtime_ns == stamp  # the same fields: reused, not rebuilt


def test_a_bad_field_or_dataset_is_rankscopes_line_alone(irds_cisi: str, tmp_path: Path, capsys) -> None:
    """ir_datasets' INFO lines ("[INFO] [starting] building docstore") do not come before rankscope's one line:
    every field is checked before a record is read, and its lines below WARNING are left out while rankscope
    calls it, which --verbose shows; its logger is left as it was after each call."""
    search = ["search", "--retriever", "bm25", "--out", str(tmp_path / "run.trec"), "--dataset"]
    name = irds_cisi.removeprefix("irds:")
    cases = [
        (
            [*search, irds_cisi, "--fields", "queries.text=body"],
            f"irds:{name}: its queries (GenericQuery) have no field",
        ),
        (
            [*search, irds_cisi, "--fields", "corpus.text=body"],
            f"irds:{name}: its documents (BeirTitleDoc) have no field",
        ),
        ([*search, "irds:no-such/set"], "irds:no-such/set: ir_datasets knows no dataset 'no-such/set'"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.splitlines()[0].startswith(f"rankscope search: error: {message}") and err.count("\n") == 1, err
    assert main([*search, irds_cisi]) == 0
    assert "[INFO]" not in capsys.readouterr().err  # ir_datasets opened its docstore: not said
    try:
        assert main(["--verbose", *search, irds_cisi]) == 0
    finally:
        set_verbose(False)
    assert "[INFO] Opening " in capsys.readouterr().err  # asked for: ir_datasets' own lines
    assert logging.getLogger("ir_datasets").filters == []
