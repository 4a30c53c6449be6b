"""Issue 42's path from a folder to a decision, whole: real texts of this machine (Debian's /usr/share/doc
packages, a README.Debian, a NEWS.Debian.gz and a gzipped README.*.gz among them, and the standard library's
pydoc HTML pages), a questions file, init, pool, ``collection judge`` with the stub judge (a real HTTP
server on 127.0.0.1), sample, labels posted through the running labelling page, export, compare and
diagnose: every question is in compare's and diagnose's tables, the judge's agreement with people is
written, and no question is left out."""

from __future__ import annotations

import json
import pydoc
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.judging.stub_server import StubServer
from rankscope.workflows.collection.makeup import NOT_MEASURED
from tests.needs import needs
from tests.workflows.collection.files import STDLIB, debian_folders, debian_texts

pytestmark = [needs("httpx", "bs4"), pytest.mark.slow]

MODULES = STDLIB[:12]


def pydoc_pages(folder: Path) -> None:
    """The standard library's pydoc HTML page of each of :data:`MODULES`."""
    folder.mkdir()
    for name in MODULES:
        module = pydoc.locate(name)
        (folder / f"{name}.html").write_text(pydoc.html.page(pydoc.describe(module), pydoc.html.document(module, name)))


def questions(path: Path) -> dict[str, str]:
    """One question a module, from pydoc's one-line summary where it has one (``heapq - Heap queue
    algorithm``), else its name; the module's page is its answer."""
    lines = []
    for name in MODULES:
        summary = pydoc.splitdoc(pydoc.getdoc(pydoc.locate(name)))[0].rstrip(".")
        lines.append(f"What does the {name} module do: {summary}?" if summary else f"How do I use {name}?")
    path.write_text("\n".join(lines) + "\n")
    return {f"q{i}": name for i, name in enumerate(MODULES, 1)}


def graded(request: object) -> str:
    """The stub judge: 3 when the document is the asked module's own page, 1 when it names the module, else 0."""
    prompt = request.prompt  # type: ignore[attr-defined]
    module = re.search(r"the (\S+) module do|use (\S+)\?", prompt)
    name = next(group for group in module.groups() if group) if module else ""
    own = f"{name} (version" in prompt or f"index of {name}" in prompt.lower()
    return f"Final score: {3 if own else 1 if name and name in prompt.split('Document', 1)[-1] else 0}"


def label_through_the_page(folder: Path) -> list[tuple[str, str, int]]:
    """Run ``rankscope label`` as a user would and post a grade for every pair it shows, with the page's
    token: 2 when some query word is marked in the document, else 0."""
    import httpx

    command = [sys.executable, "-m", "rankscope.cli", "label", str(folder), "--name", "tester", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    given = []
    try:
        assert server.stdout is not None
        url = next(m.group(1) for line in server.stdout if (m := re.search(r"open (http://\S+)/ ", line)))
        with httpx.Client(base_url=url, timeout=60) as client:
            token = re.search(r'name="rankscope-token" content="([^"]+)"', client.get("/").text).group(1)
            state = client.get("/api/state").json()
            while state["pair"] is not None:
                pair = state["pair"]
                grade = 2 if pair["spans"] else 0
                body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": grade, "seconds": 1.0}
                response = client.post("/api/label", json=body, headers={"X-Token": token})
                assert response.status_code == 200, response.text
                given.append((pair["query_id"], pair["doc_id"], grade))
                state = response.json()
    finally:
        server.terminate()
        server.wait()
    return given


def test_from_a_folder_to_compare_and_diagnose_with_a_judge_and_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for folder in debian_folders(60):
        shutil.copytree(folder, docs / folder.name, symlinks=True)
    for path in debian_texts().values():  # README.Debian, NEWS.Debian.gz, README.*.gz: read by content
        (docs / "unknown-suffixes" / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, docs / "unknown-suffixes" / path.parent.name / path.name)
    pydoc_pages(docs / "pydoc")
    answers = questions(tmp_path / "questions.txt")
    folder = tmp_path / "collection"
    assert (
        main(
            [
                "--quiet",
                "collection",
                "init",
                str(folder),
                "--docs",
                str(docs),
                "--queries",
                str(tmp_path / "questions.txt"),
            ]
        )
        == 0
    )
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    sources = {Path(row["source"]).name for row in corpus}
    assert {path.name for path in debian_texts().values()} <= sources and f"{MODULES[0]}.html" in sources
    assert main(["--quiet", "collection", "pool", str(folder), "--systems", "bm25", "tfidf", "--depth", "5"]) == 0
    pool = pd.read_csv(folder / "pool.tsv", sep="\t", dtype=str)
    pairs = len(pool[["query_id", "doc_id"]].drop_duplicates())
    assert set(pool["query_id"]) == set(answers)
    capsys.readouterr()
    with StubServer(reply=graded) as server:  # judged before anyone labels
        spec = f"openai:model=stub,base_url={server.url}"
        assert main(["--quiet", "collection", "judge", str(folder), "--judge", spec]) == 0
        assert len(server.requests) == pairs
    assert f"labelled the pool: {pairs} pairs of {len(answers)} questions" in capsys.readouterr().out
    assert main(["--quiet", "collection", "sample", str(folder), "--budget", "24", "--seed", "0"]) == 0
    given = label_through_the_page(folder)
    assert len(given) == 24
    capsys.readouterr()
    assert main(["collection", "export", str(folder)]) == 0
    out = capsys.readouterr().out
    assert NOT_MEASURED not in out and "agreement people and judges: kappa" in out and "questions left out: 0" in out
    provenance = json.loads((folder / "collection.json").read_text())
    assert provenance["left_out"] == {} and provenance["labels"] == {"human:tester": 24, "openai:stub": pairs}
    together = next(row for row in provenance["agreement"] if row["between"] == "people and judges")
    assert together["pairs"] == 24 and sum(band["pairs"] for band in together["bands"]) == 24
    assert {row["system"] for row in provenance["estimates"]} == {"bm25", "tfidf"}
    assert all(row["low"] <= row["sample_estimate"] <= row["high"] for row in provenance["estimates"])
    report = (folder / "report.md").read_text()
    assert "## Agreement" in report and "0 of 12 questions: none" in report
    table = pd.read_csv(folder / "judgments.tsv", sep="\t", dtype=str)
    mine = {(q, d): str(g) for q, d, g in given}
    merged = dict(zip(zip(table["query_id"], table["doc_id"]), table["relevance"]))
    assert all(merged[pair] == grade for pair, grade in mine.items())  # people's label wins
    compared, diagnosed = tmp_path / "compare", tmp_path / "diagnose"
    argv = ["--quiet", "compare", "--dataset", str(folder), "--retrievers", "bm25", "tfidf", "--metrics", "ndcg@10"]
    assert main([*argv, "--out", str(compared)]) == 0
    argv = ["--quiet", "diagnose", "--dataset", str(folder), "--retriever", "bm25", "--out", str(diagnosed)]
    assert main(argv) == 0
    per_query = pd.read_csv(compared / "per_query.csv", dtype={"query_id": str})
    assert set(per_query["query_id"]) == set(answers)
    headroom = pd.read_csv(next(diagnosed.glob("headroom.*.csv")), dtype={"query_id": str})
    assert set(headroom["query_id"]) == set(answers)
    print(
        f"judge end to end: {len(corpus)} documents, {pairs} pooled pairs judged, 24 labels, kappa {together['kappa']}"
    )
