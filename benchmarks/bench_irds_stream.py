"""``rankscope index --dataset irds:NAME``: peak memory of an ir_datasets collection streamed into the
bounded-memory index, against the same collection loaded whole (``load_dataset`` + ``BM25().index``).

    python benchmarks/bench_irds_stream.py --docs 100000 1000000 --budget 64M

The collection is registered in ir_datasets (its registry, in the measured process) with a documents
handler of its own that makes ``--words`` words a document from a seeded Zipf draw over 50,000
words as ir_datasets hands them out, so ir_datasets' readers and document stores cost nothing here:
the numbers are rankscope's. Each build runs as its own process under ``/usr/bin/time``; printed: the
documents, the mode, wall seconds, peak RSS (MiB) and the index's size on disk (MiB). A streamed peak
that stays flat while the documents grow tenfold is the bounded memory; the whole load grows with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from extras import require

VOCABULARY = 50_000
BLOCK = 10_000  # documents drawn at a time
MODES = ["stream", "file", "whole"]  # index --dataset irds:NAME, index --corpus of the same documents, loaded whole


def register(n_docs: int, words: int, seed: int) -> str:
    """``synthetic/N`` registered in ir_datasets: ``n_docs`` generated documents, one query, one judgment."""
    import ir_datasets
    import numpy as np
    from ir_datasets.datasets.base import Dataset as IrdsDataset
    from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, GenericDoc, GenericQrel, GenericQuery

    lexicon = np.array([f"w{i}" for i in range(VOCABULARY)], dtype=object)

    class Documents(BaseDocs):
        def docs_iter(self) -> Iterator[GenericDoc]:
            rng = np.random.default_rng(seed)
            for start in range(0, n_docs, BLOCK):
                size = min(BLOCK, n_docs - start)
                drawn = (rng.zipf(1.2, size * words) - 1) % VOCABULARY
                for i, row in enumerate(lexicon[drawn].reshape(size, words)):
                    yield GenericDoc(f"d{start + i}", " ".join(row))

        def docs_cls(self) -> type:
            return GenericDoc

        def docs_count(self) -> int:
            return n_docs

    class Queries(BaseQueries):
        def queries_iter(self) -> Iterator[GenericQuery]:
            yield GenericQuery("q1", "w1 w2 w3")

    class Qrels(BaseQrels):
        def qrels_iter(self) -> Iterator[GenericQrel]:
            yield GenericQrel("q1", "d0", 1)

    name = f"synthetic/{n_docs}"
    ir_datasets.registry.register(name, IrdsDataset(Documents(), Queries(), Qrels()))
    return name


def child(mode: str, n_docs: int, words: int, seed: int, budget: str, folder: Path) -> None:
    """One build in this process: ``stream`` and ``file`` through the command, ``whole`` through a loaded Dataset."""
    name = register(n_docs, words, seed)
    if mode in ("stream", "file"):
        from rankscope.cli import main

        source = (
            ["--dataset", f"irds:{name}"] if mode == "stream" else ["--corpus", str(corpus_file(folder.parent, name))]
        )
        code = main(["index", *source, "--index-dir", str(folder), "--memory-budget", budget, "--workers", "1"])
        if code:
            sys.exit(code)
    else:
        import rankscope as rs

        data = rs.load_dataset(f"irds:{name}")
        rs.make_retriever("bm25").index(data.corpus).save(folder)


def corpus_file(work: Path, name: str) -> Path:
    """The registered collection's documents as a JSONL corpus file (written once, before any measuring)."""
    import json

    import ir_datasets

    path = work / (name.replace("/", "-") + ".jsonl")
    if not path.exists():
        with path.open("w", encoding="utf-8") as out:
            for doc in ir_datasets.load(name).docs_iter():
                out.write(json.dumps({"_id": doc.doc_id, "text": doc.text}) + "\n")
    return path


def measure(mode: str, n_docs: int, args: argparse.Namespace, work: Path) -> str:
    folder = work / f"{mode}-{n_docs}"
    if mode == "file":
        corpus_file(work, register(n_docs, args.words, args.seed))
    command = [sys.executable, __file__, "--child", mode, "--docs", str(n_docs), "--words", str(args.words)]
    command += ["--seed", str(args.seed), "--budget", args.budget, "--folder", str(folder)]
    quiet = {**os.environ, "RANKSCOPE_QUIET": "1"}
    timed = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True, text=True, env=quiet)
    if timed.returncode:
        sys.exit(f"{mode} {n_docs}: {timed.stderr.strip()}")
    wall, kib = timed.stderr.strip().splitlines()[-1].split()
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20
    shutil.rmtree(folder)
    return f"{n_docs:>10,}  {mode:<6}  {float(wall):8.1f} s  {int(kib) / 1024:8.0f} MiB peak  {size:7.0f} MiB index"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--words", type=int, default=40, help="words a document (default 40)")
    parser.add_argument("--budget", default="64M", help="index --memory-budget (default 64M)")
    parser.add_argument("--modes", nargs="+", default=MODES, choices=MODES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    require(["ir_datasets"], "irds")
    if args.child is not None:
        child(args.child, args.docs[0], args.words, args.seed, args.budget, args.folder)
        return
    with tempfile.TemporaryDirectory() as work:
        for n_docs in args.docs:
            for mode in args.modes:
                print(measure(mode, n_docs, args, Path(work)), flush=True)


if __name__ == "__main__":
    main()
