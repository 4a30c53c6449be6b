"""Runs for the streamed evaluation's tests (test_streaming.py, test_streaming_workers.py): a small run with
many ties and qrels it partly covers, and the bit-for-bit comparison of two results."""

from __future__ import annotations

from pathlib import Path

import numpy as np

SMALL = 1 << 20  # the smallest budget


def write_case(folder: Path, seed: int, grouped: bool = True) -> tuple[Path, Path]:
    """A run of 120 queries x up to 60 documents, scores from 5 values (many ties), qrels with labels
    -1..3 for 130 queries (some the run lacks), and 5 run-only queries."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in rng.permutation(125):
        docs = rng.choice(400, size=rng.integers(1, 60), replace=False)
        lines += [f"q{q} Q0 d{d} 0 {s} tag\n" for d, s in zip(docs, rng.integers(0, 5, len(docs)) / 4)]
    if not grouped:
        lines = list(rng.permutation(lines))
    judged = [
        f"q{q} 0 d{d} {rng.integers(-1, 4)}\n"
        for q in range(5, 135)
        for d in rng.choice(400, size=rng.integers(1, 25), replace=False)
    ]
    run, qrels = folder / f"run{seed}{grouped}.txt", folder / "qrels.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    return qrels, run


def assert_same(whole, part) -> None:
    assert whole.wide().index.equals(part.wide().index)
    assert np.array_equal(whole.wide().to_numpy(), part.wide().to_numpy())  # ==, not close
    assert (whole.mean, whole.n_queries, whole.n_unjudged) == (part.mean, part.n_queries, part.n_unjudged)
