"""Generated questions (collection init --generate N --judge-model SPEC) from a stub OpenAI-compatible
server: a question copying its target is dropped, a near-duplicate merged, each kept one records how it
was made and its target becomes its single judged document, exported with the source generated:MODEL."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.judging.stub_server import StubServer
from rankscope.workflows.collection.generate import overlap
from tests.needs import needs

pytestmark = needs("openai")


TEXTS = {
    "copy": "The harbour master copyme opens the north gate at dawn every day of the year.",
    "twin1": "The red twin ferry runs between the islands in summer.",
    "twin2": "A second twin ferry, also red, covers the winter timetable.",
    "tides": "Spring tides peak two days after the full moon, raising the quay by a metre.",
    "lamp": "The lighthouse lamp is cleaned every Sunday by the keeper.",
}


def reply_for(passage: str) -> str:
    """What the stub model answers: a copy of the passage's first words, one question for both twins,
    else a paraphrase naming the passage's last word."""
    if "copyme" in passage:
        return " ".join(passage.split()[:9]) + "?"
    if "twin" in passage:
        return "Which twin ferry is red?"
    return f'"When does the thing about {passage.split()[-1].strip(".")} happen?"'


@pytest.fixture()
def stub() -> Iterator[StubServer]:
    with StubServer(reply=lambda request: reply_for(request.body["messages"][1]["content"])) as server:
        yield server


def test_overlap_counts_copied_trigrams() -> None:
    assert overlap("the north gate at dawn", "opens the north gate at dawn every day") == 1.0
    assert overlap("When is the gate opened?", "opens the north gate at dawn") == 0.0
    assert overlap("north gate", "the north gate") == 1.0 and overlap("", "x") == 0.0
    assert overlap("the north gate is shut", "the north gate at dawn") == pytest.approx(1 / 3)


def test_generated_questions_are_checked_merged_and_targeted(
    tmp_path: Path, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = stub.url
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TEXTS.items():
        (docs / f"{name}.txt").write_text(text + "\n")
    folder = tmp_path / "c"
    spec = f"openai:model=stub,base_url={url},seed=4"
    argv = ["collection", "init", str(folder), "--docs", str(docs), "--generate", "5", "--judge-model", spec]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "generated 3 questions from 5 documents (2 dropped)" in out
    seen = [request.body for request in stub.requests]
    assert len(seen) == 5 and all(body["seed"] == 4 and body["temperature"] == 0.0 for body in seen)
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    by_target = {q["origin"]["target"]: q for q in queries}
    assert set(by_target) == {"docs/lamp.txt", "docs/tides.txt", "docs/twin1.txt"}
    assert by_target["docs/lamp.txt"]["text"] == "When does the thing about keeper happen?"  # quotes stripped
    origin = by_target["docs/tides.txt"]["origin"]
    assert (origin["made"], origin["model"], origin["overlap"], origin["flagged"]) == (
        "generated",
        "openai:stub",
        0.0,
        False,
    )
    assert all(re.fullmatch(r"g[0-9a-f]{10}", q["_id"]) for q in queries)
    dropped = [json.loads(line) for line in (folder / "generated_dropped.jsonl").read_text().splitlines()]
    reasons = {row["target"]: row["reason"] for row in dropped}
    assert reasons["docs/copy.txt"].startswith("copies its target (overlap 1.00 > 0.5)")
    assert reasons["docs/twin2.txt"] == f"near duplicate of {by_target['docs/twin1.txt']['_id']} (merged)"
    assert main(["collection", "export", str(folder)]) == 0
    table = pd.read_csv(folder / "judgments.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert sorted(zip(table["query_id"], table["doc_id"], table["relevance"], table["source"])) == sorted(
        (q["_id"], q["origin"]["target"], "1", "generated:stub") for q in queries
    )
    assert main(["collection", "init", str(folder), "--docs", str(docs), "--generate", "9", "--judge-model", spec]) == 2
    assert "--generate 9: the collection has 5 documents" in capsys.readouterr().err
