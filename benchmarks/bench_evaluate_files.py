"""Whole-process evaluation from files, as a user runs it: each tool reads the TREC qrels and run
from disk, computes the six default metrics and prints them, in its own process under
``/usr/bin/time`` (wall time and peak RSS of the whole process, start-up and imports included).

The files are written once (untimed) from the same synthetic run as ``bench_evaluate.py``:
``--queries`` x ``--depth`` rows with random scores, graded qrels. Tools:

- rankscope: ``rankscope evaluate QRELS RUN -m ...`` (strict reading: every line checked);
- pytrec_eval: its own readers ``parse_qrel``/``parse_run`` (plain Python) + ``RelevanceEvaluator``;
- ir_measures: its command line (``ir_measures QRELS RUN MEASURES``);
- ranx: ``Qrels.from_file``/``Run.from_file`` + ``evaluate`` (numba compilation included,
  as a first call in a fresh process has it).

    python benchmarks/bench_evaluate_files.py                  # 2,000 x 1,000 (a 77 MB run)
    python benchmarks/bench_evaluate_files.py --queries 10000  # 10,000 x 1,000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_evaluate import build_arrays, frames  # beside this script
from extras import require

from rankscope.corpora.trec import write_trec_qrels, write_trec_run

TOOLS = ("rankscope", "pytrec_eval", "ir_measures", "ranx")
TOOL_MODULES = {"pytrec_eval": "pytrec_eval", "ir_measures": "ir_measures", "ranx": "ranx"}

PYTREC_EVAL = """
import sys, statistics, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = {"ndcg_cut.10", "recall.100", "recip_rank", "success.10", "map", "P.10"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = next(iter(per_query.values())).keys()
for m in sorted(names):
    print(m, statistics.fmean(v[m] for v in per_query.values()))
"""

RANX = """
import sys, ranx
qrels = ranx.Qrels.from_file(sys.argv[1], kind="trec")
run = ranx.Run.from_file(sys.argv[2], kind="trec")
print(ranx.evaluate(qrels, run, ["ndcg@10", "recall@100", "mrr@10", "hit_rate@10", "map", "precision@10"]))
"""


def command(tool: str, qrels: Path, run: Path) -> list[str]:
    """The command line that runs ``tool`` on the two files."""
    if tool == "rankscope":
        metrics = ["ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "p@10"]
        return [str(Path(sys.executable).with_name("rankscope")), "evaluate", str(qrels), str(run), *metrics]
    if tool == "pytrec_eval":
        return [sys.executable, "-c", PYTREC_EVAL, str(qrels), str(run)]
    if tool == "ir_measures":
        measures = "nDCG@10 R@100 RR@10 Success@10 AP P@10"
        return [sys.executable, "-m", "ir_measures", str(qrels), str(run), measures]
    if tool == "ranx":
        return [sys.executable, "-c", RANX, str(qrels), str(run)]
    raise SystemExit(f"unknown tool {tool!r}")


def timed(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one run of ``argv`` under /usr/bin/time. CPU time (user +
    system) is shown too: on a busy machine it moves less than the wall time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {done.stderr.strip()[-300:]}")
    wall, user, system, kb = done.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(kb) / 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--corpus", type=int, default=100_000)
    parser.add_argument("--judged", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="runs per tool; the table shows the fastest")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    args = parser.parse_args()
    require(TOOL_MODULES[tool] for tool in args.tools if tool in TOOL_MODULES)
    if not Path("/usr/bin/time").exists():
        raise SystemExit("needs /usr/bin/time (apt-get install time)")
    folder = Path(tempfile.mkdtemp(prefix="bench-evaluate-files-"))
    try:
        qrels_frame, run_frame = frames(
            build_arrays(args.queries, args.depth, args.corpus, args.judged, "sorted", args.seed)
        )
        qrels, run = folder / "qrels.txt", folder / "run.trec"
        write_trec_qrels(qrels_frame, qrels)
        write_trec_run(run_frame, run)
        del qrels_frame, run_frame
        size = run.stat().st_size / 1e6
        print(f"{args.queries:,} queries x {args.depth:,} docs: run {size:.0f} MB; fastest of {args.repeats} runs")
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        print(f"{'tool':<12} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}  wall vs pytrec_eval")
        results = {}
        for tool in args.tools:
            runs = [timed(command(tool, qrels, run)) for _ in range(args.repeats)]
            results[tool] = min(runs)
        base = results.get("pytrec_eval", (None,))[0]
        for tool, (wall, cpu, peak, _) in results.items():
            ratio = f"{wall / base:.2f}x" if base else "-"
            print(f"{tool:<12} {wall:>7.2f} {cpu:>7.2f} {peak:>8.0f}  {ratio}")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
