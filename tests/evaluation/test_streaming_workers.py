"""evaluate of a TREC run file on forked worker processes (``workers=N``, ``rankscope evaluate --memory-budget
B --workers N``): spans of whole queries scored apart and merged in file order give the numbers of one
process and of the whole file in memory, bit for bit; a worker that dies or fails is one error, no result."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.core.forked import WorkerLost
from rankscope.corpora.trec import read_trec_coded, write_trec_qrels, write_trec_run
from rankscope.corpora.trec_pieces import query_starts
from rankscope.evaluation import evaluate, streaming
from rankscope.evaluation.judged_scan import Judgments
from rankscope.evaluation.streaming import evaluate_run_file
from tests.evaluation.real_runs import tfidf_run
from tests.evaluation.streamed_runs import SMALL, assert_same, write_case
from tests.evaluation.trec_reference import EVERY_FAMILY


@pytest.fixture(autouse=True)
def split_small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file split among the workers, in pieces of 4 KiB (the floor)."""
    monkeypatch.setattr(streaming, "SPLIT_BYTES", 0)
    monkeypatch.setattr(streaming, "PIECE_OVERHEAD", 1 << 20)


def in_memory(qrels: Path, run: Path, **options):
    return evaluate(read_trec_coded(qrels, "qrels"), read_trec_coded(run, "run"), EVERY_FAMILY, **options)


def streamed(qrels: Path, run: Path, workers: int, **options):
    coded = read_trec_coded(qrels, "qrels")
    return evaluate_run_file(coded, run, EVERY_FAMILY, memory_budget=SMALL, workers=workers, **options)


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("options", [{}, {"judged_only": True, "ignore_self": True}, {"relevance_level": 2}])
def test_two_and_three_workers_give_one_processs_numbers(tmp_path: Path, grouped: bool, options) -> None:
    """write_case's runs (scores from 5 values: many ties; a run not grouped is noticed across spans and
    grouped on disk) on 1, 2 and 3 workers, and the whole file in memory."""
    qrels, run = write_case(tmp_path, 11, grouped)
    whole = in_memory(qrels, run, **options)
    for workers in (1, 2, 3):
        assert_same(whole, streamed(qrels, run, workers, **options))


def test_queries_cut_by_the_spans_nominal_bounds(tmp_path: Path) -> None:
    """Spans start where the query id changes, not at size * k / count: a long query (longer than a span)
    crossing several bounds, short ones cut in the middle, and a run-only query's lines at the file's two
    ends (so split across spans: not grouped, scored after grouping on disk)."""
    rng = np.random.default_rng(3)
    lines = [f"long Q0 d{d} 0 {rng.integers(0, 3)} t\n" for d in range(3000)]
    for q in range(40):
        lines += [f"q{q} Q0 d{d} 0 {rng.integers(0, 4) / 2} t\n" for d in rng.choice(500, 37, replace=False)]
    qrels = tmp_path / "qrels.txt"
    queries = ["long", *(f"q{i}" for i in range(40))]
    qrels.write_text("".join(f"{q} 0 d{d} {d % 3}\n" for q in queries for d in range(0, 500, 7)))
    run = tmp_path / "run.txt"
    run.write_text("".join(lines))
    size = run.stat().st_size
    starts = query_starts(run, 8)
    nominal = [size * k // 8 for k in range(1, 8)]
    assert not set(nominal) & set(starts)  # every bound moved to a query's start
    text = run.read_bytes()
    assert text.index(b"q0 ") > size // 8  # the long query holds more than a span
    for start in starts[1:-1]:
        assert text[start - 1 : start] == b"\n"
        assert text[:start].splitlines()[-1].split()[0] != text[start:].split(maxsplit=1)[0]
    whole = in_memory(qrels, run)
    for workers in (1, 2):
        assert_same(whole, streamed(qrels, run, workers))
    run.write_text("".join(["edge Q0 d1 0 1 t\n", *lines, "edge Q0 d2 0 1 t\n"]))
    whole = in_memory(qrels, run)
    for workers in (1, 2):
        assert_same(whole, streamed(qrels, run, workers))


@pytest.mark.parametrize("collection", ["cranfield", "cisi"])
def test_real_collections_on_two_workers(data_dir: Path, tmp_path: Path, collection: str) -> None:
    """A TF-IDF run of depth 200 over Cranfield (graded labels) and CISI, scores rounded to multiples of 2^-6
    (most scores tied): in memory, one process and two workers give the same floats."""
    qrels_frame, run_frame = tfidf_run(data_dir / collection, depth=200, granularity=2.0**-6)
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    write_trec_qrels(qrels_frame, qrels)
    write_trec_run(run_frame, run)
    assert run_frame.duplicated(["query_id", "score"]).mean() > 0.5
    whole = in_memory(qrels, run)
    assert whole.n_queries >= 76
    for workers in (1, 2):
        assert_same(whole, streamed(qrels, run, workers))


def _in_a_worker(monkeypatch: pytest.MonkeyPatch, action) -> None:
    """Judgments.piece does ``action()`` in a forked worker (this process's pieces are read as ever)."""
    parent, piece = os.getpid(), Judgments.piece

    def patched(self, raw, ignore_self):
        if os.getpid() != parent:
            action()
        return piece(self, raw, ignore_self)

    monkeypatch.setattr(Judgments, "piece", patched)


def test_a_killed_worker_is_one_error_and_no_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], forkable: None
) -> None:
    qrels, run = write_case(tmp_path, 12)
    _in_a_worker(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGKILL))
    with pytest.raises(WorkerLost, match=f"a worker process scoring {run} ended before giving its result"):
        streamed(qrels, run, 2)
    assert main(["evaluate", str(qrels), str(run), "--memory-budget", "1M", "--workers", "2"]) == 2
    printed = capsys.readouterr()
    assert (
        printed.out == "" and len(printed.err.strip().splitlines()) == 1 and "killed, or out of memory" in printed.err
    )


def test_a_failing_worker_raises_its_error_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forkable: None
) -> None:
    qrels, run = write_case(tmp_path, 13)

    def fail() -> None:
        raise RankscopeError("the disk went away")

    _in_a_worker(monkeypatch, fail)
    with pytest.raises(RankscopeError, match="the disk went away"):
        streamed(qrels, run, 2)


def test_the_cli_prints_the_same_on_two_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = write_case(tmp_path, 14)
    base = ["evaluate", str(qrels), str(run), "--per-query", "--format", "csv", "-m", "ndcg@10", "-m", "map"]
    assert main([*base, "--memory-budget", "1M", "--workers", "1"]) == 0
    one = capsys.readouterr()
    assert main([*base, "--memory-budget", "1M", "--workers", "2"]) == 0
    assert capsys.readouterr() == one and "q5," in one.out
    assert main([*base, "--memory-budget", "1M", "--workers", "0"]) == 2
    assert "--workers must be a positive integer, got 0" in capsys.readouterr().err
    assert main([*base, "--workers", "2"]) == 2
    assert "--workers splits a run file read with --memory-budget" in capsys.readouterr().err


@pytest.mark.parametrize("judged_retrieved", [True, False])
def test_coverage_notes_are_the_whole_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], judged_retrieved: bool
) -> None:
    """The notes on queries and documents are the in-memory path's on one process and two (a run retrieving
    no judged document: the same note, its run examples taken from the first piece)."""
    qrels, run = write_case(tmp_path, 15)
    if not judged_retrieved:
        run.write_text(run.read_text().replace(" d", " x"))
    base = ["evaluate", str(qrels), str(run), "-m", "map"]
    assert main(base) == 0
    whole = capsys.readouterr()
    assert "qrels queries are not in the run" in whole.err
    streamed = []
    for workers in ("1", "2"):
        assert main([*base, "--memory-budget", "1M", "--workers", workers]) == 0
        streamed.append(capsys.readouterr())
    assert streamed[0] == streamed[1] and streamed[0].out == whole.out
    if judged_retrieved:
        assert streamed[0].err == whole.err and "judged documents" not in whole.err
    else:
        note = "the run retrieves none of the 396 judged documents (run ["
        assert streamed[0].err.split(note)[0] == whole.err.split(note)[0] and note in streamed[0].err
