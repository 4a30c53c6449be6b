"""Wall time of tune's grid, sharded BM25 search and rag's systems: one process, then warm Dask clusters.

    python benchmarks/bench_distributed.py                      # Cranfield: tune's 399-point grid, search, rag
    python benchmarks/bench_distributed.py --dataset cisi --workers 1 2 4 --work tune search

Each cluster is started and its workers import rankscope before the clock starts (a real cluster
stays up between commands); what is timed is the work and the data sent to the workers. Compare
the ratios of the rows measured in the same run, and the load average printed with them (the
1-minute load after each row, and the loads before and after the whole run).
Needs the ``distributed`` extra.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Callable

from extras import require

WORK = ("tune", "search", "rag")


def _warm() -> None:
    import rankscope.retrieval.sharded  # noqa: F401
    import rankscope.workflows.common.fanout  # noqa: F401
    import rankscope.workflows.rag  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cranfield")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--work", nargs="+", choices=WORK, default=list(WORK), help="what to time (default: all)")
    args = parser.parse_args()
    require(["distributed"], extra="distributed")
    os.environ["RANKSCOPE_QUIET"] = "1"

    from distributed import Client, LocalCluster

    from rankscope.corpora import load_dataset
    from rankscope.retrieval.registry import make_retriever
    from rankscope.retrieval.sharded import sharded_search
    from rankscope.workflows import tune
    from rankscope.workflows.options import Execution
    from rankscope.workflows.rag import rag

    data = load_dataset(args.dataset)
    print(f"{args.dataset}: {len(data.corpus)} documents, {len(data.queries)} queries; load before {_load()}")
    times: dict[tuple[str, str], tuple[float, float]] = {}

    def timed(work: str, where: str, run: Callable[[], object]) -> None:
        if work not in args.work:
            return
        start = time.perf_counter()
        run()
        times[work, where] = (time.perf_counter() - start, os.getloadavg()[0])
        print(f"{work:<7} {where:<12} {times[work, where][0]:7.1f} s  (load {times[work, where][1]:.1f})", flush=True)

    def search(client: object = None) -> object:
        if client is None:
            return make_retriever("bm25").index(data.corpus).search(data.queries, k=1000)
        return sharded_search(make_retriever("bm25"), data.corpus, data.queries, 1000, client)

    timed("tune", "one process", lambda: tune(data))
    timed("search", "one process", search)
    timed("rag", "one process", lambda: rag(data))
    for n in args.workers:
        cluster = {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0", "silence_logs": logging.CRITICAL}
        with LocalCluster(n_workers=n, threads_per_worker=1, **cluster) as c:
            with Client(c) as client:
                client.run(_warm)
                where = f"{n} worker{'s' if n > 1 else ''}"
                timed("tune", where, lambda: tune(data, execution=Execution(scheduler=c.scheduler_address)))
                timed("search", where, lambda: search(client))
                timed("rag", where, lambda: rag(data, execution=Execution(scheduler=c.scheduler_address)))
    print(f"\nload after {_load()}\n")
    columns = ["one process", *(f"{n} worker{'s' if n > 1 else ''}" for n in args.workers)]
    ratio = len(columns) > 2  # the speed-up from the fewest to the most workers
    print("| work | " + " | ".join(columns) + (f" | {columns[1]} / {columns[-1]} |" if ratio else " |"))
    print("|---" * (len(columns) + 1 + ratio) + "|")
    for work in args.work:
        cells = [f"{times[work, c][0]:.1f} s ({times[work, c][1]:.1f})" for c in columns]
        speed_up = f" {times[work, columns[1]][0] / times[work, columns[-1]][0]:.2f}x |" if ratio else ""
        print(f"| {work} | " + " | ".join(cells) + " |" + speed_up)


def _load() -> str:
    """The 1-, 5- and 15-minute load averages, as uptime prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
