"""A small sampled collection for the labelling tests: documents written at test time, pooled, sampled."""

from __future__ import annotations

import json
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
