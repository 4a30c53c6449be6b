"""rankscope judge killed with SIGKILL halfway, then run again: no pair judged twice, none lost.

    RANKSCOPE_DATA=../shared/corpora python benchmarks/judge_restart.py \
        --dataset cisi --systems bm25 tfidf dense:model=model2vec --depth 10 --human-sample 30

A stub OpenAI-compatible server in this process (``rankscope.judging.stub_server``) answers every
chat request after ``--delay`` seconds with ``Final score: N`` (N from a hash of the prompt, so a
repeated question gets the same answer) and logs each request. ``rankscope judge --judge openai:...`` runs as a subprocess against it; once
the judgments cache has committed half of ``--expect`` calls (default: the pooled pairs, counted by
a first run of the qrels judge), the process is killed with SIGKILL and the same command is run
again to the end. Printed: the calls committed before the kill, the second run's calls and cache
hits, and from the cache every key's number of calls (1 each: no pair judged twice) and from the
server's log the requests repeated (at most the ones in flight at the kill).
"""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rankscope.judging.stub_server import StubServer


def committed(cache: Path) -> int:
    """Calls the cache holds (0 before the file exists)."""
    path = cache / "judgments.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are being created
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="cisi")
    parser.add_argument("--systems", nargs="+", default=["bm25", "tfidf"])
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--human-sample", type=int, default=30)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the stub takes per answer")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--expect", type=int, help="calls a full run makes (default: counted by a qrels-judge run)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judge_restart_"))
    base = [sys.executable, "-m", "rankscope.cli", "judge", "--dataset", args.dataset, "--systems", *args.systems]
    base += ["--depth", str(args.depth), "--blind", "--human-sample", str(args.human_sample), "--format", "json"]
    expect = args.expect
    if expect is None:
        done = subprocess.run([*base, "--judge", "qrels:flip=0.2", "--judgments", str(work / "qrels_cache")],
                              capture_output=True, text=True, check=True)  # fmt: skip
        expect = json.loads(done.stdout)["distinct_asked"]
    with StubServer(delay=args.delay) as server:
        restart(base, server, work / "cache", expect, args.concurrency)


def restart(base: list[str], server: StubServer, cache: Path, expect: int, concurrency: int) -> None:
    """Run the judge against ``server``, kill it once half of ``expect`` calls are committed, run it again."""
    command = [*base, "--judge", f"openai:model=stub,base_url={server.url},concurrency={concurrency}"]
    command += ["--judgments", str(cache)]
    started = time.monotonic()
    running = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while committed(cache) < expect // 2:
        if running.poll() is not None:
            sys.exit(f"the run ended before half of {expect} calls ({committed(cache)} committed)")
        time.sleep(0.02)
    running.send_signal(signal.SIGKILL)
    running.wait()
    before, sent_before = committed(cache), len(server.requests)
    print(f"killed with SIGKILL after {time.monotonic() - started:.1f} s: {before} calls committed of {expect}, "
          f"{sent_before} requests sent")  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    with sqlite3.connect(cache / "judgments.sqlite") as db:
        per_key = db.execute("SELECT COUNT(*), MAX(n) FROM (SELECT COUNT(*) AS n FROM calls GROUP BY key)").fetchone()
        labels = db.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    log = server.prompts()
    repeated = len(log) - len(set(log))
    print(f"restart: {summary['calls']} calls, {summary['cache_hits']} cache hits "
          f"(sum {summary['calls'] + summary['cache_hits']} = {summary['distinct_asked']} distinct pairs)")  # fmt: skip
    print(f"from the cache: {per_key[0]} keys called, at most {per_key[1]} call per key; {labels} labels kept")
    print(f"from the server: {len(log)} requests, {len(set(log))} distinct prompts, {repeated} asked again "
          f"(in flight at the kill: at most --concurrency {concurrency})")  # fmt: skip


if __name__ == "__main__":
    main()
