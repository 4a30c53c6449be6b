"""``rankscope datasets export``: a collection as BEIR files + TREC qrels, searched and scored by the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.export import export_dataset
from rankscope.corpora.load import load_dataset, load_folder
from rankscope.corpora.trec import read_trec_qrels

METRICS = ["ndcg@10", "recall@100", "mrr@10", "map"]


def small() -> Dataset:
    return Dataset(
        name="small",
        corpus=pd.DataFrame({"doc_id": ["d1", "d2"], "title": ["A", ""], "text": ["first\ntext", 'say "x"']}),
        queries=pd.DataFrame({"query_id": ["q1", "q2"], "text": ["first", "x"]}),
        qrels=pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d2"], "relevance": [2, -1, 1]}),
    )


def test_export_reads_back_as_the_same_tables(tmp_path: Path) -> None:
    data = small()
    files = export_dataset(data, tmp_path / "out")
    assert [f.relative_to(tmp_path / "out").as_posix() for f in files] == [
        "corpus.jsonl",
        "queries.jsonl",
        "qrels/test.tsv",
        "qrels.txt",
    ]
    back = load_folder(tmp_path / "out")
    pd.testing.assert_frame_equal(back.corpus, data.corpus)
    pd.testing.assert_frame_equal(back.queries, data.queries)
    pd.testing.assert_frame_equal(back.qrels, data.qrels)
    pd.testing.assert_frame_equal(read_trec_qrels(tmp_path / "out" / "qrels.txt"), data.qrels)
    assert (tmp_path / "out" / "qrels.txt").read_text() == "q1 0 d1 2\nq1 0 d2 -1\nq2 0 d2 1\n"


def test_export_refuses_a_folder_with_files_and_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep me")
    with pytest.raises(Exception, match="the folder is not empty"):
        export_dataset(small(), tmp_path / "full")
    assert (tmp_path / "full" / "mine.txt").read_text() == "keep me"
    assert main(["datasets", "export", "cranfield"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rankscope datasets: error: usage: rankscope datasets export NAME --out DIR (one collection name or folder)"
    )
    assert main(["datasets", "--out", str(tmp_path / "x")]) == 2
    assert "--out, --fields and --split go with 'rankscope datasets export NAME --out DIR'" in capsys.readouterr().err


def test_export_maps_a_folders_columns_with_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "corpus.csv").write_text("pid,passage\n7,rocket engine\n8,jet wing\n")
    (mine / "queries.tsv").write_text("1\trocket\n")  # headerless id<TAB>text
    (mine / "qrels").write_text("1 0 7 1\n")
    fields = "corpus.doc_id=pid,corpus.text=passage"
    assert main(["datasets", "export", str(mine), "--out", str(tmp_path / "out"), "--fields", fields]) == 0
    back = load_folder(tmp_path / "out")
    assert back.corpus.values.tolist() == [["7", "", "rocket engine"], ["8", "", "jet wing"]]
    assert back.queries.values.tolist() == [["1", "rocket"]]


@pytest.mark.slow
def test_search_then_evaluate_on_an_exported_collection_gives_compare_numbers(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The must-show round trip: CLI users go export -> search -> evaluate on a built-in collection."""
    from rankscope.workflows.compare import compare

    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    folder = tmp_path / "cranfield"
    assert main(["datasets", "export", "cranfield", "--out", str(folder)]) == 0
    assert "wrote cranfield: 1400 documents, 225 queries, 1837 judgments" in capsys.readouterr().out
    runs = {spec: tmp_path / f"{spec}.trec" for spec in ("bm25", "tfidf")}
    for spec, run in runs.items():
        assert main(["search", "--dataset", str(folder), "--retriever", spec, "--out", str(run)]) == 0
    capsys.readouterr()
    args = ["evaluate", str(folder / "qrels.txt"), *map(str, runs.values()), "--format", "json"]
    assert main([*args, *(f"-m{m}" for m in METRICS)]) == 0
    exported = json.loads(capsys.readouterr().out)["runs"]
    original = compare(load_dataset("cranfield"), list(runs), METRICS).summary
    for spec, run in runs.items():
        assert exported[str(run)]["mean"] == pytest.approx(original.loc[spec, METRICS].to_dict(), abs=1e-12)
    assert exported[str(runs["bm25"])]["mean"]["ndcg@10"] == pytest.approx(0.3838, abs=5e-5)  # README's numbers
    assert exported[str(runs["tfidf"])]["mean"]["ndcg@10"] == pytest.approx(0.3731, abs=5e-5)
