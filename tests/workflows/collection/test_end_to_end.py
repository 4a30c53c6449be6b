"""The issue's end-to-end run, in one test: about 200 real files on this machine (Debian's /usr/share/doc
pages and the standard library's pydoc text, plus a PDF made from one), 20 questions from a file, a pool
of bm25 and dense:model=model2vec at depth 10, a sample of 60, 60 labels entered through the running
page's own requests by this script, export, and compare --dataset DIR on the result."""

from __future__ import annotations

import json
import pydoc
import re
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.load import load_dataset
from rankscope.evaluation.engine import evaluate
from rankscope.retrieval.registry import make_retriever
from tests.needs import needs
from tests.workflows.collection.files import STDLIB, debian_folders, stdlib_docs

pytestmark = [needs("model2vec", "httpx"), pytest.mark.slow]


def questions(folder: Path) -> tuple[Path, dict[str, str]]:
    """20 questions: the one-line summary pydoc gives of 20 modules (``heapq - Heap queue algorithm``),
    each written as a question; the module each asks about is its answer."""
    lines, answers = [], {}
    for name in STDLIB:
        summary = pydoc.splitdoc(pydoc.getdoc(pydoc.locate(name)))[0].rstrip(".")
        if summary and len(lines) < 20:  # some modules (json, pathlib) have no one-line summary
            lines.append(f"Which module provides: {summary}?")
            answers[f"q{len(lines)}"] = name
    assert len(lines) == 20
    path = folder / "questions.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, answers


def label_through_the_page(url: str, answers: dict[str, str]) -> list[tuple[str, str, int]]:
    """Label every pair the page shows, through its own requests (the token read from the page): 3 when the
    document is the module's own page, 1 when some query word is marked in it, else 0."""
    given = []
    import httpx

    with httpx.Client(base_url=url, timeout=60) as client:
        token = re.search(r'name="rankscope-token" content="([^"]+)"', client.get("/").text).group(1)
        state = client.get("/api/state").json()
        while state["pair"] is not None:
            pair = state["pair"]
            own = pair["source"].endswith(f"/stdlib/{answers[pair['query_id']]}.txt")
            grade = 3 if own else 1 if pair["spans"] else 0
            body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": grade, "seconds": 1.0}
            response = client.post("/api/label", json=body, headers={"X-Token": token})
            assert response.status_code == 200, response.text
            given.append((pair["query_id"], pair["doc_id"], grade))
            state = response.json()
    return given


def test_a_folder_becomes_a_collection_compare_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    debian = debian_folders(160)
    stdlib_docs(tmp_path / "stdlib")
    path, answers = questions(tmp_path)
    folder = tmp_path / "collection"
    argv = ["--quiet", "collection", "init", str(folder), "--docs", *map(str, debian), str(tmp_path / "stdlib")]
    assert main([*argv, "--queries", str(path)]) == 0
    state = json.loads((folder / "ingest.json").read_text())
    assert len(state["files"]) + len(state["unreadable"]) >= 200
    assert (
        main(
            [
                "--quiet",
                "collection",
                "pool",
                str(folder),
                "--systems",
                "bm25",
                "dense:model=model2vec",
                "--depth",
                "10",
            ]
        )
        == 0
    )
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype=str)
    assert set(pool["system"]) == {"bm25", "dense:model=model2vec"} and pool["query_id"].nunique() == 20
    assert main(["--quiet", "collection", "sample", str(folder), "--budget", "60", "--seed", "0"]) == 0
    capsys.readouterr()
    command = [sys.executable, "-m", "rankscope.cli", "label", str(folder), "--name", "tester", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = next(m.group(1) for line in server.stdout if (m := re.search(r"open (http://\S+)/ ", line)))
        given = label_through_the_page(url, answers)
    finally:
        server.terminate()
        server.wait()
    assert len(given) == 60
    assert main(["collection", "export", str(folder)]) == 0
    assert "60 judged pairs" in capsys.readouterr().out
    provenance = json.loads((folder / "collection.json").read_text())
    assert provenance["labels"] == {"human:tester": 60} and provenance["sample"]["budget"] == 60
    out = tmp_path / "compare"
    argv = ["--quiet", "compare", "--dataset", str(folder), *"--retrievers bm25 tfidf --metrics ndcg@10".split()]
    argv += ["--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    summary = pd.read_csv(out / "summary.csv", index_col=0)
    data = load_dataset(folder)
    assert len(data.qrels) == 60 and sorted(
        zip(data.qrels["query_id"], data.qrels["doc_id"], data.qrels["relevance"])
    ) == sorted(given)
    run = make_retriever("bm25").index(data.corpus).search(data.queries, k=1000)
    expected = evaluate(data.qrels, run, ["ndcg@10"]).mean["ndcg@10"]
    assert summary.loc["bm25", "ndcg@10"] == pytest.approx(expected, abs=1e-9)
    print(f"end to end: {len(state['files'])} files read, {len(given)} labels, bm25 ndcg@10 {expected:.4f}")
