"""What a label post costs as a labelling session grows: CPU per post after 0, 1,000 and 10,000 labels,
and the latency of posts over loopback to a real ``rankscope label`` server at the same points.

Run: ``python benchmarks/bench_label_posts.py [--labels 10000] [--window 200] [--http]``

A synthetic collection (3,000 documents of 60 words, 250 questions, pooled by bm25 to depth 50 and
sampled to ``--labels`` + ``--window`` pairs) is made in a temporary folder. One person then labels
the pairs in the page's order through ``LabelSession`` as the page's server calls it (``label`` then
``state``, the answer of a post); the CPU of ``--window`` posts is measured after 0, 1,000 and
``--labels`` labels. With ``--http`` the same is done over loopback against ``rankscope label`` in
its own process (urllib, one connection a post), giving the p50 and p99 of the posts' wall time.
A post whose cost does not depend on the labels given stays flat across the three points.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from rankscope.workflows.collection.ingest import init_collection
from rankscope.workflows.collection.labelling import LabelSession
from rankscope.workflows.collection.pooling import pool_collection
from rankscope.workflows.collection.sample import sample_collection

WORDS = [f"w{i}" for i in range(2000)]


def make_collection(root: Path, pairs: int) -> Path:
    rng = random.Random(0)
    docs = root / "docs"
    docs.mkdir()
    for i in range(3000):
        (docs / f"d{i:04d}.txt").write_text(" ".join(rng.choices(WORDS, k=60)) + "\n")
    questions = root / "questions.jsonl"
    lines = [json.dumps({"id": f"q{i}", "text": " ".join(rng.choices(WORDS[:400], k=3))}) for i in range(250)]
    questions.write_text("".join(line + "\n" for line in lines))
    folder = root / "collection"
    init_collection(folder, [docs], queries=questions)
    pool_collection(folder, ["bm25"], 50)
    sample_collection(folder, pairs, 0)
    return folder


def post_in_session(session: LabelSession, state: dict[str, Any]) -> dict[str, Any]:
    pair = state["pair"]
    session.label(pair["query_id"], pair["doc_id"], len(pair["doc_id"]) % 4, "", 1.5)
    return session.state()


def in_process(folder: Path, labels: int, window: int) -> None:
    session = LabelSession(folder, "bench")
    state = session.state()
    print(f"sampled pairs {state['total']}; CPU per post (label + state, as the page's server calls them):")
    for point in sorted({0, 1000, labels}):
        while state["done"] < point:
            state = post_in_session(session, state)
        start = time.process_time()
        for _ in range(window):
            state = post_in_session(session, state)
        spent = (time.process_time() - start) / window
        print(f"  after {point:>6,} labels: {spent * 1000:.2f} ms a post ({window} posts)")
    session.close()


def over_http(folder: Path, labels: int, window: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "rankscope.cli", "label", str(folder), "--name", "http", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    address = ""
    while not address:
        found = re.search(r"open (http://127\.0\.0\.1:\d+/)", process.stdout.readline())
        address = found.group(1) if found else ""
    try:
        with urllib.request.urlopen(address) as response:
            token = re.search(r'name="rankscope-token" content="([^"]+)"', response.read().decode())
        assert token is not None

        def post(state: dict[str, Any]) -> dict[str, Any]:
            pair = state["pair"]
            body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": 1, "seconds": 1.5}
            request = urllib.request.Request(
                address + "api/label", json.dumps(body).encode(), {"X-Token": token.group(1)}
            )
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read())

        with urllib.request.urlopen(address + "api/state") as response:
            state = json.loads(response.read())
        print("latency of a post over loopback (rankscope label in its own process):")
        for point in sorted({0, 1000, labels}):
            while state["done"] < point:
                state = post(state)
            times = []
            for _ in range(window):
                start = time.perf_counter()
                state = post(state)
                times.append(time.perf_counter() - start)
            p99 = statistics.quantiles(times, n=100)[98]
            print(f"  after {point:>6,} labels: p50 {statistics.median(times) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms")
    finally:
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--window", type=int, default=200)
    parser.add_argument("--http", action="store_true", help="also measure posts over loopback to a real server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        folder = make_collection(Path(work), args.labels + args.window + 10)
        in_process(folder, args.labels, args.window)
        if args.http:
            over_http(folder, args.labels, args.window)


if __name__ == "__main__":
    main()
