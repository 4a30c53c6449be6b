"""Qrels and runs on disk for the gate's tests: thirty queries, one relevant document each, and runs that
put it first except on the queries asked."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

QUERIES = [f"q{i:02d}" for i in range(30)]


def write_qrels(folder: Path) -> Path:
    path = folder / "qrels.txt"
    path.write_text("".join(f"{q} 0 {q}-rel 1\n" for q in QUERIES))
    return path


def write_run(path: Path, missed: Iterable[str] = (), queries: Iterable[str] = QUERIES) -> Path:
    """The relevant document first, except on ``missed`` (second there, after a non-relevant one)."""
    skip = set(missed)
    lines = []
    for q in queries:
        ranked = [f"{q}-other", f"{q}-rel"] if q in skip else [f"{q}-rel", f"{q}-other"]
        lines += [f"{q} Q0 {doc} {rank} {10 - rank} run\n" for rank, doc in enumerate(ranked, 1)]
    path.write_text("".join(lines))
    return path
