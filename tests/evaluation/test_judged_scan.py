"""The compiled pass of rankscope.evaluation.judged_scan against the whole-file path: the Judged table of
a piece equals judge_coded's for its judged queries, array for array (ranks by the tie rule: runs in
score order and not, short and long stretches of ties, ignore_self, negative labels); doubt and
interleaved pieces are told apart."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from rankscope.corpora.trec import read_trec_coded
from rankscope.evaluation.engine import _judge_coded
from rankscope.evaluation.judged_scan import INTERLEAVED, Judgments


def write_case(folder: Path, seed: int, *, sorted_scores: bool, values: int) -> tuple[Path, Path]:
    """A grouped run of 60 queries (some not judged), ``values`` distinct scores (few: long ties), rows in
    score order or not, a query's own id among its documents; qrels with labels -2..3."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in rng.permutation(60):
        docs = [f"d{d}" for d in rng.choice(300, size=rng.integers(1, 150), replace=False)]
        if q % 7 == 0:
            docs.append(f"q{q}")  # ignore_self drops it
        scores = rng.integers(0, values, len(docs)) / 8
        if sorted_scores:
            scores = -np.sort(-scores)
        lines += [f"q{q}\tQ0 {d} {r} {s!r} tag extra\n" for r, (d, s) in enumerate(zip(docs, scores.tolist()))]
    judged = [
        f"q{q} 0 {d} {rng.integers(-2, 4)}\n"
        for q in range(10, 70)
        for d in [*(f"d{x}" for x in rng.choice(300, size=rng.integers(1, 80), replace=False)), f"q{q}"]
    ]
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sorted_scores", [True, False])
@pytest.mark.parametrize("values", [2, 40, 10**6])
@pytest.mark.parametrize(("level", "ignore_self"), [(1, False), (2, True)])
def test_the_judged_table_is_judge_codeds(
    tmp_path: Path, seed: int, sorted_scores: bool, values: int, level: int, ignore_self: bool
) -> None:
    qrels_path, run_path = write_case(tmp_path, seed, sorted_scores=sorted_scores, values=values)
    qrels = read_trec_coded(qrels_path, "qrels")
    expected = _judge_coded(
        qrels, read_trec_coded(run_path, "run"), ignore_self, relevance_level=level, judged_only=True
    )
    piece = Judgments(qrels, level).piece(run_path.read_bytes(), ignore_self)
    assert not isinstance(piece, str) and piece is not None and piece.judged is not None
    assert piece.rows == len(read_trec_coded(run_path, "run"))
    assert sorted(piece.query_names) == sorted(read_trec_coded(run_path, "run").query_names)
    for field in fields(expected):
        mine, theirs = getattr(piece.judged, field.name), getattr(expected, field.name)
        if isinstance(theirs, np.ndarray):
            assert mine.dtype == theirs.dtype, field.name
            if field.name in ("run_q", "run_score"):  # rows in any order: the same multiset of (query, score)
                mine = np.sort(piece.judged.run_q * 10**7 + piece.judged.run_score * 8)
                theirs = np.sort(expected.run_q * 10**7 + expected.run_score * 8)
            assert np.array_equal(mine, theirs), field.name
        else:
            assert mine == theirs, field.name


def test_a_piece_with_no_judged_query(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a 0 d1 1\n")
    piece = Judgments(read_trec_coded(qrels, "qrels"), 1).piece(b"b Q0 d1 1 0.5 t\nc Q0 d1 1 0.5 t\n", False)
    assert not isinstance(piece, str) and piece is not None
    assert piece.judged is None and list(piece.query_names) == ["b", "c"] and piece.rows == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"a Q0 d1 1 0.5 t\na Q0 d1 2 0.4 t\n",  # a pair twice
        b"a Q0 d1 x 0.5 t\n",  # a rank that is no number
        b"a Q0 d1 1 nan t\n",  # a score that is not finite
        b"a Q0 d1 1 0.5\n",  # five fields
        b'a Q0 "d1" 1 0.5 t\n',  # a quoted id
        b"a Q0 d\xff 1 0.5 t\n",  # not UTF-8
    ],
)
def test_doubt_is_none(tmp_path: Path, raw: bytes) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a 0 d1 1\n")
    assert Judgments(read_trec_coded(qrels, "qrels"), 1).piece(raw, False) is None


def test_interleaved_queries_and_utf8_ids(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("é 0 dé 1\n")
    judgments = Judgments(read_trec_coded(qrels, "qrels"), 1)
    assert judgments.piece(b"a Q0 d1 1 0.5 t\nb Q0 d1 1 0.5 t\na Q0 d2 1 0.5 t\n", False) == INTERLEAVED
    piece = judgments.piece("é Q0 dé 1 0.5 t\n".encode(), False)
    assert not isinstance(piece, str) and piece is not None and piece.judged is not None
    assert list(piece.judged.query_ids) == ["é"] and list(piece.judged.label) == [1]
