"""``rankscope search`` end to end on Cranfield: the file equals the in-process run; indexes are reused safely."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora import load_dataset
from rankscope.retrieval.bm25 import BM25


@pytest.fixture(scope="module")
def cranfield(data_dir: Path):
    return data_dir / "cranfield", load_dataset(str(data_dir / "cranfield"))


@pytest.mark.slow
def test_search_writes_the_run_and_reuses_the_index(cranfield, tmp_path: Path, capsys) -> None:
    from rankscope.corpora.trec import read_trec_run

    folder, dataset = cranfield
    args = ["search", "--dataset", str(folder), "--retriever", "bm25:k1=0.9,b=0.4", "--k", "5"]
    index_dir = tmp_path / "idx"
    assert main([*args, "--out", str(tmp_path / "a.trec"), "--index-dir", str(index_dir)]) == 0
    expected = BM25(k1=0.9, b=0.4).index(dataset.corpus).search(dataset.queries, k=5)
    written = read_trec_run(tmp_path / "a.trec")
    pd.testing.assert_frame_equal(
        written.sort_values(["query_id", "rank"]).reset_index(drop=True)[["query_id", "doc_id", "rank"]],
        expected.sort_values(["query_id", "rank"]).reset_index(drop=True)[["query_id", "doc_id", "rank"]],
    )
    assert (index_dir / "meta.json").is_file()

    # second call loads the saved index and writes the same file
    assert main([*args, "--out", str(tmp_path / "b.trec"), "--index-dir", str(index_dir)]) == 0
    assert (tmp_path / "b.trec").read_text() == (tmp_path / "a.trec").read_text()

    # new weighting parameters re-weight the saved counts: the same file as a fresh index with them
    capsys.readouterr()
    reweighted = ["search", "--dataset", str(folder), "--retriever", "bm25:k1=1.2", "--k", "5"]
    assert main([*reweighted, "--out", str(tmp_path / "r.trec"), "--index-dir", str(index_dir)]) == 0
    assert "re-weighted for k1=1.2,b=0.75 (no re-tokenising)" in capsys.readouterr().err
    assert main([*reweighted, "--out", str(tmp_path / "fresh.trec")]) == 0
    assert (tmp_path / "r.trec").read_text() == (tmp_path / "fresh.trec").read_text()
    assert (tmp_path / "r.trec").read_text() != (tmp_path / "a.trec").read_text()

    # another kind or another analysis on that index is refused, not answered with the old counts
    for spec in ("tfidf", "bm25:k1=0.9,b=0.4,analyzer=english-nostem"):
        other = ["search", "--dataset", str(folder), "--retriever", spec, "--out", str(tmp_path / "c.trec")]
        assert main([*other, "--index-dir", str(index_dir)]) == 2
        assert "was built as bm25:" in capsys.readouterr().err

    # an index of another corpus is refused
    source = json.loads((index_dir / "source.json").read_text())
    (index_dir / "source.json").write_text(json.dumps({**source, "doc_ids_sha256": "0" * 64}))
    assert main([*args, "--out", str(tmp_path / "d.trec"), "--index-dir", str(index_dir)]) == 2
    assert "another corpus" in capsys.readouterr().err
    assert not (tmp_path / "c.trec").exists() and not (tmp_path / "d.trec").exists()

    # a damaged source.json is a one-line error naming it, not a JSON traceback
    for damaged, fragment in (("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object")):
        (index_dir / "source.json").write_text(damaged)
        assert main([*args, "--out", str(tmp_path / "e.trec"), "--index-dir", str(index_dir)]) == 2
        err = capsys.readouterr().err
        assert "source.json" in err and fragment in err


def test_unknown_retriever_is_a_one_line_error(cranfield, tmp_path: Path, capsys) -> None:
    folder, _ = cranfield
    assert main(["search", "--dataset", str(folder), "--retriever", "bm26", "--out", str(tmp_path / "r")]) == 2
    assert "unknown retriever 'bm26'; did you mean 'bm25'?; known: " in capsys.readouterr().err


def test_search_says_what_it_wrote(cranfield, tmp_path: Path, capsys) -> None:
    folder, _ = cranfield
    out = tmp_path / "run.trec"
    assert main(["search", "--dataset", str(folder), "--retriever", "bm25", "--k", "7", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    rows = len(out.read_text().splitlines())
    assert rows == 225 * 7
    assert said.startswith(f"wrote {rows:,} rows for 225 queries (top 7) to {out} in ")
    assert said.rstrip().endswith(
        "[bm25:variant=lucene,k1=1.5,b=0.75,delta=None,epsilon=0.25,analyzer=english,prf=none,fb_docs=None,fb_terms=None,weight=None]"
    )


def test_ad_hoc_query_prints_the_top_results_with_snippets(cranfield, capsys) -> None:
    folder, dataset = cranfield
    text = "boundary layer transition"
    args = ["search", "--dataset", str(folder), "--retriever", "bm25", "--query", text, "--k", "3"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = BM25().index(dataset.corpus).search(text, k=3)
    assert lines[0] == f"query 1: {text}"
    shown = [line.split()[:2] for line in lines[1::2]]  # rank and doc id of each result line
    assert shown == [[str(r), d] for r, d in zip(expected["rank"], expected["doc_id"])]
    assert all("[transition]" in line or "[boundary]" in line for line in lines[2::2])


def test_search_needs_exactly_one_of_out_and_query(cranfield, capsys) -> None:
    folder, _ = cranfield
    assert main(["search", "--dataset", str(folder), "--retriever", "bm25"]) == 2
    assert "give --out FILE" in capsys.readouterr().err


def test_index_command_builds_what_search_reuses(cranfield, tmp_path: Path, capsys) -> None:
    """rankscope index (a corpus file, a tiny budget, two workers) -> search --index-dir reuses it and
    writes the file an in-memory search writes; a bad size or retriever is a one-line error."""
    folder, dataset = cranfield
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"doc_id": d, "title": t, "text": x}) + "\n"
            for d, t, x in zip(dataset.corpus["doc_id"], dataset.corpus["title"], dataset.corpus["text"])
        ),
        encoding="utf-8",
    )
    index_dir = tmp_path / "idx"
    build = [
        "index",
        "--corpus",
        str(corpus),
        "--index-dir",
        str(index_dir),
        "--memory-budget",
        "64K",
        "--workers",
        "2",
    ]
    assert main(build) == 0
    assert capsys.readouterr().out.startswith(f"indexed {len(dataset.corpus):,} documents")
    search = ["search", "--dataset", str(folder), "--retriever", "bm25", "--k", "20"]
    assert main([*search, "--out", str(tmp_path / "reused.trec"), "--index-dir", str(index_dir)]) == 0
    assert main([*search, "--out", str(tmp_path / "fresh.trec")]) == 0
    assert (tmp_path / "reused.trec").read_text() == (tmp_path / "fresh.trec").read_text()
    capsys.readouterr()
    assert main([*build[:-4], "--memory-budget", "2X"]) == 2
    assert "--memory-budget must be a positive size such as 512M or 2G, got '2X'" in capsys.readouterr().err
    assert main([*build[:-4], "--retriever", "w2v"]) == 2
    assert "only term-count indexes (bm25, tfidf)" in capsys.readouterr().err
