"""evaluate of a TREC run file in pieces of whole queries (rankscope.evaluation.streaming,
rankscope evaluate --memory-budget): the numbers of the whole file scored at once, bit for bit, for
grouped runs, shuffled runs (grouped on disk first), gzip, a query longer than a piece, every metric
family and every option; bad lines named by their line in the file."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError, RankscopeError
from rankscope.corpora import trec_pieces
from rankscope.corpora.trec import read_trec_coded
from rankscope.corpora.trec_pieces import run_pieces
from rankscope.evaluation import evaluate, streaming
from rankscope.evaluation.coverage import DisjointRunError
from rankscope.evaluation.streaming import evaluate_run_file
from tests.evaluation.streamed_runs import SMALL, assert_same, write_case
from tests.evaluation.trec_reference import EVERY_FAMILY


@pytest.fixture(autouse=True)
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 4 KiB (the floor), so a few hundred lines make many pieces."""
    monkeypatch.setattr(streaming, "PIECE_OVERHEAD", 1 << 20)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize(
    "options",
    [{}, {"judged_only": True}, {"exclude_unjudged": True}, {"relevance_level": 2}, {"ignore_self": True}],
)
def test_pieces_give_the_whole_files_numbers_bit_for_bit(tmp_path: Path, seed: int, grouped: bool, options) -> None:
    qrels, run = write_case(tmp_path, seed, grouped)
    coded = read_trec_coded(qrels, "qrels")
    whole = evaluate(coded, read_trec_coded(run, "run"), EVERY_FAMILY, **options)
    assert_same(whole, evaluate_run_file(coded, run, EVERY_FAMILY, memory_budget=SMALL, **options))


def test_grouped_pieces_hold_whole_queries_and_every_row(tmp_path: Path) -> None:
    _, run = write_case(tmp_path, 3)
    pieces = list(run_pieces(run, 4096))
    assert len(pieces) > 5
    names = [list(piece.table.query_names) for piece in pieces]
    flat = [name for piece in names for name in piece]
    assert len(flat) == len(set(flat)) == 125  # no query in two pieces
    whole = read_trec_coded(run, "run").frame()
    parts = pd.concat([piece.table.frame() for piece in pieces], ignore_index=True)
    pd.testing.assert_frame_equal(parts, whole)


def _walked_back(data: bytes) -> int:
    """_last_query_start by walking back one line at a time (what it did before halving)."""
    lines = data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]
    if not lines:
        return 0
    fields = [line.split()[0] if line.split() else b"" for line in lines]
    first = len(lines) - 1
    while first > 0 and (not fields[first - 1] or fields[first - 1] == fields[-1]):
        first -= 1
    return sum(len(line) + 1 for line in lines[:first])


@pytest.mark.parametrize("seed", range(20))
def test_the_last_querys_start_is_found_by_halving(seed: int) -> None:
    """Grouped lines with blank lines and a partial last line: the cut walking back line by line finds;
    lines not grouped: a cut before a line of the last line's query where the query id changes (pieces of
    whole lines; the reader notices that the file is not grouped wherever the cuts fall)."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(int(rng.integers(1, 30))):
        for _ in range(int(rng.integers(1, 40))):
            lines.append(b"" if rng.random() < 0.3 else f"q{q} Q0 d{rng.integers(99)} 1 2.5 t".encode())
    data = b"\n".join(lines) + (b"\nq99 Q0 d1" if seed % 2 else b"\n")
    assert trec_pieces._last_query_start(data) == _walked_back(data)
    shuffled = [line for line in rng.permutation(lines) if line]
    data = b"\n".join(shuffled) + b"\n"
    cut = trec_pieces._last_query_start(data)
    after = data[cut:].split(b"\n")[:-1]
    assert after and after[0].split()[0] == shuffled[-1].split()[0]
    assert cut == 0 or data[:cut].split(b"\n")[-2].split()[0] != after[0].split()[0]


def test_a_query_longer_than_a_piece_and_gzip(tmp_path: Path) -> None:
    lines = [f"big Q0 d{i} 0 {i % 7} t\n" for i in range(2000)] + [f"small Q0 d{i} 0 1 t\n" for i in range(5)]
    run = tmp_path / "run.txt.gz"
    with gzip.open(run, "wt") as out:
        out.write("\ufeff" + "".join(lines))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("big 0 d5 2\nbig 0 d1999 1\nsmall 0 d3 1\n")
    assert [len(p.table) for p in run_pieces(run, 4096)] == [2000, 5]
    coded = read_trec_coded(qrels, "qrels")
    assert_same(evaluate(coded, read_trec_coded(run, "run")), evaluate_run_file(coded, run, memory_budget=SMALL))


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("q7 Q0 d1 x 0.5 tag", "rank"),
        ("q7 Q0 d1 1 0.5", "expected 6 fields"),
        ("q7 Q0 d1 1 nan tag", "score"),
    ],
)
def test_a_bad_line_in_a_late_piece_is_named_by_its_line_in_the_file(tmp_path: Path, bad: str, problem: str) -> None:
    lines = [f"q{i // 50} Q0 d{i} 1 {i} tag" for i in range(3000)]
    lines[2500] = bad.replace("q7", f"q{2500 // 50}")
    streamed, whole = both_errors(tmp_path, lines)
    assert streamed == whole and problem in streamed and "2501" in streamed


def test_a_repeated_pair_is_refused_with_its_line(tmp_path: Path) -> None:
    lines = [f"q{i // 50} Q0 d{i} 1 {i} tag" for i in range(3000)] + ["q59 Q0 d2990 1 0 tag"]
    streamed, whole = both_errors(tmp_path, lines)
    assert streamed == whole and "duplicate" in streamed and "3001" in streamed


def both_errors(folder: Path, lines: list[str]) -> tuple[str, str]:
    """The FormatError of the run of ``lines`` streamed, and read whole."""
    run = folder / "run.txt"
    run.write_text("\n".join(lines) + "\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    with pytest.raises(FormatError) as streamed:
        evaluate_run_file(read_trec_coded(folder / "qrels.txt", "qrels"), run, memory_budget=SMALL)
    with pytest.raises(FormatError) as whole:
        read_trec_coded(run, "run")
    return str(streamed.value), str(whole.value)


def test_a_disjoint_run_is_refused_and_a_tiny_budget_too(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("x1 Q0 d1 1 1 t\n")
    qrels = read_trec_coded(write_case(tmp_path, 0)[0], "qrels")
    with pytest.raises(DisjointRunError):
        evaluate_run_file(qrels, run, memory_budget=SMALL)
    with pytest.raises(RankscopeError, match="memory budget 1000 bytes is too small"):
        evaluate_run_file(qrels, run, memory_budget=1000)


def test_the_cli_prints_the_same_with_a_memory_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = write_case(tmp_path, 4, grouped=False)
    base = ["evaluate", str(qrels), str(run), "--per-query", "--format", "csv", "-m", "ndcg@10", "-m", "map"]
    assert main(base) == 0
    whole = capsys.readouterr()
    assert main([*base, "--memory-budget", "1M"]) == 0
    streamed = capsys.readouterr()
    assert streamed.out == whole.out and streamed.err == whole.err and "5 of 125 run queries" in whole.err
    assert main([*base, "--memory-budget", "lots"]) == 2
    assert "--memory-budget must be a positive size such as 512M or 2G, got 'lots'" in capsys.readouterr().err
    assert main([*base, "--memory-budget", "1M", "--fields", "run.score=s"]) == 2
    assert (
        "--memory-budget reads TREC and Parquet run files by their own columns: without --fields"
        in capsys.readouterr().err
    )


@pytest.mark.slow
def test_spans_on_two_workers_give_one_processs_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--scheduler local:2 scores spans of the file on two worker processes: the same numbers, bit for bit,
    grouped or not (a run not grouped is noticed across spans and grouped on disk), and the same output."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            for seed, grouped in ((5, True), (6, False)):
                qrels, run = write_case(tmp_path, seed, grouped)
                coded = read_trec_coded(qrels, "qrels")
                whole = evaluate(coded, read_trec_coded(run, "run"), EVERY_FAMILY)
                for budget in (SMALL, 64 << 20):
                    assert_same(
                        whole, evaluate_run_file(coded, run, EVERY_FAMILY, memory_budget=budget, scheduler=client)
                    )
    qrels, run = write_case(tmp_path, 7)
    base = ["evaluate", str(qrels), str(run), "--per-query", "--format", "csv", "-m", "ndcg@10", "-m", "map"]
    assert main([*base, "--memory-budget", "1M"]) == 0
    one = capsys.readouterr()
    assert main([*base, "--memory-budget", "1M", "--scheduler", "local:2"]) == 0
    assert capsys.readouterr() == one


def write_parquet_case(folder: Path, seed: int, grouped: bool, group_rows: int = 97) -> tuple[Path, Path]:
    """write_case's run as a Parquet file of row groups of ``group_rows`` rows (fastparquet)."""
    from fastparquet import write

    qrels, run = write_case(folder, seed, grouped)
    table = read_trec_coded(run, "run").frame()[["query_id", "doc_id", "score"]]
    parquet = folder / f"run{seed}{grouped}.parquet"
    write(str(parquet), table, row_group_offsets=group_rows)
    return qrels, parquet


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("options", [{}, {"judged_only": True, "ignore_self": True}, {"relevance_level": 2}])
def test_a_parquet_run_in_row_groups_gives_the_whole_files_numbers(tmp_path: Path, grouped: bool, options) -> None:
    from rankscope.corpora.foreign import read_run

    qrels, run = write_parquet_case(tmp_path, 8, grouped)
    coded = read_trec_coded(qrels, "qrels")
    whole = evaluate(coded, read_run(run), EVERY_FAMILY, **options)
    assert_same(whole, evaluate_run_file(coded, run, EVERY_FAMILY, memory_budget=SMALL, **options))


def test_parquet_pieces_hold_whole_queries_and_refuse_a_huge_group(tmp_path: Path) -> None:
    from rankscope.corpora.parquet_pieces import parquet_pieces

    _, run = write_parquet_case(tmp_path, 9, True, group_rows=50)
    pieces = list(parquet_pieces(run, 120))
    assert len(pieces) > 5 and sum(map(len, pieces)) == len(read_trec_coded(tmp_path / "run9True.txt", "run"))
    names = [name for piece in pieces for name in pd.unique(piece["query_id"])]
    assert len(names) == len(set(names)) == 125
    with pytest.raises(
        RankscopeError, match=r"row group 0 holds 50 rows, more than the memory budget lets one read hold \(40\)"
    ):
        next(parquet_pieces(run, 10))


@pytest.mark.parametrize(
    ("grouped", "row", "doc"),
    [(True, 2501, "d2500"), (False, 2999, "d119")],  # not grouped: q59's d119 (row 119) again, pieces later
)
def test_a_repeated_pair_in_a_late_parquet_piece_is_named_by_its_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], grouped: bool, row: int, doc: str
) -> None:
    """Not grouped (spread over bucket files), a pair repeated in two pieces was accepted and scored
    (silently wrong numbers); now refused as the whole-file read refuses it."""
    from fastparquet import write

    queries = [f"q{i // 50}" if grouped else f"q{i % 60}" for i in range(3000)]
    frame = pd.DataFrame({"query_id": queries, "doc_id": [f"d{i}" for i in range(3000)], "score": np.arange(3000.0)})
    frame.loc[row, "doc_id"] = doc
    run, qrels = tmp_path / "run.parquet", tmp_path / "qrels.txt"
    write(str(run), frame, row_group_offsets=200)
    qrels.write_text(f"{queries[row]} 0 d1 1\n")
    base = ["evaluate", str(qrels), str(run)]
    assert main(base) == 2
    whole = capsys.readouterr().err
    assert main([*base, "--memory-budget", "1M"]) == 2
    expected = f"rankscope evaluate: error: {run}: row {row}: duplicate query, document '{queries[row]}', '{doc}'\n"
    assert capsys.readouterr().err == whole == expected


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_a_pair_repeated_in_a_run_not_grouped_is_named_at_the_users_file_and_line(tmp_path: Path, suffix: str) -> None:
    """A run not grouped is spread over temporary bucket files; a pair repeated in two of its pieces was
    named at the bucket (``/tmp/rankscope_buckets_.../bucket3.txt, line 61``), now as the whole-file read
    names it: the user's file and the lines in it."""
    lines = [f"q{i % 60} Q0 d{i} 1 {i} tag" for i in range(3000)]  # every query in every piece
    lines[1000:1000] = ["", "  "]  # blank lines count in the numbering
    lines.append("q59 Q0 d119 1 0 tag")  # d119 is q59's since line 120
    plain = tmp_path / "run.txt"
    plain.write_text("\n".join(lines) + "\n")
    run = plain
    if suffix == ".txt.gz":
        run = tmp_path / "run.txt.gz"
        run.write_bytes(gzip.compress(plain.read_bytes()))
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    with pytest.raises(FormatError) as streamed:
        evaluate_run_file(read_trec_coded(tmp_path / "qrels.txt", "qrels"), run, memory_budget=SMALL)
    assert str(streamed.value) == (
        f"{run}, line 3003: duplicate run entry for query, document 'q59', 'd119' (first at line 120)"
    )
    with pytest.raises(FormatError) as whole:
        read_trec_coded(run, "run")
    assert str(whole.value) == str(streamed.value)
