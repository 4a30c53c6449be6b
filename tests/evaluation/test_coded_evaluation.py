"""``rankscope evaluate`` scores TREC files on integer codes (``read_run(path, coded=True)``, no ``str``
per row): the same numbers as the tables path and pytrec_eval, the same one-line errors.

Random runs have tied scores (ties broken by doc_id descending), queries interleaved or grouped,
run-only and qrels-only queries, negative and graded labels and documents judged but not retrieved.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from rankscope.cli import main
from rankscope.core.errors import FormatError
from rankscope.corpora import _trec_scan
from rankscope.corpora.foreign import read_qrels, read_run
from rankscope.corpora.trec import CodedTable, read_trec_coded, read_trec_qrels, read_trec_run
from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.metrics import parse_metric

METRICS = ["ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "p@10", "ndcg", "rprec", "bpref"]
PYTREC = {
    "ndcg_cut_10": "ndcg@10",
    "recall_100": "recall@100",
    "map": "map",
    "P_10": "p@10",
    "ndcg": "ndcg",
    "Rprec": "rprec",
    "bpref": "bpref",
}


def random_files(folder: Path, seed: int, interleave: bool) -> tuple[Path, Path]:
    """A qrels and a run file: 30 queries (5 only in the run, 4 only in the qrels), scores from a small
    pool so many tie, written as repr and as short decimals."""
    rng = random.Random(seed)
    pool = [round(rng.uniform(0, 3), 1) for _ in range(6)] + [rng.random() for _ in range(50)]
    rows = []
    for q in range(26):
        docs = rng.sample(range(400), rng.randrange(1, 120))
        rows += [(f"q{q}", f"d{d}", rng.choice(pool)) for d in docs]
    if interleave:
        rng.shuffle(rows)
    run = folder / "run.trec"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(rows)))
    judged = [
        (f"q{q}", f"d{d}", rng.choice([-1, 0, 0, 1, 2, 3])) for q in range(4, 30) for d in rng.sample(range(400), 40)
    ]
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in judged))
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("interleave", [False, True])
def test_coded_tables_score_as_the_tables_and_pytrec_eval(tmp_path: Path, seed: int, interleave: bool) -> None:
    qrels_path, run_path = random_files(tmp_path, seed, interleave)
    qrels, run = read_qrels(qrels_path, coded=True), read_run(run_path, coded=True)
    assert isinstance(qrels, CodedTable) and isinstance(run, CodedTable)
    frames = read_trec_qrels(qrels_path), read_trec_run(run_path)
    options = [{}, {"judged_only": True}, {"exclude_unjudged": True}, {"relevance_level": 2}, {"ignore_self": True}]
    for option in options:
        coded = evaluate(qrels, run, METRICS, **option)
        pd.testing.assert_frame_equal(coded.per_query, evaluate(*frames, METRICS, **option).per_query)
        assert coded.mean == evaluate(*frames, METRICS, **option).mean
        assert coded.n_unjudged == evaluate(*frames, METRICS, **option).n_unjudged
    # a table for the qrels and a coded run (BEIR qrels with a TREC run) take the coded path too
    pd.testing.assert_frame_equal(evaluate(frames[0], run, METRICS).per_query, evaluate(*frames, METRICS).per_query)
    pd.testing.assert_frame_equal(evaluate(qrels, frames[1], METRICS).per_query, evaluate(*frames, METRICS).per_query)

    with open(qrels_path) as handle:
        their_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        their_run = pytrec_eval.parse_run(handle)
    theirs = pytrec_eval.RelevanceEvaluator(their_qrels, set(PYTREC)).evaluate(their_run)
    ours = evaluate(qrels, run, METRICS, judged_only=True).wide()
    for query, values in theirs.items():
        for name, metric in PYTREC.items():
            assert ours.loc[query, parse_metric(metric).name] == pytest.approx(values[name], abs=1e-12), (query, metric)


def test_ignore_self_drops_the_rows_naming_their_query(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("a Q0 a 1 3 t\na Q0 b 2 2 t\na Q0 c 3 1 t\nb Q0 a 1 5 t\nb Q0 b 2 4 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("a 0 b 1\nb 0 a 1\n")
    coded = evaluate(read_qrels(qrels, coded=True), read_run(run, coded=True), ["mrr"], ignore_self=True)
    assert coded.mean == {"mrr": 1.0}  # 'a' retrieving itself first would put b second (0.75 without the option)
    assert evaluate(read_qrels(qrels, coded=True), read_run(run, coded=True), ["mrr"]).mean == {"mrr": 0.75}


def test_the_command_prints_the_same_json_as_the_tables_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels, run = random_files(tmp_path, 9, interleave=True)
    assert main(["evaluate", str(qrels), str(run), *METRICS, "--per-query", "--format", "json"]) == 0
    coded = json.loads(capsys.readouterr().out)
    import rankscope.evaluation.score_files as cli

    monkeypatch.setattr(cli, "read_qrels", lambda path, columns, coded: read_trec_qrels(path))
    monkeypatch.setattr(cli, "read_run", lambda path, columns, coded: read_trec_run(path))
    assert main(["evaluate", str(qrels), str(run), *METRICS, "--per-query", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == coded


@pytest.mark.parametrize(
    "text, line",
    [
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\nq1 Q0 d1 3 0.3 t\n", 3),  # grouped: found in one pass
        ("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.4 t\nq1 Q0 d2 2 0.3 t\nq2 Q0 d1 2 0.3 t\n", 4),  # interleaved: sorted
        ("q1 Q0 d1 1 0.5 t\nq9 Q0 d1 1 0.5 t\nq9 Q0 d1 2 0.5 t\n", 3),  # in a query the qrels lack
    ],
)
def test_a_repeated_pair_is_one_line_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int
) -> None:
    run = tmp_path / "run.trec"
    run.write_text(text)
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n")
    with pytest.raises(FormatError, match=f"line {line}: duplicate run entry"):
        read_trec_coded(run, "run")
    assert main(["evaluate", str(qrels), str(run)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{run}, line {line}:" in error and "duplicate run entry" in error


def test_repeats_finds_a_repeated_pair_or_says_the_rows_are_not_grouped() -> None:
    def repeats(queries: list[int], docs: list[int]) -> bool | None:
        return _trec_scan.repeats(np.array(queries, dtype=np.int64), np.array(docs, dtype=np.int64), 5)

    assert repeats([0, 0, 1, 1, 2], [0, 1, 0, 1, 0]) is False  # a document under several queries
    assert repeats([0, 0, 1, 1, 1], [0, 1, 2, 4, 2]) is True
    assert repeats([0, 1, 0], [0, 1, 2]) is None  # query 0 comes back
    assert repeats([], []) is False
    with pytest.raises(ValueError):
        repeats([0], [5])


def test_long_decimals_near_halfway_points_are_read_as_float_reads_them(tmp_path: Path) -> None:
    """17-19 digit decimals take the scan's extended-precision quotient; the ones nearest a point halfway
    between two doubles (where a second rounding could go wrong) must still come out as float() gives."""
    from decimal import Context, Decimal

    rng = random.Random(5)
    texts = []
    for _ in range(6_000):
        low = rng.uniform(1, 10) * 10.0 ** rng.randrange(-8, 9)
        halfway = (Decimal(low) + Decimal(np.nextafter(low, np.inf))) / 2  # exact
        digits = rng.choice([17, 18, 19])
        near = Context(prec=digits).plus(halfway)
        step = Decimal(1).scaleb(near.adjusted() - digits + 1)
        for value in (near, near + step, near - step):
            texts.append(format(value, "f"))
    texts = [text for text in texts if "e" not in text.lower()]
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q Q0 d{i} 1 {text} t\n" for i, text in enumerate(texts)))
    table = read_trec_coded(run, "run")
    expected = np.array([float(text) for text in texts])
    assert table.doc_names.tolist() == [f"d{i}" for i in range(len(texts))]
    assert (table.value.view(np.int64) == expected.view(np.int64)).all()
