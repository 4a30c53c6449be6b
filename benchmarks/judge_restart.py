"""rankscope judge killed with SIGKILL halfway, then run again: no pair judged twice, none lost.

    RANKSCOPE_DATA=../shared/corpora python benchmarks/judge_restart.py \
        --dataset cisi --systems bm25 tfidf dense:model=model2vec --depth 10 --human-sample 30

A stub OpenAI-compatible server in this process answers every chat request after ``--delay`` seconds
with ``Final score: N`` (N from a hash of the prompt, so a repeated question gets the same answer)
and logs each request. ``rankscope judge --judge openai:...`` runs as a subprocess against it; once
the judgments cache has committed half of ``--expect`` calls (default: the pooled pairs, counted by
a first run of the qrels judge), the process is killed with SIGKILL and the same command is run
again to the end. Printed: the calls committed before the kill, the second run's calls and cache
hits, and from the cache every key's number of calls (1 each: no pair judged twice) and from the
server's log the requests repeated (at most the ones in flight at the kill).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def stub_server(delay: float, log: list[str]) -> ThreadingHTTPServer:
    """A chat-completions server on 127.0.0.1 answering ``Final score: N`` after ``delay`` seconds."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][-1]["content"]
            log.append(prompt)
            time.sleep(delay)
            grade = hashlib.sha256(prompt.encode()).digest()[0] % 4
            reply = {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"Final score: {grade}"},
                        "finish_reason": "stop",
                    }
                ],  # fmt: skip
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


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
    log: list[str] = []
    server = stub_server(args.delay, log)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    cache = work / "cache"
    command = [*base, "--judge", f"openai:model=stub,base_url={url},concurrency={args.concurrency}"]
    command += ["--judgments", str(cache)]
    started = time.monotonic()
    running = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while committed(cache) < expect // 2:
        if running.poll() is not None:
            sys.exit(f"the run ended before half of {expect} calls ({committed(cache)} committed)")
        time.sleep(0.02)
    running.send_signal(signal.SIGKILL)
    running.wait()
    before, sent_before = committed(cache), len(log)
    print(f"killed with SIGKILL after {time.monotonic() - started:.1f} s: {before} calls committed of {expect}, "
          f"{sent_before} requests sent")  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    with sqlite3.connect(cache / "judgments.sqlite") as db:
        per_key = db.execute("SELECT COUNT(*), MAX(n) FROM (SELECT COUNT(*) AS n FROM calls GROUP BY key)").fetchone()
        labels = db.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    repeated = len(log) - len(set(log))
    print(f"restart: {summary['calls']} calls, {summary['cache_hits']} cache hits "
          f"(sum {summary['calls'] + summary['cache_hits']} = {summary['distinct_asked']} distinct pairs)")  # fmt: skip
    print(f"from the cache: {per_key[0]} keys called, at most {per_key[1]} call per key; {labels} labels kept")
    print(f"from the server: {len(log)} requests, {len(set(log))} distinct prompts, {repeated} asked again "
          f"(in flight at the kill: at most --concurrency {args.concurrency})")  # fmt: skip
    server.shutdown()


if __name__ == "__main__":
    main()
