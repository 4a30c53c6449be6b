"""Judging throughput against a server that answers after a fixed delay, by requests in flight.

    python benchmarks/bench_judge_throughput.py --delay 0.05 --concurrency 1 8 32

For each concurrency C, ``judge_pairs`` (the path ``rankscope judge`` takes: keys, cache look-up,
each answer committed to a fresh SQLite judgments cache as it arrives) judges ``--seconds`` x C /
delay distinct pairs through ``openai:...,concurrency=C`` against
:class:`rankscope.judging.stub_server.StubServer` in a child process (a server is another process;
``--same-process`` runs it in this one, where its threads share the client's interpreter lock).
Printed per C: pairs, wall seconds, pairs per second, the ideal C / delay, the share of it
reached, the most requests the server held at once, the tokens the server reported, the client's
CPU milliseconds per pair, and a second pass over the same pairs (all cache hits, no request). On
a busy machine the client's CPU per request, not the delay, bounds the largest C.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

from rankscope.judging import Pair, make_judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.pairs import judge_pairs
from rankscope.judging.stub_server import StubServer


def pairs_for(count: int, salt: str) -> list[Pair]:
    """``count`` pairs with distinct texts (so none is a cache hit of another)."""
    return [Pair(f"q{i}", f"d{i}", f"query {salt} {i}", f"passage {i} " + "text " * 60) for i in range(count)]


def serve(delay: float, connection: Connection) -> None:
    """The child process: a stub server until asked for its counts (requests, most held at once)."""
    with StubServer(delay=delay) as server:
        connection.send(server.url)
        connection.recv()
        connection.send((len(server.requests), server.most_in_flight))


@contextmanager
def stub(delay: float, same_process: bool) -> Iterator[tuple[str, dict[str, int]]]:
    """(url, counts filled in on exit) of a stub server in a child process or in this one."""
    counts: dict[str, int] = {}
    if same_process:
        with StubServer(delay=delay) as server:
            yield server.url, counts
            counts.update(requests=len(server.requests), most_held=server.most_in_flight)
        return
    ours, theirs = multiprocessing.Pipe()
    child = multiprocessing.Process(target=serve, args=(delay, theirs), daemon=True)
    child.start()
    try:
        yield ours.recv(), counts
        ours.send("counts")
        counts["requests"], counts["most_held"] = ours.recv()
    finally:
        child.join(timeout=10)


def one(concurrency: int, delay: float, seconds: float, work: Path, same_process: bool) -> dict[str, float]:
    count = max(20, int(seconds * concurrency / delay))
    pairs = pairs_for(count, f"c{concurrency}")
    with stub(delay, same_process) as (url, counts):
        judge = make_judge(f"openai:model=stub,base_url={url},concurrency={concurrency}")
        with JudgmentCache(work / f"c{concurrency}") as cache:
            cpu, started = time.process_time(), time.perf_counter()
            outcome = judge_pairs(judge, pairs, cache)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            again = judge_pairs(judge, pairs, cache)
        judge.close()
    assert outcome.calls == count == counts["requests"] and again.calls == 0, "a pair was asked twice"
    return {
        "in_flight": concurrency,
        "pairs": count,
        "seconds": wall,
        "pairs_per_s": count / wall,
        "ideal": concurrency / delay,
        "most_held": counts["most_held"],
        "tokens": outcome.tokens,
        "cpu_per_pair_ms": 1000 * cpu / count,
        "rerun_hits": again.cache_hits,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the stub takes per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=3.0, help="about how long each concurrency runs")
    parser.add_argument("--same-process", action="store_true", help="run the stub server in this process")
    args = parser.parse_args()
    os.environ.setdefault("RANKSCOPE_QUIET", "1")
    where = "this process" if args.same_process else "a child process"
    print(
        f"stub delay {args.delay * 1000:.0f} ms in {where}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print("| in flight | pairs | wall s | pairs/s | ideal | reached | most held | tokens | CPU ms/pair | rerun hits |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="judge_throughput_") as work:
        for concurrency in args.concurrency:
            r = one(concurrency, args.delay, args.seconds, Path(work), args.same_process)
            print(f"| {r['in_flight']} | {r['pairs']} | {r['seconds']:.2f} | {r['pairs_per_s']:.0f} | "
                  f"{r['ideal']:.0f} | {r['pairs_per_s'] / r['ideal']:.0%} | {r['most_held']} | "
                  f"{r['tokens']:,} | {r['cpu_per_pair_ms']:.2f} | {r['rerun_hits']} |")  # fmt: skip


if __name__ == "__main__":
    main()
