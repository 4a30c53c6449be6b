"""Wall time of tune's grid and of sharded BM25 search: one process, then warm Dask clusters of 1 and 2 workers.

    python benchmarks/bench_distributed.py                      # Cranfield, tune's default 399-point grid
    python benchmarks/bench_distributed.py --dataset cisi --workers 1 2 4

Each cluster is started and its workers import rankscope before the clock starts (a real cluster
stays up between commands); what is timed is the work and the data sent to the workers. Compare
the ratios of the rows measured in the same run, and the load average printed with them.
Needs the ``distributed`` extra.
"""

from __future__ import annotations

import argparse
import os
import time

from extras import require


def _warm() -> None:
    import rankscope.retrieval.sharded  # noqa: F401
    import rankscope.workflows.fanout  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cranfield")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    args = parser.parse_args()
    require(["distributed"], extra="distributed")
    os.environ["RANKSCOPE_QUIET"] = "1"

    from distributed import Client, LocalCluster

    from rankscope.corpora import load_dataset
    from rankscope.retrieval.registry import make_retriever
    from rankscope.retrieval.sharded import sharded_search
    from rankscope.workflows import tune

    data = load_dataset(args.dataset)
    rows = []

    def timed(label: str, work) -> None:
        start = time.perf_counter()
        work()
        rows.append((label, time.perf_counter() - start, os.getloadavg()[0]))
        print(f"{label:<32} {rows[-1][1]:7.1f} s  (load {rows[-1][2]:.1f})", flush=True)

    timed("tune, one process", lambda: tune(data))
    timed("search, one process", lambda: make_retriever("bm25").index(data.corpus).search(data.queries, k=1000))
    for n in args.workers:
        with LocalCluster(n_workers=n, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0") as c:
            with Client(c) as client:
                client.run(_warm)
                timed(f"tune, {n} worker(s)", lambda: tune(data, scheduler=c.scheduler_address))
                timed(
                    f"search, {n} worker(s)",
                    lambda: sharded_search(make_retriever("bm25"), data.corpus, data.queries, 1000, client),
                )


if __name__ == "__main__":
    main()
