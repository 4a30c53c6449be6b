"""Time rankscope's evaluate against ranx, pytrec_eval and ir_measures on one big run.

The run has ``--queries`` queries x ``--depth`` documents drawn from a corpus of
``--corpus`` ids, random float64 scores, and graded qrels (labels 0-3: ``--judged``
judged documents per query among the retrieved ones plus half as many not retrieved).
The six default metrics are computed by every tool, each in its own fresh process:

- first call: the first evaluation in the process (ranx's numba compilation, or
  loading its on-disk cache, lands here);
- warm: median of ``--repeats`` further calls;
- memory: RSS holding the inputs, and the peak RSS while evaluating (VmHWM, reset
  after the inputs are built), plus ``getrusage`` maxrss of the whole child.

Each tool gets its fastest natural in-memory input, built before timing starts
(conversion is NOT timed): rankscope gets pandas DataFrames, ranx its ``Qrels``/``Run``
objects, pytrec_eval and ir_measures dicts of dicts (ir_measures hands those to its
pytrec_eval backend as they are, where a DataFrame would be converted on every call).
Timed: one evaluation call, including what each tool builds from the qrels per call
(pytrec_eval's ``RelevanceEvaluator``; rankscope reads the qrels frame).
pytrec_eval has no MRR@10, so it computes recip_rank.

    python benchmarks/bench_evaluate.py                    # full size: 10,000 x 1,000
    python benchmarks/bench_evaluate.py --queries 500      # quick
    python benchmarks/bench_evaluate.py --order shuffled   # run rows in random order
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from extras import require  # benchmarks/extras.py, beside this script

TOOLS = ("rankscope", "ranx", "pytrec_eval", "ir_measures")
NDCG10 = {"rankscope": "ndcg@10", "ranx": "ndcg@10", "pytrec_eval": "ndcg_cut_10", "ir_measures": "nDCG@10"}
INPUTS = {  # what each tool is given (built untimed) and what one timed call does
    "rankscope": "DataFrames; evaluate()",
    "ranx": "Qrels/Run objects; evaluate()",
    "pytrec_eval": "dicts of dicts; RelevanceEvaluator(qrels) + evaluate(run)",
    "ir_measures": "dicts of dicts; calc_aggregate()",
}
LABEL_P = (0.4, 0.3, 0.2, 0.1)  # labels 0, 1, 2, 3


def build_arrays(n_queries: int, depth: int, corpus: int, judged: int, order: str, seed: int) -> dict:
    """Integer-coded run and qrels (deterministic for a seed); tools turn them into their own input."""
    rng = np.random.default_rng(seed)
    docs = np.stack([rng.choice(corpus, depth + judged, replace=False) for _ in range(n_queries)])
    run_docs = docs[:, :depth]
    scores = rng.random((n_queries, depth))
    if order == "sorted":
        scores = -np.sort(-scores, axis=1)  # a retriever's output: best first
    picked = np.argsort(rng.random((n_queries, depth)), axis=1)[:, :judged]  # judged among retrieved
    judged_docs = np.concatenate(
        [np.take_along_axis(run_docs, picked, axis=1), docs[:, depth : depth + judged // 2]], 1
    )
    labels = rng.choice(len(LABEL_P), size=judged_docs.shape, p=LABEL_P)
    run_q = np.repeat(np.arange(n_queries), depth)
    arrays = {
        "run_q": run_q,
        "run_d": run_docs.reshape(-1),
        "run_s": scores.reshape(-1),
        "qrels_q": np.repeat(np.arange(n_queries), judged_docs.shape[1]),
        "qrels_d": judged_docs.reshape(-1),
        "qrels_l": labels.reshape(-1),
    }
    if order == "shuffled":
        perm = rng.permutation(len(run_q))
        for key in ("run_q", "run_d", "run_s"):
            arrays[key] = arrays[key][perm]
    return arrays


def frames(arrays: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """qrels and run DataFrames with string ids (one str object per distinct id, as a retriever makes)."""
    qnames = np.array([f"q{i}" for i in range(int(arrays["qrels_q"].max()) + 1)], dtype=object)
    n_docs = int(max(arrays["run_d"].max(), arrays["qrels_d"].max())) + 1
    dnames = np.array([f"doc{i}" for i in range(n_docs)], dtype=object)
    qrels = pd.DataFrame(
        {"query_id": qnames[arrays["qrels_q"]], "doc_id": dnames[arrays["qrels_d"]], "relevance": arrays["qrels_l"]}
    )
    run = pd.DataFrame(
        {"query_id": qnames[arrays["run_q"]], "doc_id": dnames[arrays["run_d"]], "score": arrays["run_s"]}
    )
    return qrels, run


def nested(frame: pd.DataFrame, value: str, cast: type) -> dict[str, dict[str, float]]:
    out: dict[str, dict] = {}
    for q, d, v in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), frame[value].tolist()):
        out.setdefault(q, {})[d] = cast(v)
    return out


TOOL_MODULES = {"ranx": "ranx", "pytrec_eval": "pytrec_eval", "ir_measures": "ir_measures"}
"""The competitor each tool name needs installed (all in the ``bench`` extra)."""


def prepare(tool: str, arrays: dict) -> tuple[Callable[[], dict[str, float]], object]:
    """Build the tool's input (untimed) and return (evaluate-once callable, the input to keep alive)."""
    qrels, run = frames(arrays)
    if tool == "rankscope":
        from rankscope.evaluation import evaluate

        return (lambda: evaluate(qrels, run).mean), (qrels, run)
    if tool == "ranx":
        import ranx

        ids = {"query_id": object, "doc_id": object}  # ranx refuses pandas' str dtype
        rq = ranx.Qrels.from_df(qrels.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
        rr = ranx.Run.from_df(run.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        names = ["ndcg@10", "recall@100", "mrr@10", "hit_rate@10", "map", "precision@10"]
        return (lambda: ranx.evaluate(rq, rr, names, save_results_in_run=False)), (rq, rr)
    if tool == "pytrec_eval":
        import pytrec_eval

        qd, rd = nested(qrels, "relevance", int), nested(run, "score", float)
        measures = {"ndcg_cut.10", "recall.100", "recip_rank", "success.10", "map", "P.10"}

        def once() -> dict[str, float]:
            per_query = pytrec_eval.RelevanceEvaluator(qd, measures).evaluate(rd)
            names = next(iter(per_query.values())).keys()
            return {m: float(np.mean([v[m] for v in per_query.values()])) for m in names}

        return once, (qd, rd)
    if tool == "ir_measures":
        import ir_measures
        from ir_measures import AP, RR, P, R, Success, nDCG

        qd, rd = nested(qrels, "relevance", int), nested(run, "score", float)
        measures = [nDCG @ 10, R @ 100, RR @ 10, Success @ 10, AP, P @ 10]
        return (lambda: {str(k): v for k, v in ir_measures.calc_aggregate(measures, qd, rd).items()}), (qd, rd)
    raise SystemExit(f"unknown tool {tool!r}")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def child(tool: str, args: argparse.Namespace) -> None:
    """Runs in its own process: build input, time the first and the warm calls, report JSON."""
    arrays = build_arrays(args.queries, args.depth, args.corpus, args.judged, args.order, args.seed)
    once, keep = prepare(tool, arrays)
    del arrays
    gc.collect()
    input_kb = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM: peak from here on
    start = time.perf_counter()
    means = once()
    first = time.perf_counter() - start
    warm = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        once()
        warm.append(time.perf_counter() - start)
    report = {
        "tool": tool,
        "first": first,
        "warm": statistics.median(warm),
        "input_mb": input_kb / 1024,
        "peak_mb": _status_kb("VmHWM") / 1024,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "means": {str(k): float(v) for k, v in means.items()},
        "alive": keep is not None,
    }
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--corpus", type=int, default=100_000)
    parser.add_argument("--judged", type=int, default=20)
    parser.add_argument("--order", choices=("sorted", "shuffled"), default="sorted")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    parser.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args)
        return
    passthrough = [
        f"--{k}={getattr(args, k)}" for k in ("queries", "depth", "corpus", "judged", "order", "repeats", "seed")
    ]
    print(
        f"{args.queries} queries x {args.depth} docs ({args.order}), corpus {args.corpus}, "
        f"{args.judged}+{args.judged // 2} judgments per query; warm = median of {args.repeats}"
    )
    header = f"{'tool':<12} {'first s':>9} {'warm s':>8} {'input MB':>9} {'peak MB':>8} {'maxrss MB':>10}  ndcg@10   input; timed call"
    print(header)
    print("-" * len(header))
    require(TOOL_MODULES[tool] for tool in args.tools if tool in TOOL_MODULES)
    for tool in args.tools:
        done = subprocess.run(
            [sys.executable, __file__, "--child", tool, *passthrough], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            print(f"{tool:<12} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        ndcg = r["means"][NDCG10[tool]]
        print(
            f"{tool:<12} {r['first']:>9.2f} {r['warm']:>8.2f} {r['input_mb']:>9.0f} {r['peak_mb']:>8.0f} "
            f"{r['maxrss_mb']:>10.0f}  {ndcg:.6f}  {INPUTS[tool]}"
        )


if __name__ == "__main__":
    main()
