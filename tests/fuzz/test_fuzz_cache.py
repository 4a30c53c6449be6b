"""Fuzz: the judgments cache under what a careless folder, another program and a second process do.

A damaged, foreign, truncated, forged, read-only, locked or full ``judgments.sqlite`` must give one
line naming the file and the problem (exit 2), never a raw ``sqlite3`` traceback, and leave every
label committed before it in place. Two and four ``rankscope judge`` processes on one cache against
the stub server answering in 0.3 s ask each key once in all (counted at the server and in the
cache), and a run killed with SIGKILL while holding claims delays the run waiting for them by
nothing but the calls it had in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import Outcome, check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.judging import cache as cache_module
from rankscope.judging.cache import FILE_NAME, JudgmentCache
from rankscope.judging.stub_server import StubServer
from rankscope.workflows.collection.labels import all_labels

WORDS = "wing flow plate boundary layer heat shock wave load supersonic drag lift pressure nozzle jet".split()
LABELS_COUNT = "SELECT COUNT(*) FROM labels"


def write_dataset(folder: Path, documents: int, queries: int) -> Path:
    """A TREC-style folder: ``documents`` short texts, ``queries`` queries, two judged pairs a query."""
    folder.mkdir()
    docs = {
        f"d{i}": " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6)) + f" note {i}"
        for i in range(documents)
    }
    asked = {f"q{i}": f"{WORDS[i % 15]} {WORDS[(i + 5) % 15]} {i}" for i in range(queries)}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in docs.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in asked.items()))
    (folder / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\nq{i} 0 d{i + 10} 0\n" for i in range(queries)))
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A dataset of 300 documents and 40 queries, a qrels judge over it, and a clean cache of its ~700 labels."""
    root = tmp_path_factory.mktemp("cachefuzz")
    data = write_dataset(root / "data", 300, 40)
    judge = root / "judge.qrels"
    judge.write_text("".join(f"q{i} 0 d{j} {(i + j) % 4}\n" for i in range(40) for j in range(300)))
    found = {"root": root, "data": data, "judge": judge, "clean": root / "clean"}
    outcome = run_cli(judge_argv(found, found["clean"], root / "clean_out"))
    check(outcome, "accepted")
    with sqlite3.connect(found["clean"] / FILE_NAME) as db:  # one file, as a user would copy it
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return found


def judge_argv(world: dict[str, Path], cache: Path, out: Path | None = None) -> list[str]:
    argv = ["judge", "--dataset", str(world["data"]), "--systems", "bm25", "--depth", "20"]
    argv += ["--judge", f"qrels:{world['judge']}", "--judgments", str(cache), "--quiet", "--format", "json"]
    return argv + (["--out", str(out)] if out else [])


def copy_of_clean(world: dict[str, Path], name: str) -> Path:
    folder = world["root"] / name
    shutil.copytree(world["clean"], folder)
    return folder


def labels_in(folder: Path, immutable: bool = False) -> int:
    """The labels a file holds, read without writing (``immutable``: on a read-only mount, where WAL cannot be read)."""
    uri = f"file:{folder / FILE_NAME}?" + ("immutable=1" if immutable else "mode=ro")
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        return int(db.execute(LABELS_COUNT).fetchone()[0])


def forged(statement: str) -> Callable[[Path], None]:
    def forge(path: Path) -> None:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute(statement)

    return forge


def foreign(statement: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.unlink()
        forged(statement)(path)

    return make


def truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGED: dict[str, tuple[Callable[[Path], None], str]] = {
    "random bytes": (lambda p: p.write_bytes(os.urandom(8192)), "is not a judgments cache: not an SQLite file"),
    "a text file": (lambda p: p.write_text("query doc label\n" * 200), "is not a judgments cache: not an SQLite file"),
    "empty": (lambda p: p.write_bytes(b""), None),  # an empty file is a new SQLite database: accepted
    "a directory": (lambda p: (p.unlink(), p.mkdir()), "is a folder, not a judgments file"),
    "truncated": (truncated, "is damaged (SQLite: database disk image is malformed)"),
    "foreign tables": (foreign("CREATE TABLE notes (a, b)"), "is not a judgments cache: it holds the tables notes"),
    "another schema": (
        foreign("CREATE TABLE labels (key, label)"),
        "its table labels has the columns key, label, not key, judge_key, label, status, raw",
    ),
    "label 7": (forged("UPDATE labels SET label = 7 WHERE rowid = 3"), "cannot have label 7"),
    "label 'two'": (forged("UPDATE labels SET label = 'two' WHERE rowid = 5"), "cannot have label 'two'"),
    "status maybe": (forged("UPDATE labels SET status = 'maybe' WHERE rowid = 4"), "status 'maybe'"),
    "status failed": (forged("UPDATE labels SET status = 'failed', label = NULL WHERE rowid = 4"), "status 'failed'"),
    "raw bytes": (forged("UPDATE labels SET raw = x'00ff' WHERE rowid = 6"), "a reply that is not text (bytes)"),
}


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_or_foreign_cache_is_one_line_naming_it(world: dict[str, Path], case: str) -> None:
    folder = copy_of_clean(world, f"damaged_{case.replace(' ', '_')}")
    damage, problem = DAMAGED[case]
    rows = case.startswith(("label", "status", "raw", "identity"))
    damage(folder / FILE_NAME)
    outcome = run_cli(judge_argv(world, folder))
    if problem is None:
        check(outcome, "accepted")
        return
    check(outcome, "error", f"{folder / FILE_NAME}: ")
    assert problem in outcome.err, outcome.err
    if rows:  # a forged row refused, not repaired nor dropped: every label is still there
        assert labels_in(folder) == labels_in(world["clean"])
    check(run_call(lambda: all_labels(folder)), "error", str(folder / FILE_NAME))  # the collection's reader too


def test_a_judge_identity_that_is_not_json_is_one_line_where_it_is_read(world: dict[str, Path]) -> None:
    folder = copy_of_clean(world, "identity")
    forged("UPDATE judges SET identity = '{oops'")(folder / FILE_NAME)
    outcome = run_call(lambda: all_labels(folder))
    check(outcome, "error", f"{folder / FILE_NAME}: holds a judge ")
    assert "whose identity is not one rankscope writes" in outcome.err


@pytest.fixture()
def read_only_folder(world: dict[str, Path]) -> Iterator[Path]:
    """A copy of the clean cache on a read-only mount (as root, who ignores file modes), else with modes 555/444."""
    folder = world["root"] / f"ro_{time.monotonic_ns()}"
    if os.geteuid() == 0:
        folder.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)]).returncode:
            pytest.skip("root here cannot mount a tmpfs")
        shutil.copy(world["clean"] / FILE_NAME, folder)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
        subprocess.run(["umount", str(folder)], check=True)
    else:
        shutil.copytree(world["clean"], folder)
        (folder / FILE_NAME).chmod(0o444)
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)


def test_a_read_only_cache_is_one_line_naming_it(world: dict[str, Path], read_only_folder: Path) -> None:
    kept = labels_in(read_only_folder, immutable=True)
    outcome = run_cli(judge_argv(world, read_only_folder))
    check(outcome, "error", f"{read_only_folder / FILE_NAME}: ")
    assert "read-only" in outcome.err
    assert labels_in(read_only_folder, immutable=True) == kept > 500


def test_a_cache_locked_by_another_process_is_busy_in_one_line(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_of_clean(world, "locked")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(folder / FILE_NAME)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setattr(cache_module, "BUSY_SECONDS", 0.5)
        started = time.monotonic()
        outcome = run_cli(judge_argv(world, folder))
        check(outcome, "error", f"{folder / FILE_NAME}: busy: another process held its lock for 0.5 s")
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    assert labels_in(folder) == labels_in(world["clean"])
    check(run_cli(judge_argv(world, folder)), "accepted")  # the lock gone, the same run works


HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(120)
"""


def _limited(size: int) -> Callable[[], None]:
    def limit() -> None:  # in the child: writes past `size` bytes fail (EFBIG) instead of killing it (SIGXFSZ)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def _finish_after_full(world: dict[str, Path], where: Path, folder: Path, outcome: Outcome) -> None:
    """The full disk's error naming the file (in ``where``), the labels committed before it kept (in ``folder``),
    and a run with room asking only the rest."""
    check(outcome, "error", f"{where / FILE_NAME}: ")
    assert "disk is full" in outcome.err or "file size limit" in outcome.err, outcome.err
    kept = labels_in(folder)
    assert kept > 10, "the limit should be met mid-run, after some labels were committed"
    again = subprocess.run([sys.executable, "-m", "rankscope.cli", *judge_argv(world, folder)], capture_output=True)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["cache_hits"] == kept and summary["calls"] == summary["distinct_asked"] - kept
    assert labels_in(folder) == labels_in(world["clean"])


def test_a_file_size_limit_met_mid_run_keeps_every_committed_label(world: dict[str, Path]) -> None:
    folder = world["root"] / "limited"
    command = [sys.executable, "-m", "rankscope.cli", *judge_argv(world, folder)]
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=_limited(1_500_000))
    _finish_after_full(world, folder, folder, Outcome(done.returncode, done.stdout, done.stderr))


def test_a_tiny_full_disk_met_mid_run_keeps_every_committed_label(world: dict[str, Path]) -> None:
    folder = world["root"] / "tiny_disk"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)]).returncode:
        pytest.skip("needs root allowed to mount a tmpfs (the file size limit case covers the rest)")
    try:
        done = subprocess.run([sys.executable, "-m", "rankscope.cli", *judge_argv(world, folder)], capture_output=True)
        outcome = Outcome(done.returncode, done.stdout.decode(), done.stderr.decode())
        usage = shutil.disk_usage(folder)
        assert usage.free < 16384  # it was full indeed
        shutil.copytree(folder, world["root"] / "tiny_disk_kept")
    finally:
        subprocess.run(["umount", str(folder)], check=True)
    _finish_after_full(world, folder, world["root"] / "tiny_disk_kept", outcome)


# --- a second process at once, and kill -9: real processes against the stub server ---


def small_world(root: Path) -> Path:
    """30 documents and 8 queries: about 70 unjudged pairs in bm25's top 10."""
    return write_dataset(root / "data", 30, 8)


def stub_judge(dataset: Path, url: str, cache: Path, out: Path) -> list[str]:
    spec = f"openai:model=stub,base_url={url},concurrency=8"
    command = [sys.executable, "-m", "rankscope.cli", "judge", "--dataset", str(dataset), "--systems", "bm25"]
    return [*command, "--depth", "10", "--judge", spec, "--judgments", str(cache), "--out", str(out), "--quiet"] + [
        "--format",
        "json",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("processes", [2, 4])
def test_concurrent_judge_runs_ask_each_key_once_in_all(tmp_path: Path, processes: int) -> None:
    dataset = small_world(tmp_path)
    with StubServer(delay=0.3) as server:
        commands = [stub_judge(dataset, server.url, tmp_path / "cache", tmp_path / f"out{i}") for i in range(processes)]
        running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
        results = [process.communicate(timeout=300) for process in running]
        asked = Counter(server.prompts())
    for process, (out, err) in zip(running, results):
        check(Outcome(process.returncode, out, err), "accepted")
    summaries = [json.loads(out) for out, _ in results]
    distinct = summaries[0]["distinct_asked"]
    assert distinct > 50 and all(s["distinct_asked"] == distinct for s in summaries)
    assert len(asked) == distinct and set(asked.values()) == {1}  # at the server: every key once, in all
    assert sum(s["calls"] for s in summaries) == distinct  # the calls made by the runs add up to the keys ...
    assert all(s["calls"] + s["cache_hits"] == distinct for s in summaries)  # ... and each run got every label
    with JudgmentCache(tmp_path / "cache") as cache:
        counts = cache.call_counts()
        assert cache._db.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)  # no claim left behind
    assert len(counts) == distinct and set(counts.values()) == {1}  # in the cache: every key once
    assert len({(tmp_path / f"out{i}" / "qrels.txt").read_text() for i in range(processes)}) == 1  # same labels


@pytest.mark.slow
def test_a_killed_claimer_s_keys_are_asked_by_the_run_waiting_for_them(tmp_path: Path) -> None:
    dataset = small_world(tmp_path)
    with StubServer(delay=0.3) as server:
        first = subprocess.Popen(stub_judge(dataset, server.url, tmp_path / "cache", tmp_path / "out0"))
        deadline = time.monotonic() + 120
        while len(server.prompts()) < 10 and time.monotonic() < deadline:  # it claimed every key and is asking
            time.sleep(0.05)
        second = subprocess.Popen(
            stub_judge(dataset, server.url, tmp_path / "cache", tmp_path / "out1"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # the second waits for the first's claims
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        out, err = second.communicate(timeout=300)
        asked = Counter(server.prompts())
    check(Outcome(second.returncode, out, err), "accepted")
    summary = json.loads(out)
    with JudgmentCache(tmp_path / "cache") as cache:
        counts = cache.call_counts()
    assert len(counts) == summary["distinct_asked"] == len(asked)  # every key answered ...
    assert sum(n > 1 for n in asked.values()) <= 8  # ... and asked twice only if in flight at the kill (8 at once)
    assert summary["calls"] + summary["cache_hits"] == summary["distinct_asked"] and summary["cache_hits"] >= 10
