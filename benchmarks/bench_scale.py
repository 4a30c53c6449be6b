"""Scale on one machine: rankscope, bm25s and PISA on a synthetic MS MARCO-sized corpus, side by side.

    python benchmarks/bench_scale.py generate --docs 1000000 --out DIR    # the corpus folder only
    python benchmarks/bench_scale.py run --docs 1000000 --work DIR        # generate (once) + every system
    python benchmarks/bench_scale.py run --docs 100000 --work DIR --systems rankscope pisa
    python benchmarks/bench_scale.py threads --docs 1000000 --work DIR    # 1 vs 2 threads on run's indexes
    python benchmarks/bench_scale.py threads-cpu --docs 1000000 --work DIR  # rankscope's 2 threads by CPU time

The corpus imitates MS MARCO passages: lengths lognormal (median 55 tokens, sigma 0.5),
words drawn from a Zipf distribution (exponent 1) over 2,000,000 word types named
``w<rank>``; 1,000 queries of 2-8 words drawn from the same distribution without its 100
most frequent words (the stopwords a real analyzer drops) and only words the corpus holds.
Everything is seeded (``--seed``), so a document count always gives the same files:
``corpus.tsv`` (doc_id, text), ``queries.tsv`` and a placeholder ``qrels`` (one judged
document per query), which together form a folder ``rankscope search --dataset`` reads.

Each system runs in its own process under ``/usr/bin/time -v`` (wall time and peak RSS of
the whole process: reading the corpus, indexing, then answering the queries), and reports
its own index time and single-thread top-10 throughput (best of 3 passes over the queries,
after one warm-up query), by wall clock and by CPU time, then the same queries on two threads
(wall clock; ``RANKSCOPE_NUM_THREADS=2``, bm25s's ``n_threads=2``, PISA's ``threads=2``) and the
ratio to one thread, which only a quiet machine (two free cores) can show (``threads`` measures it again
for every system on the saved indexes, one and two threads alternating): on a shared machine the CPU columns
(``/usr/bin/time``'s user + system time of the whole process, and queries per CPU second) are
the steady ones. BM25 everywhere with k1=1.5, b=0.75, no stemming or stopwords
needed (the words are synthetic). Systems:

- ``rankscope``: ``rankscope search --dataset DIR --retriever bm25 --k 10`` as a user runs it
  (the in-memory index; whole process only);
- ``rankscope-stream``: the streaming index of ``rankscope index`` (default memory budget, two
  processes analysing the text) through the Python API, then the queries (peak RSS is that of
  the largest process: ``/usr/bin/time`` reports the maximum over the process and its children);
- ``bm25s`` (numpy backend) and ``bm25s-numba`` (``pip install -e ".[bench]"``);
- ``pisa``: PISA through ``pyterrier-pisa`` (its compiled engine, block-max WAND; no Java),
  one indexing and one query thread (``pip install -e ".[pisa]"``).

Not part of CI: at 1M documents the whole run takes a quarter of an hour on two cores.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from extras import require  # benchmarks/extras.py, beside this script

SEED = 0
N_TYPES = 2_000_000
MEDIAN_LEN, LEN_SIGMA = 55, 0.5
N_QUERIES, TOP_K = 1_000, 10
QUERY_WORDS = (2, 8)
SKIPPED_FREQUENT = 100
K1, B = 1.5, 0.75
GRID = ((0.9, 0.4), (1.2, 0.75), (2.0, 0.9))
"""(k1, b) points timed as tune visits them (re-weight, then the 1,000 queries)."""
CHUNK = 200_000
"""Documents generated (and written) at a time: memory stays bounded at any corpus size."""


# --- the corpus --------------------------------------------------------------------------
def generate(n_docs: int, out: Path, seed: int = SEED) -> None:
    """Write corpus.tsv, queries.tsv and qrels for ``n_docs`` documents into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    prob = 1.0 / np.arange(1, N_TYPES + 1)
    cdf = np.cumsum(prob / prob.sum())
    words = np.array([f"w{r}" for r in range(1, N_TYPES + 1)], dtype=object)
    seen = np.zeros(N_TYPES, dtype=bool)
    tmp = out / "corpus.tsv.tmp"
    with tmp.open("w", encoding="utf-8") as sink:
        sink.write("doc_id\ttext\n")
        for start in range(0, n_docs, CHUNK):
            size = min(CHUNK, n_docs - start)
            lengths = np.maximum(1, np.round(rng.lognormal(np.log(MEDIAN_LEN), LEN_SIGMA, size))).astype(np.int64)
            tokens = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), N_TYPES - 1)
            seen[tokens] = True
            bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
            text = words[tokens]
            sink.writelines(
                f"{start + i}\t{' '.join(text[a:b])}\n" for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
            )
    query_prob = np.where(seen, prob, 0.0)
    query_prob[:SKIPPED_FREQUENT] = 0.0
    query_cdf = np.cumsum(query_prob / query_prob.sum())
    with (out / "queries.tsv").open("w", encoding="utf-8") as sink:
        sink.write("query_id\ttext\n")
        for q in range(N_QUERIES):
            n_words = int(rng.integers(QUERY_WORDS[0], QUERY_WORDS[1] + 1))
            drawn = np.minimum(np.searchsorted(query_cdf, rng.random(n_words), side="right"), N_TYPES - 1)
            sink.write(f"q{q}\t{' '.join(words[drawn])}\n")
    with (out / "qrels").open("w", encoding="utf-8") as sink:
        sink.writelines(f"q{q} 0 {int(rng.integers(n_docs))} 1\n" for q in range(N_QUERIES))
    tmp.replace(out / "corpus.tsv")  # last: a folder with corpus.tsv is complete


def read_tsv(path: Path) -> Iterator[tuple[str, str]]:
    """(id, text) rows of a two-column TSV written by :func:`generate` (header skipped)."""
    with path.open(encoding="utf-8") as source:
        next(source)
        for line in source:
            key, text = line.rstrip("\n").split("\t", 1)
            yield key, text


# --- the systems (each runs in its own process) ---------------------------------------------
def _throughput(answer: Callable[[], object], n_queries: int, warm_up: Callable[[], object]) -> dict[str, float]:
    """Queries/s by wall clock and by the process's CPU time, each the best of three passes (after a
    warm-up call). On a shared machine the CPU figure is the steady one (one thread: equal when quiet)."""
    warm_up()
    wall, cpu = [], []
    for _ in range(3):
        start = time.process_time()
        wall.append(_seconds(answer))
        cpu.append(time.process_time() - start)
    return {"qps": n_queries / min(wall), "qps_cpu": n_queries / min(cpu)}


def _two_threads(answer: Callable[[], object], n_queries: int, one: dict[str, float]) -> dict[str, float]:
    """Queries/s by wall clock on two threads (best of three passes, warmed up), beside the one-thread
    figure measured just before on the same index: the speed-up needs a quiet machine (two free cores)."""
    answer()
    qps_2 = n_queries / min(_seconds(answer) for _ in range(3))
    return {"qps_2": qps_2, "speedup_2": qps_2 / one["qps"]}


def _seconds(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def worker_rankscope_stream(data: Path, work: Path) -> dict[str, float]:
    """The streaming index (``rankscope index``'s code: default memory budget, two processes), then search."""
    from rankscope.corpora.stream import iter_corpus
    from rankscope.retrieval.base import document_text
    from rankscope.retrieval.bm25 import BM25

    os.environ["RANKSCOPE_NUM_THREADS"] = "1"
    model = BM25(k1=K1, b=B)
    documents = ((d, document_text(title, text)) for d, title, text in iter_corpus(data / "corpus.tsv"))
    index_s = _seconds(lambda: model.build_index(work / "rankscope-index", documents, workers=2))
    queries = dict(read_tsv(data / "queries.tsv"))
    first = dict(itertools.islice(queries.items(), 1))
    qps = _throughput(lambda: model.search(queries, k=TOP_K), len(queries), lambda: model.search(first, k=TOP_K))
    os.environ["RANKSCOPE_NUM_THREADS"] = "2"
    qps |= _two_threads(lambda: model.search(queries, k=TOP_K), len(queries), qps)
    os.environ["RANKSCOPE_NUM_THREADS"] = "1"
    # what tune does per grid point: re-weight the stored counts (no re-tokenising), then search
    reweight = [_seconds(lambda k1=k1, b=b: model.set_params(k1=k1, b=b)) for k1, b in GRID]
    point = [
        _seconds(lambda k1=k1, b=b: (model.set_params(k1=k1, b=b), model.search(queries, k=TOP_K))) for k1, b in GRID
    ]
    return {"index_s": index_s, **qps, "reweight_s": min(reweight), "grid_point_s": min(point)}


def worker_bm25s(data: Path, backend: str) -> dict[str, float]:
    import bm25s

    texts = [text for _, text in read_tsv(data / "corpus.tsv")]
    queries = [text for _, text in read_tsv(data / "queries.tsv")]
    model = bm25s.BM25(method="lucene", k1=K1, b=B, backend=backend)

    def build() -> None:
        model.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)

    index_s = _seconds(build)
    known = _bm25s_queries(model, queries)

    def answer(batch: list[list[str]], threads: int = 0) -> object:
        return model.retrieve(batch, k=TOP_K, show_progress=False, n_threads=threads)  # 0: no worker threads

    qps = _throughput(lambda: answer(known), len(known), lambda: answer(known[:1]))
    qps |= _two_threads(lambda: answer(known, 2), len(known), qps)
    return {"index_s": index_s, **qps}


def _bm25s_queries(model: Any, queries: list[str]) -> list[list[str]]:
    """bm25s's query tokens, words outside its vocabulary dropped (a query left empty keeps one word)."""
    import bm25s

    tokens = bm25s.tokenize(queries, stopwords=None, return_ids=False, show_progress=False)
    return [[t for t in q if t in model.vocab_dict] or [next(iter(model.vocab_dict))] for q in tokens]


def worker_pisa(data: Path, work: Path) -> dict[str, float]:
    import pandas as pd
    from pyterrier_pisa import PisaIndex

    folder = work / "pisa-index"
    shutil.rmtree(folder, ignore_errors=True)
    index = PisaIndex(str(folder), stemmer="none", stops="none", threads=1)
    index_s = _seconds(lambda: index.index({"docno": d, "text": t} for d, t in read_tsv(data / "corpus.tsv")))
    queries = pd.DataFrame(list(read_tsv(data / "queries.tsv")), columns=["qid", "query"])
    model = index.bm25(k1=K1, b=B, num_results=TOP_K, threads=1)
    qps = _throughput(lambda: model.transform(queries), len(queries), lambda: model.transform(queries[:1]))
    two = index.bm25(k1=K1, b=B, num_results=TOP_K, threads=2)
    qps |= _two_threads(lambda: two.transform(queries), len(queries), qps)
    return {"index_s": index_s, **qps}


def threads(data: Path, work: Path, systems: list[str], rounds: int = 5) -> None:
    """Each system's top-10 throughput on one and on two threads, alternating (``rounds`` passes each, best
    kept, after a warm-up), on the indexes ``run`` saved in ``work`` (bm25s's is built and saved the first
    time): every system measured the same way in one run, without indexing again, for a quiet machine.
    Each system's answers on one and two threads must be identical (rankscope's: tests/retrieval/test_bm25.py)."""
    print(f"{N_QUERIES:,} queries, top {TOP_K}, wall clock, best of {rounds} passes, one and two threads alternating")
    print("| system | 1 thread (queries/s) | 2 threads (queries/s) | 2 / 1 | load average before, after |")
    print("|---|---:|---:|---:|---|")
    for system in systems:
        load_before = os.getloadavg()
        one, two = _one_and_two(system, data, work, rounds)
        loads = f"{_load(load_before)}; {_load(os.getloadavg())}"
        print(f"| {system} | {one:,.0f} | {two:,.0f} | {two / one:.2f} | {loads} |", flush=True)


def _one_and_two(system: str, data: Path, work: Path, rounds: int) -> tuple[float, float]:
    """Queries/s of ``system`` on one and on two threads; its index is let go on return."""
    answer, same = THREADED[system](data, work)
    first = {count: answer(count) for count in (1, 2)}  # warm-up
    if not same(first[1], first[2]):
        sys.exit(f"bench_scale.py threads: {system}'s answers on one and two threads differ")
    best = {1: float("inf"), 2: float("inf")}
    for _ in range(rounds):
        for count in best:
            best[count] = min(best[count], _seconds(lambda count=count: answer(count)))
    return N_QUERIES / best[1], N_QUERIES / best[2]


Answer = Callable[[int], Any]
"""The queries answered on this many threads."""
Same = Callable[[Any, Any], bool]
"""Whether two answers are identical."""


def threaded_rankscope(data: Path, work: Path) -> tuple[Answer, Same]:
    from rankscope.retrieval.bm25 import BM25

    model = BM25.load(work / "rankscope-index")
    queries = dict(read_tsv(data / "queries.tsv"))

    def answer(count: int) -> Any:
        os.environ["RANKSCOPE_NUM_THREADS"] = str(count)
        return model.search(queries, k=TOP_K)

    return answer, lambda a, b: bool(a.equals(b))


def threaded_pisa(data: Path, work: Path) -> tuple[Answer, Same]:
    import pandas as pd
    from pyterrier_pisa import PisaIndex

    index = PisaIndex(str(work / "pisa-index"), stemmer="none", stops="none")
    queries = pd.DataFrame(list(read_tsv(data / "queries.tsv")), columns=["qid", "query"])
    models = {count: index.bm25(k1=K1, b=B, num_results=TOP_K, threads=count) for count in (1, 2)}

    def rows(run: pd.DataFrame) -> pd.DataFrame:
        return run[["qid", "docno", "score", "rank"]].sort_values(["qid", "rank"]).reset_index(drop=True)

    return lambda count: models[count].transform(queries), lambda a, b: bool(rows(a).equals(rows(b)))


def threaded_bm25s(data: Path, work: Path, backend: str) -> tuple[Answer, Same]:
    import bm25s

    folder = work / "bm25s-index"
    if not (folder / "params.index.json").is_file():
        print(f"indexing with bm25s into {folder} (once) ...", file=sys.stderr, flush=True)
        built = bm25s.BM25(method="lucene", k1=K1, b=B)
        texts = [text for _, text in read_tsv(data / "corpus.tsv")]
        built.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)
        del texts
        built.save(str(folder), show_progress=False)
        del built
    model = bm25s.BM25.load(str(folder), backend=backend, show_progress=False)
    known = _bm25s_queries(model, [text for _, text in read_tsv(data / "queries.tsv")])

    def answer(count: int) -> Any:  # n_threads=0: no worker threads
        return model.retrieve(known, k=TOP_K, show_progress=False, n_threads=0 if count == 1 else count)

    return answer, lambda a, b: all(np.array_equal(x, y) for x, y in zip(a, b))


THREADED: dict[str, Callable[[Path, Path], tuple[Answer, Same]]] = {
    "rankscope": threaded_rankscope,
    "pisa": threaded_pisa,
    "bm25s": lambda data, work: threaded_bm25s(data, work, "numpy"),
    "bm25s-numba": lambda data, work: threaded_bm25s(data, work, "numba"),
}
"""``threads`` systems: each loads its saved index and answers the queries on a given number of threads."""


WORKERS: dict[str, tuple[Callable[[Path, Path], dict[str, float]], list[str], str]] = {
    "rankscope-stream": (worker_rankscope_stream, [], "bench"),
    "bm25s": (lambda data, work: worker_bm25s(data, "numpy"), ["bm25s"], "bench"),
    "bm25s-numba": (lambda data, work: worker_bm25s(data, "numba"), ["bm25s", "numba"], "bench"),
    "pisa": (worker_pisa, ["pyterrier_pisa"], "pisa"),
}
"""Worker name -> (function, modules it needs, the extra that installs them)."""
SYSTEMS = ["rankscope", *WORKERS]


# --- running them side by side ---------------------------------------------------------------
def timed_process(command: list[str], log: Path) -> dict[str, float]:
    """Run ``command`` under ``/usr/bin/time -v``: its wall seconds, peak RSS (MB) and last JSON line."""
    with log.open("w") as sink:
        done = subprocess.run(["/usr/bin/time", "-v", *command], stdout=subprocess.PIPE, stderr=sink, text=True)
    report = log.read_text()
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:4])}... failed (exit {done.returncode}); see {log}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", report)
    cpu = [float(v) for v in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", report)]
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    if wall is None or rss is None:
        sys.exit(f"no /usr/bin/time -v report in {log}")
    hours, minutes, seconds = int(wall.group(1) or 0), int(wall.group(2)), float(wall.group(3))
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    return {
        "wall_s": hours * 3600 + minutes * 60 + seconds,
        "cpu_s": sum(cpu),
        "peak_rss_mb": int(rss.group(1)) / 1024,
        **result,
    }


def command_for(system: str, data: Path, work: Path) -> list[str]:
    if system == "rankscope":
        rankscope = Path(sys.executable).with_name("rankscope")
        out = work / "rankscope.run"
        return [str(rankscope), "--quiet", "search", "--dataset", str(data), "--retriever", "bm25", "--k", "10"] + [
            "--out",
            str(out),
        ]
    return [sys.executable, __file__, "worker", system, "--data", str(data), "--work", str(work)]


def run(n_docs: int, work: Path, systems: list[str], seed: int) -> None:
    if not Path("/usr/bin/time").is_file():
        sys.exit("bench_scale.py: needs GNU time at /usr/bin/time (apt-get install time)")
    for system in systems:
        if system in WORKERS:
            require(WORKERS[system][1], WORKERS[system][2])
    data = work / f"corpus-{n_docs}-seed{seed}"
    if not (data / "corpus.tsv").is_file():
        print(f"generating {n_docs:,} documents into {data} ...", file=sys.stderr, flush=True)
        generate(n_docs, data, seed)
    load_before = os.getloadavg()
    rows = {}
    for system in systems:
        rows[system] = timed_process(command_for(system, data, work), work / f"{system}.time.log")
        print(system, rows[system], file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    size_mb = (data / "corpus.tsv").stat().st_size / 2**20
    print(f"{n_docs:,} documents ({size_mb:,.0f} MB corpus.tsv), {N_QUERIES:,} queries, top {TOP_K}, one thread")
    print(f"load average before {_load(load_before)}, after {_load(load_after)}")
    print(
        "| system | wall (s) | CPU (s) | peak RSS (MB) | index (wall s) | queries/s (wall) | queries/s (CPU) "
        "| 2 threads: queries/s (wall) | 2 threads / 1 | re-weight (s) | grid point (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for system, row in rows.items():
        cells = [_cell(row, "index_s", ".1f"), _cell(row, "qps", ",.0f"), _cell(row, "qps_cpu", ",.0f")]
        cells += [_cell(row, "qps_2", ",.0f"), _cell(row, "speedup_2", ".2f")]
        cells += [_cell(row, "reweight_s", ".2f"), _cell(row, "grid_point_s", ".2f")]
        head = f"| {system} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['peak_rss_mb']:,.0f}"
        print(f"{head} | {' | '.join(cells)} |")


def _cell(row: dict[str, float], key: str, spec: str) -> str:
    return format(row[key], spec) if key in row else "—"


def threads_cpu(data: Path, work: Path, rounds: int) -> None:
    """rankscope's two threads measured by CPU time, which a loaded machine leaves steady where wall clock
    is not: one thread's CPU per pass; on two threads, the calling thread's CPU outside the kernel (the
    serial part) and the critical path, that plus the busier thread's kernel CPU: the wall time of a pass on
    two free cores if the threads slowed nothing down for each other (shared caches and memory are not
    counted). Best of ``rounds`` passes each, alternating."""
    import threading

    import rankscope.retrieval.counts_retriever as searching
    from rankscope.retrieval.bm25 import BM25

    kernel: dict[int, float] = {}

    class Timed:  # the kernel's Search, each run's thread CPU added to its thread's total
        def __init__(self, search: Any) -> None:
            self.search = search

        done = property(lambda self: self.search.done)

        def run(self, *args: Any) -> int:
            start = time.thread_time()
            scored = self.search.run(*args)
            kernel[threading.get_ident()] = kernel.get(threading.get_ident(), 0.0) + time.thread_time() - start
            return int(scored)

        def result(self) -> Any:
            return self.search.result()

    start_search = searching.start_search
    searching.start_search = lambda *args: Timed(start_search(*args))  # type: ignore[assignment]
    model = BM25.load(work / "rankscope-index")
    queries = dict(read_tsv(data / "queries.tsv"))
    load_before = os.getloadavg()
    best = {"one": float("inf"), "serial": float("inf"), "path": float("inf")}
    for _ in range(rounds + 1):  # the first pass warms up
        for count in (1, 2):
            os.environ["RANKSCOPE_NUM_THREADS"] = str(count)
            kernel.clear()
            start = time.thread_time()
            model.search(queries, k=TOP_K)
            mine = time.thread_time() - start
            if count == 1:
                best["one"] = min(best["one"], mine)
            else:
                serial = mine - kernel.get(threading.get_ident(), 0.0)
                best["serial"] = min(best["serial"], serial)
                best["path"] = min(best["path"], serial + max(kernel.values()))
    print(
        f"rankscope, {N_QUERIES:,} queries, top {TOP_K}, CPU ms, best of {rounds}: one thread {best['one'] * 1e3:.1f}; "
        f"two threads: serial {best['serial'] * 1e3:.1f}, critical path {best['path'] * 1e3:.1f} "
        f"({best['one'] / best['path']:.2f}x); load average {_load(load_before)}; {_load(os.getloadavg())}"
    )


def _load(values: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="write the synthetic corpus folder")
    gen.add_argument("--docs", type=int, required=True)
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--seed", type=int, default=SEED)
    every = commands.add_parser("run", help="generate if needed, then time every system in its own process")
    every.add_argument("--docs", type=int, required=True)
    every.add_argument("--work", type=Path, required=True, help="folder for the corpus, indexes and logs")
    every.add_argument("--systems", nargs="+", choices=SYSTEMS, default=SYSTEMS)
    every.add_argument("--seed", type=int, default=SEED)
    both = commands.add_parser("threads", help="one and two threads alternating, on the indexes `run` saved")
    both.add_argument("--docs", type=int, required=True)
    both.add_argument("--work", type=Path, required=True)
    both.add_argument("--systems", nargs="+", choices=list(THREADED), default=["rankscope", "pisa", "bm25s-numba"])
    both.add_argument("--rounds", type=int, default=5)
    both.add_argument("--seed", type=int, default=SEED)
    cpu = commands.add_parser("threads-cpu", help="rankscope's one and two threads by CPU time (a loaded machine)")
    cpu.add_argument("--docs", type=int, required=True)
    cpu.add_argument("--work", type=Path, required=True)
    cpu.add_argument("--rounds", type=int, default=9)
    cpu.add_argument("--seed", type=int, default=SEED)
    one = commands.add_parser("worker", help="(internal) one system in this process; prints a JSON line")
    one.add_argument("system", choices=list(WORKERS))
    one.add_argument("--data", type=Path, required=True)
    one.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.docs, args.out, args.seed)
    elif args.command == "threads":
        for system in args.systems:
            if system in WORKERS:
                require(WORKERS[system][1], WORKERS[system][2])
        threads(args.work / f"corpus-{args.docs}-seed{args.seed}", args.work, args.systems, args.rounds)
    elif args.command == "threads-cpu":
        threads_cpu(args.work / f"corpus-{args.docs}-seed{args.seed}", args.work, args.rounds)
    elif args.command == "run":
        args.work.mkdir(parents=True, exist_ok=True)
        run(args.docs, args.work, args.systems, args.seed)
    else:
        print(json.dumps(WORKERS[args.system][0](args.data, args.work)))


if __name__ == "__main__":
    main()
