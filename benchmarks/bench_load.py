"""How long loading takes: a 10,000-document collection in each format, and a large TREC run.

Run: ``python benchmarks/bench_load.py [--docs 10000] [--run-lines 1000000] [--repeats 3]``

Writes synthetic collections to a temporary folder (SMART in Cranfield's layout,
BEIR, and a TREC-style folder with a TREC qrels file), loads each with
``corpora.load_dataset`` and prints the median wall time of ``--repeats`` loads.
Then reads a run file of ``--run-lines`` lines with rankscope, ir_measures and
ranx, each in its own process (fresh interpreter, imports excluded from the
timing) so one library's caches or memory do not slow another's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS_PER_DOC = 120


def _words(rng: np.random.Generator, vocabulary: np.ndarray, n: int) -> str:
    return " ".join(vocabulary[rng.zipf(1.3, n) % len(vocabulary)])


def write_collections(root: Path, n_docs: int, n_queries: int = 200, seed: int = 0) -> dict[str, Path]:
    """The same synthetic collection as SMART, BEIR and TREC-style folders."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(20_000)])
    docs = [(str(i), _words(rng, vocabulary, 8), _words(rng, vocabulary, WORDS_PER_DOC)) for i in range(1, n_docs + 1)]
    queries = [(str(i), _words(rng, vocabulary, 10)) for i in range(1, n_queries + 1)]
    qrels = [
        (q, str(d), int(rng.integers(1, 5)))
        for q, _ in queries
        for d in rng.choice(np.arange(1, n_docs + 1), size=8, replace=False)
    ]
    smart = root / "cranfield"
    smart.mkdir()
    (smart / "cran.all.1400").write_text("".join(f".I {d}\n.T\n{t}\n.A\nauthor\n.W\n{x}\n" for d, t, x in docs))
    (smart / "cran.qry").write_text("".join(f".I {q.zfill(3)}\n.W\n{x}\n" for q, x in queries))
    (smart / "cranqrel").write_text("".join(f"{q} {d} {5 - r}\n" for q, d, r in qrels))
    beir = root / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, t, x in docs)
    )
    (beir / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": x}) + "\n" for q, x in queries))
    beir_qrels = "".join(f"{q}\t{d}\t{r}\n" for q, d, r in qrels)
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + beir_qrels)
    trec = root / "trec"
    trec.mkdir()
    (trec / "corpus.tsv").write_text("doc_id\ttitle\ttext\n" + "".join(f"{d}\t{t}\t{x}\n" for d, t, x in docs))
    (trec / "queries.tsv").write_text("query_id\ttext\n" + "".join(f"{q}\t{x}\n" for q, x in queries))
    (trec / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels))
    return {"SMART (Cranfield layout)": smart, "BEIR (corpus.jsonl)": beir, "TREC-style (corpus.tsv + qrels)": trec}


def write_run(path: Path, n_lines: int, per_query: int = 1000, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as out:
        for q in range(n_lines // per_query):
            scores = np.sort(rng.random(per_query))[::-1].tolist()
            docs = rng.choice(1_000_000, size=per_query, replace=False)
            out.write("".join(f"q{q} Q0 D{d} {r} {s!r} bench\n" for r, (d, s) in enumerate(zip(docs, scores), 1)))


RUN_READERS = {
    "rankscope read_trec_run": "from rankscope.corpora.trec import read_trec_run as read\nload = lambda p: len(read(p))",
    "ir_measures read_trec_run": "import ir_measures\nload = lambda p: sum(1 for _ in ir_measures.read_trec_run(p))",
    "ranx Run.from_file": (
        "from ranx import Run\nload = lambda p: sum(len(v) for v in Run.from_file(p, kind='trec').run.values())"
    ),
}
_CHILD = """
import statistics, sys, time
{setup}
times = []
for _ in range({repeats}):
    start = time.perf_counter(); n = load(sys.argv[1]); times.append(time.perf_counter() - start)
print(statistics.median(times), n)
"""


def time_in_subprocess(setup: str, path: Path, repeats: int) -> tuple[float, int] | str:
    child = _CHILD.format(setup=setup, repeats=repeats)
    done = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1]
    seconds, count = done.stdout.split()
    return float(seconds), int(count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--run-lines", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from rankscope.corpora import load_dataset

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(
            f"Loading a synthetic collection: {args.docs} documents x ~{WORDS_PER_DOC} words, 200 queries, "
            f"1600 judgments (median of {args.repeats})\n"
        )
        print(f"{'format':34} {'MB':>6} {'seconds':>8} {'docs/s':>10}")
        for label, folder in write_collections(root, args.docs).items():
            size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                ds = load_dataset(folder)
                times.append(time.perf_counter() - start)
            assert len(ds.corpus) == args.docs
            median = statistics.median(times)
            print(f"{label:34} {size:6.1f} {median:8.3f} {args.docs / median:10,.0f}")
        run = root / "run.txt"
        write_run(run, args.run_lines)
        print(
            f"\nReading a TREC run of {args.run_lines:,} lines ({run.stat().st_size / 1e6:.0f} MB), "
            f"each library in its own process (median of {args.repeats})\n"
        )
        print(f"{'reader':28} {'seconds':>8} {'lines':>10}")
        for label, setup in RUN_READERS.items():
            result = time_in_subprocess(setup, run, args.repeats)
            if isinstance(result, str):
                print(f"{label:28} failed: {result}")
            else:
                print(f"{label:28} {result[0]:8.3f} {result[1]:10,}")


if __name__ == "__main__":
    main()
