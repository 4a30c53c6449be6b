"""``rankscope evaluate --memory-budget``: a TREC run of ``--queries`` x ``--depth`` rows scored in
bounded memory, checked bit for bit against the whole-file path, with the whole-process memory of
pytrec_eval, ranx and rankscope's in-memory path per row at smaller sizes.

    python benchmarks/bench_stream_evaluate.py --queries 100000 --depth 1000 --budget 2G   # 10^8 rows, 3.6 GB
    python benchmarks/bench_stream_evaluate.py --queries 10000 --sizes 1000 10000 --tools pytrec_eval ranx

Files go to ``--folder`` (default: a temporary folder, removed at the end): a grouped run with
fixed-width lines (``q000001 Q0 d0001234 0001 0.873245 r``; scores drawn from 10^6 values, about
one tie a query, as a real run's), written 10^6 rows at a time by numpy, and qrels of 10 judgments a query (7 retrieved, 3 not,
labels 0-3). Printed:

1. equality: the first ``--sample-queries`` queries (10^6 rows) scored whole (``evaluate`` of the
   coded file) and streamed with a 64 MiB budget (many pieces), grouped and shuffled (the external
   grouping path): every per-query value and mean compared with ``==``;
2. the whole run through ``rankscope evaluate QRELS RUN --memory-budget B`` as a process under
   ``/usr/bin/time``: wall, rows per second, peak RSS;
3. for each of ``--sizes`` (queries), each of ``--tools`` as a whole process: wall and peak RSS,
   the bytes per row, and the rows that would fit in 24 GB at that rate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_evaluate_files import PYTREC_EVAL, RANX  # beside this script

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


def timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, peak RSS bytes, stdout) of ``argv`` as a process under /usr/bin/time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr.strip()[-400:]}")
    wall, kb = done.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kb) * 1024, done.stdout


def rankscope_cli(qrels: Path, run: Path, budget: str | None) -> list[str]:
    argv = [str(Path(sys.executable).with_name("rankscope")), "--quiet", "evaluate", str(qrels), str(run), *METRICS]
    return argv + (["--memory-budget", budget] if budget else [])


def equality(qrels: Path, sample: Path, folder: Path) -> str:
    """Whole-file and streamed results of the sample, grouped and shuffled, compared with ==."""
    from rankscope.corpora.trec import read_trec_coded
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.streaming import evaluate_run_file

    coded_qrels = read_trec_coded(qrels, "qrels")
    whole = evaluate(coded_qrels, read_trec_coded(sample, "run"), METRICS)
    lines = np.frombuffer(sample.read_bytes(), dtype=np.uint8).reshape(-1, LINE)
    shuffled = folder / "shuffled.trec"
    shuffled.write_bytes(lines[np.random.default_rng(1).permutation(len(lines))].tobytes())
    verdicts = []
    for name, path in (("grouped", sample), ("shuffled", shuffled)):
        part = evaluate_run_file(coded_qrels, path, METRICS, memory_budget=64 << 20)
        same = whole.wide().equals(part.wide()) and whole.mean == part.mean and whole.n_queries == part.n_queries
        verdicts.append(f"{name}: {'equal, bit for bit' if same else 'DIFFERENT'}")
    shuffled.unlink()
    return f"{len(lines):,} rows, {whole.n_queries:,} queries, 64 MiB budget; " + "; ".join(verdicts)


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
    args = parser.parse_args()
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
        print(f"run {rows:,} rows, {run.stat().st_size / 1e9:.2f} GB; load average {os.getloadavg()[0]:.1f}")
        sample = head(run, args.sample_queries * args.depth, folder / "sample.trec")
        print("equality:", equality(qrels, sample, folder))
        wall, peak, _ = timed(rankscope_cli(qrels, run, args.budget))
        print(f"rankscope evaluate --memory-budget {args.budget}: {wall:.1f} s wall, {rows / wall / 1e6:.2f} M rows/s, "
              f"peak RSS {peak / 2**30:.2f} GiB")  # fmt: skip
        for size in args.sizes:
            part = head(run, size * args.depth, folder / f"head{size}.trec")
            for tool in args.tools:
                argv = {
                    "rankscope": rankscope_cli(qrels, part, None),
                    "pytrec_eval": [sys.executable, "-c", PYTREC_EVAL, str(qrels), str(part)],
                    "ranx": [sys.executable, "-c", RANX, str(qrels), str(part)],
                }[tool]
                wall, peak, _ = timed(argv)
                per_row = peak / (size * args.depth)
                print(f"{tool} whole file, {size * args.depth:,} rows: {wall:.1f} s wall, peak RSS {peak / 2**30:.2f} GiB, "
                      f"{per_row:.0f} bytes/row -> about {GB24 / per_row / 1e6:,.0f} M rows in 24 GB")  # fmt: skip
            part.unlink()
    finally:
        if args.folder is None:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
