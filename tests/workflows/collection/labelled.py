"""A small sampled collection for the labelling tests (documents written at test time, pooled, sampled), and
`rankscope label` started in its own process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from rankscope.workflows.collection.ingest import init_collection
from rankscope.workflows.collection.pooling import pool_collection
from rankscope.workflows.collection.sample import sample_collection


def sampled_collection(
    root: Path, texts: Mapping[str, str], questions: Mapping[str, str], depth: int = 5, budget: int = 100
) -> Path:
    """``texts`` as .txt files and ``questions`` as JSONL, ingested, pooled with bm25 and sampled (seed 0)."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    for name, text in texts.items():
        (docs / f"{name}.txt").write_text(text + "\n")
    queries = root / "questions.jsonl"
    queries.write_text("".join(json.dumps({"id": q, "text": t}) + "\n" for q, t in questions.items()))
    folder = root / "collection"
    init_collection(folder, [docs], queries=queries)
    pool_collection(folder, ["bm25"], depth)
    sample_collection(folder, budget, 0)
    return folder


def start_label_page(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """``rankscope label`` in its own process; returns it and the address it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "rankscope.cli", "label", str(folder), "--name", "alice", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    for _ in range(5):
        line = process.stdout.readline()
        found = re.search(r"open (http://127\.0\.0\.1:\d+/)", line)
        if found:
            return process, found.group(1)
    process.kill()
    raise AssertionError(f"no address printed: {process.stderr.read() if process.stderr else ''}")
