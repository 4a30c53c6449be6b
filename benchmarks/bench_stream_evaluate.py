"""``rankscope evaluate --memory-budget``: a TREC run of ``--queries`` x ``--depth`` rows scored in
bounded memory, in one process and on two worker processes (``--scheduler local:2``), checked bit for bit
against the whole-file path, its stages timed against the whole-file path's, and the whole-process memory
of pytrec_eval, ranx and rankscope's in-memory path per row at smaller sizes.

    python benchmarks/bench_stream_evaluate.py --queries 10000 --sizes 1000 --tools rankscope pytrec_eval  # 10^7 rows
    python benchmarks/bench_stream_evaluate.py --queries 100000 --sizes 1000 10000       # 10^8 rows, 3.6 GB

Files go to ``--folder`` (default: a temporary folder, removed at the end; files of the same size kept
there from an earlier run are used again): a grouped run with
fixed-width lines (``q000001 Q0 d0001234 0001 0.873245 r``; scores drawn from 10^6 values, about
one tie a query, as a real run's), written 10^6 rows at a time by numpy, and qrels of 10 judgments a query (7 retrieved, 3 not,
labels 0-3). Printed (CPU = user + system seconds of the process and its children; on a machine other work
shares, the wall time says little and the CPU time per row is the number to compare):

1. equality: the first ``--sample-queries`` queries (10^6 rows) scored whole (``evaluate`` of the
   coded file) and streamed with a 64 MiB budget (many pieces): grouped, shuffled (the external
   grouping path), each also on two forked workers, grouped on a Dask ``local:2`` cluster, and as a
   Parquet file of row groups of 10^5 rows: every per-query value and mean compared with ``==``;
2. stages, in this process, on the first 10^7 rows at most: the whole-file path (the compiled scan and
   the coding of every id, the join and ranking, the metrics) and the streamed one (the compiled
   ``judged`` pass, the metrics), CPU microseconds a row;
3. the whole run through ``rankscope evaluate QRELS RUN --memory-budget B --workers N`` as a process
   under ``/usr/bin/time`` for each N of ``--workers`` (default 1 2), then with ``--scheduler local:2``
   if ``--dask``: wall, rows per second, CPU per row (the workers' included), peak RSS (the largest
   process), load average before and after, and whether the outputs are identical;
4. for each of ``--sizes`` (queries), each of ``--tools`` as a whole process: wall, CPU and peak RSS,
   the bytes per row (of the peak, and of the slope between sizes), and the rows that would fit in
   24 GB at that rate.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_evaluate_files import PYTREC_EVAL, RANX  # beside this script
from extras import require

LINE = 36  # bytes of one run line
N_DOCS = 8_841_823  # MS MARCO's passages
METRICS = ["ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "p@10"]
GB24 = 24 * 1024**3


def _digits(out: np.ndarray, column: int, values: np.ndarray, width: int) -> None:
    for k in range(width):
        out[:, column + width - 1 - k] = 48 + (values // 10**k) % 10


def write_files(folder: Path, queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    """The grouped run and the qrels; ``queries`` x ``depth`` rows, 10^6 rows written at a time."""
    rng = np.random.default_rng(seed)
    run, qrels = folder / "run.trec", folder / "qrels.txt"
    if run.exists() and qrels.exists() and run.stat().st_size == queries * depth * LINE:
        return run, qrels  # kept with --folder from an earlier run of the same size (the seed is not checked)
    block = max(1, 1_000_000 // depth)
    template = np.frombuffer(b"q000000 Q0 d0000000 0000 0.000000 r\n", dtype=np.uint8)
    judged: list[str] = []
    with run.open("wb") as out:
        for first in range(0, queries, block):
            n = min(block, queries - first)
            q = np.repeat(np.arange(first, first + n), depth)
            rank = np.tile(np.arange(1, depth + 1), n)
            offset = rng.integers(0, N_DOCS, size=n)
            doc = (np.repeat(offset, depth) + (rank - 1) * 7919) % N_DOCS
            score = -np.sort(-rng.integers(0, 1_000_000, size=(n, depth)), axis=1).reshape(-1)
            lines = np.tile(template, (n * depth, 1))
            _digits(lines, 1, q, 6)
            _digits(lines, 12, doc, 7)
            _digits(lines, 20, rank, 4)
            _digits(lines, 27, score, 6)
            out.write(lines.tobytes())
            for i in range(n):
                docs = doc[i * depth : (i + 1) * depth]
                seen = rng.choice(docs, size=min(7, depth), replace=False)
                unseen = (offset[i] + N_DOCS // 2 + np.arange(3) * 31) % N_DOCS
                for d in np.concatenate([seen, unseen]):
                    judged.append(f"q{first + i:06d} 0 d{d:07d} {rng.integers(0, 4)}\n")
    qrels.write_text("".join(judged))
    return run, qrels


def head(run: Path, rows: int, to: Path) -> Path:
    """The first ``rows`` lines of ``run`` (fixed width: a byte count)."""
    with run.open("rb") as source, to.open("wb") as out:
        out.write(source.read(rows * LINE))
    return to


def timed(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s (user + system, children included), peak RSS bytes, stdout) of ``argv`` under /usr/bin/time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr.strip()[-400:]}")
    wall, user, system, kb = done.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(kb) * 1024, done.stdout


def rankscope_cli(qrels: Path, run: Path, budget: str | None, where: list[str] | None = None) -> list[str]:
    """``rankscope evaluate`` of the run; ``where``: ``--workers N`` or ``--scheduler local:N``."""
    argv = [str(Path(sys.executable).with_name("rankscope")), "--quiet", "evaluate", str(qrels), str(run), *METRICS]
    return argv + (["--memory-budget", budget] if budget else []) + (where or [])


def equality(qrels: Path, sample: Path, folder: Path) -> str:
    """Whole-file and streamed results of the sample (grouped, shuffled, on two workers, Parquet) compared with ==."""
    from fastparquet import write

    from rankscope.corpora.trec import read_trec_coded
    from rankscope.evaluation import evaluate, streaming
    from rankscope.evaluation.streaming import evaluate_run_file

    streaming.SPLIT_BYTES = 0  # the sample is smaller than the size from which workers split a file

    coded_qrels = read_trec_coded(qrels, "qrels")
    coded_run = read_trec_coded(sample, "run")
    whole = evaluate(coded_qrels, coded_run, METRICS)
    lines = np.frombuffer(sample.read_bytes(), dtype=np.uint8).reshape(-1, LINE)
    shuffled, parquet = folder / "shuffled.trec", folder / "sample.parquet"
    shuffled.write_bytes(lines[np.random.default_rng(1).permutation(len(lines))].tobytes())
    write(str(parquet), coded_run.frame()[["query_id", "doc_id", "score"]], row_group_offsets=100_000)
    verdicts = []
    for name, path, workers, scheduler in (
        ("grouped", sample, 1, None),
        ("shuffled", shuffled, 1, None),
        ("grouped on 2 forked workers", sample, 2, None),
        ("shuffled on 2 forked workers", shuffled, 2, None),
        ("grouped on local:2", sample, 1, "local:2"),
        ("Parquet", parquet, 1, None),
    ):
        part = evaluate_run_file(
            coded_qrels, path, METRICS, memory_budget=64 << 20, workers=workers, scheduler=scheduler
        )
        same = whole.wide().equals(part.wide()) and whole.mean == part.mean and whole.n_queries == part.n_queries
        verdicts.append(f"{name}: {'equal, bit for bit' if same else 'DIFFERENT'}")
    shuffled.unlink()
    parquet.unlink()
    return f"{len(lines):,} rows, {whole.n_queries:,} queries, 64 MiB budget; " + "; ".join(verdicts)


def stages(qrels: Path, run: Path, rows: int) -> list[str]:
    """CPU microseconds a row of each stage of the whole-file path and of the streamed one, on ``rows`` rows."""
    from rankscope.corpora.trec import RUN_LAYOUT, read_trec_coded, scanned_bytes
    from rankscope.corpora.trec_pieces import raw_pieces
    from rankscope.evaluation.engine import _judge_coded, _scored
    from rankscope.evaluation.judged_scan import Judgments
    from rankscope.evaluation.metrics import parse_metrics

    metrics = parse_metrics(METRICS)
    coded_qrels = read_trec_coded(qrels, "qrels")
    part = head(run, rows, run.with_name("stages.trec"))
    clock = time.process_time
    t0 = clock()
    raw = part.read_bytes()
    t1 = clock()
    table = scanned_bytes(raw, RUN_LAYOUT)
    assert table is not None  # noqa: S101 (a generated file the scan accepts)
    t2 = clock()
    judged = _judge_coded(coded_qrels, table, False, relevance_level=1, judged_only=True)
    t3 = clock()
    _scored(judged, metrics)
    t4 = clock()
    del raw, table, judged
    judgments = Judgments(coded_qrels, 1)
    t5 = clock()
    read = judge = score = 0.0
    pieces = iter(raw_pieces(part, 2 << 20, lines=False))
    while True:
        a = clock()
        piece_bytes = next(pieces, None)
        b = clock()
        read += b - a
        if piece_bytes is None:
            break
        piece = judgments.piece(piece_bytes[0], False)
        c = clock()
        judge += c - b
        assert piece is not None and not isinstance(piece, str) and piece.judged is not None  # noqa: S101
        _scored(piece.judged, metrics)
        score += clock() - c
    part.unlink()
    us = 1e6 / rows
    return [
        f"whole file: read {(t1 - t0) * us:.3f}, scan and code every id {(t2 - t1) * us:.3f}, join and rank "
        f"{(t3 - t2) * us:.3f}, metrics {(t4 - t3) * us:.3f}; total {(t4 - t0) * us:.3f} us of CPU a row",
        f"streamed: judgments {(t5 - t4) * us:.3f}, read in 2 MiB pieces {read * us:.3f}, judged pass "
        f"{judge * us:.3f}, metrics {score * us:.3f}; total {(t5 - t4 + read + judge + score) * us:.3f} us of CPU a row",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--budget", default="2G")
    parser.add_argument("--sample-queries", type=int, default=1_000)
    parser.add_argument("--sizes", type=int, nargs="*", default=[], help="queries of the whole-process memory runs")
    parser.add_argument("--tools", nargs="*", default=["rankscope", "pytrec_eval", "ranx"])
    parser.add_argument("--folder", type=Path, help="where the files go (kept); default a temporary folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="--workers of the whole-run commands")
    parser.add_argument("--dask", action="store_true", help="also the whole run with --scheduler local:2")
    parser.add_argument("--skip", nargs="*", default=[], choices=["equality", "stages"], help="parts not run")
    args = parser.parse_args()
    require(["fastparquet", "distributed", *(tool for tool in args.tools if tool != "rankscope")])
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-stream-"))
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < args.queries * args.depth * LINE * 1.3:
        raise SystemExit(
            f"{folder}: {free / 1e9:.1f} GB free, the run needs {args.queries * args.depth * LINE / 1e9:.1f}"
        )
    try:
        run, qrels = write_files(folder, args.queries, args.depth, args.seed)
        rows = args.queries * args.depth
        print(
            f"run {rows:,} rows, {run.stat().st_size / 1e9:.2f} GB; load average {os.getloadavg()[0]:.1f}", flush=True
        )
        if "equality" not in args.skip:
            sample = head(run, min(args.sample_queries, args.queries) * args.depth, folder / "sample.trec")
            print("equality:", equality(qrels, sample, folder), flush=True)
        if "stages" not in args.skip:
            for line in stages(qrels, run, min(rows, 10_000_000)):
                print("stages,", line, flush=True)
        outputs = set()
        wheres = [["--workers", str(n)] for n in args.workers] + ([["--scheduler", "local:2"]] if args.dask else [])
        for where in wheres:
            load = os.getloadavg()[0]
            wall, cpu, peak, out = timed(rankscope_cli(qrels, run, args.budget, where))
            outputs.add(out)
            print(f"rankscope evaluate --memory-budget {args.budget} {' '.join(where)}: "
                  f"{wall:.1f} s wall ({rows / wall / 1e6:.2f} M rows/s), {cpu:.1f} s CPU ({cpu / rows * 1e6:.3f} us a row, "
                  f"{rows / cpu / 1e6:.2f} M rows per CPU-second), peak RSS {peak / 2**30:.2f} GiB; load average "
                  f"{load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        print("the commands' outputs:", "identical" if len(outputs) == 1 else "DIFFERENT", flush=True)
        peaks: dict[str, list[tuple[int, float]]] = {}
        for size in args.sizes:
            part = head(run, size * args.depth, folder / f"head{size}.trec")
            judged = folder / f"qrels{size}.txt"  # the part's queries only (ranx refuses others)
            with qrels.open() as lines:
                judged.write_text("".join(itertools.islice(lines, 10 * size)))
            for tool in args.tools:
                argv = {
                    "rankscope": rankscope_cli(judged, part, None),
                    "pytrec_eval": [sys.executable, "-c", PYTREC_EVAL, str(judged), str(part)],
                    "ranx": [sys.executable, "-c", RANX, str(judged), str(part)],
                }[tool]
                wall, cpu, peak, _ = timed(argv)
                n = size * args.depth
                peaks.setdefault(tool, []).append((n, peak))
                print(f"{tool} whole file, {n:,} rows: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak / 2**30:.2f} GiB, "
                      f"{peak / n:.0f} bytes/row -> about {GB24 / (peak / n) / 1e6:,.0f} M rows in 24 GB", flush=True)  # fmt: skip
            part.unlink()
        for tool, points in peaks.items():
            if len(points) >= 2:
                (n0, p0), (n1, p1) = points[0], points[-1]
                slope = (p1 - p0) / (n1 - n0)
                print(f"{tool}: {slope:.0f} bytes a row from {n0:,} to {n1:,} rows -> 24 GB at about "
                      f"{(GB24 - p0) / slope / 1e6 + n0 / 1e6:,.0f} M rows")  # fmt: skip
    finally:
        if args.folder is None:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
