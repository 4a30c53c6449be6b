"""Fuzz: index builds killed (SIGKILL, a real process) at every phase, and indexes used while rebuilt.

A build killed while counting, spilling, merging, committing, renaming or cleaning up must leave
the index folder holding the previous index (or none, if there was none), never a mix; the same
command run again builds the clean index and removes what the killed build left. Each phase is
reached deterministically through :data:`retrieval.index_swap.FAULT_VARIABLE`. While one process
rebuilds an index (and is killed at random moments), searches of it in other processes succeed
with the old index's run or the new one's, exactly; a second writer is refused with one line.

``RANKSCOPE_KILL_REPEATS=20`` repeats the kill test 20 times per phase and ``RANKSCOPE_REBUILDS=20``
rebuilds the searched index 20 times (run by hand for the note; CI runs 1 and 6) and prints the tallies.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from harness import OUTCOMES, check, run_cli  # tests/fuzz/harness.py

from rankscope.retrieval.index_swap import FAULT_VARIABLE, _writer_lock

pytestmark = pytest.mark.slow  # real processes built, killed and searched: seconds each

N_DOCS = 900
WORDS = [f"w{i}" for i in range(400)]
# the CLI in a fresh process, with batches of 100 documents so that a small corpus makes several
# spilled runs; RANKSCOPE_TEST_NO_EXCHANGE=1 takes the two-rename swap of file systems without renameat2
DRIVER = """
import os, sys
from rankscope.retrieval import index_swap, streaming
streaming.BATCH_DOCUMENTS = 100
if os.environ.get("RANKSCOPE_TEST_NO_EXCHANGE"):
    index_swap._exchange = lambda first, second: False
from rankscope.cli import main
sys.exit(main(sys.argv[1:]))
"""
PHASES = ("counting:3", "spilling:2", "merging:3", "committing", "renaming", "cleaning")
REPEATS = int(os.environ.get("RANKSCOPE_KILL_REPEATS", "1"))
TALLY: Counter[str] = Counter()


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS[: 50 + i % 350], k=rng.randint(5, 60))) for i in range(N_DOCS)]


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """A BEIR folder (corpus A), corpus files A and B (same ids, other texts), and each one's clean run."""
    root = tmp_path_factory.mktemp("interrupted")
    data = root / "data"
    (data / "qrels").mkdir(parents=True)
    corpora = {}
    for name, seed in (("a", 1), ("b", 2)):
        path = root / f"corpus_{name}.jsonl"
        path.write_text(
            "".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(_texts(seed)))
        )
        corpora[name] = path
    (data / "corpus.jsonl").write_bytes(corpora["a"].read_bytes())
    rng = random.Random(3)
    queries = [(f"q{i}", " ".join(rng.choices(WORDS[:120], k=3))) for i in range(25)]
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries))
    (data / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i * 7}\t1\n" for i in range(25))
    )
    found: dict[str, Path | str] = {"root": root, "data": data, **corpora}
    for name in ("a", "b"):
        index = root / f"clean_{name}" / "idx"
        assert _build(corpora[name], index).returncode == 0
        found[f"run_{name}"] = _search(data, index, root / f"clean_{name}.trec")
    assert found["run_a"] != found["run_b"]
    return found


def _build(corpus: Path | str, index: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", DRIVER, "index", "--corpus", str(corpus), "--index-dir", str(index)]
    return subprocess.run(
        [*command, "--memory-budget", "40K", "--workers", "2"],
        env={**os.environ, "RANKSCOPE_QUIET": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _search(data: Path, index: Path, out: Path) -> str:
    outcome = run_cli(["search", "--dataset", str(data), "--retriever", "bm25", "--k", "20"] + _where(index, out))
    assert outcome.code == 0, outcome.err
    return out.read_text()


def _where(index: Path, out: Path) -> list[str]:
    return ["--index-dir", str(index), "--out", str(out)]


def _state(collection: dict[str, Path | str], index: Path, out: Path) -> str:
    """What a search finds in ``index``: "a" or "b" (that clean build's exact run), "none", or "refused"
    (one clean line); anything else fails the test as silently wrong."""
    if not index.exists():
        return "none"
    outcome = run_cli(
        ["search", "--dataset", str(collection["data"]), "--retriever", "bm25", "--k", "20"] + _where(index, out)
    )
    if outcome.code == 2:
        check(outcome, "error")
        return "refused"
    run = out.read_text()
    state = "a" if run == collection["run_a"] else "b" if run == collection["run_b"] else "mixed"
    OUTCOMES["cases"] += 1
    OUTCOMES["accepted" if state != "mixed" else "silently_wrong"] += 1
    assert state != "mixed", f"{index}: a search gives neither the previous index's run nor the new one's"
    return state


CASES = [(phase, previous, True) for phase in PHASES for previous in (True, False) if previous or phase != "cleaning"]
CASES += [("renaming:2", True, False)]  # without renameat2: between the two renames


@pytest.mark.parametrize(("phase", "previous", "exchange"), CASES)
def test_a_build_killed_at_any_phase_leaves_the_previous_index_or_none(
    collection: dict[str, Path | str], tmp_path: Path, phase: str, previous: bool, exchange: bool
) -> None:
    """Killed before the swap: the previous index ("a") or none; killed after it, before the old one is
    deleted: the new one ("b"); killed between two renames (no renameat2): none. Never a mix."""
    expected = "b" if phase == "cleaning" else "none" if not previous or not exchange else "a"
    env = {} if exchange else {"RANKSCOPE_TEST_NO_EXCHANGE": "1"}
    for repeat in range(REPEATS):
        parent = tmp_path / f"r{repeat}"
        index = parent / "idx"
        if previous:  # the clean index of corpus A, built once
            shutil.copytree(Path(collection["root"]) / "clean_a" / "idx", index)
        killed = _build(collection["b"], index, {**env, FAULT_VARIABLE: phase})
        assert killed.returncode == -9, f"the fault point {phase} was not reached: {killed.stderr}"
        state = _state(collection, index, tmp_path / "run.trec")
        TALLY[
            f"{phase}, {'over an index' if previous else 'new folder'}, {'exchange' if exchange else 'renames'}: {state}"
        ] += 1
        assert state == expected
        again = _build(collection["b"], index, env)  # the same command again
        assert again.returncode == 0, again.stderr
        assert _state(collection, index, tmp_path / "run.trec") == "b"
        assert sorted(p.name for p in parent.iterdir()) == ["idx"]  # the killed build's staging is gone
    print(f"\nkilled builds so far ({REPEATS} per case): {dict(TALLY)}")


def test_searches_while_an_index_is_rebuilt_and_killed(collection: dict[str, Path | str], tmp_path: Path) -> None:
    """Two processes search an index in a loop while a third rebuilds it from corpus A or B, some builds
    killed at a random moment: every search succeeds with one of the two clean runs, exactly."""
    index = tmp_path / "shared" / "idx"
    assert _build(collection["a"], index).returncode == 0
    rebuilds = int(os.environ.get("RANKSCOPE_REBUILDS", "6"))
    readers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                READER,
                str(collection["data"]),
                str(index),
                str(tmp_path / f"reader{i}"),
                str(8 * rebuilds),
            ],
            env={**os.environ, "RANKSCOPE_QUIET": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    rng = random.Random(0)
    for i in range(rebuilds):
        corpus = collection["b" if i % 2 == 0 else "a"]
        command = [sys.executable, "-c", DRIVER, "index", "--corpus", str(corpus), "--index-dir", str(index)]
        writer = subprocess.Popen(
            [*command, "--memory-budget", "40K", "--workers", "2"],
            env={**os.environ, "RANKSCOPE_QUIET": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if i % 3 == 2:  # killed at a random moment
            time.sleep(rng.uniform(0.2, 3.0))
            writer.kill()
        _, err = writer.communicate(timeout=300)
        assert writer.returncode in (0, -9), err
    (tmp_path / "stop").write_text("")
    results = []
    for i, reader in enumerate(readers):
        _, err = reader.communicate(timeout=600)
        assert reader.returncode == 0, err
        runs = [path.read_text() for path in sorted((tmp_path / f"reader{i}").glob("run*.trec"))]
        results += ["a" if r == collection["run_a"] else "b" if r == collection["run_b"] else "mixed" for r in runs]
    counts = Counter(results)
    OUTCOMES["cases"] += len(results)
    OUTCOMES["accepted"] += counts["a"] + counts["b"]
    OUTCOMES["silently_wrong"] += counts["mixed"]
    print(f"\nsearches during {rebuilds} rebuilds: {dict(counts)}")
    assert results and counts["mixed"] == 0
    assert sorted(p.name for p in index.parent.iterdir()) == ["idx"] or _build(collection["a"], index).returncode == 0
    assert _state(collection, index, tmp_path / "final.trec") in ("a", "b")


# a reader: searches the index until the file "stop" appears beside its folder (at most N times), each run
# kept in a file of its own; a failed search ends it with the error on stderr and exit 1
READER = """
import sys
from pathlib import Path
from rankscope.cli import main
data, index, folder, limit = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
folder.mkdir()
for i in range(limit):
    if (folder.parent / "stop").exists():
        break
    out = folder / f"run{i}.trec"
    argv = ["search", "--dataset", data, "--retriever", "bm25", "--k", "20", "--index-dir", index, "--out", str(out)]
    if main(argv) != 0:
        sys.exit(1)
"""


def test_a_second_writer_is_refused_and_a_stale_lock_is_not(collection: dict[str, Path | str], tmp_path: Path) -> None:
    index = tmp_path / "idx"
    with _writer_lock(index, index):  # this process writes the index
        busy = _build(collection["a"], index)
    assert busy.returncode == 2
    assert busy.stderr.splitlines() == [
        f"rankscope index: error: {index}: another process (pid {os.getpid()}) is writing this index; "
        "wait for it to finish or use another folder"
    ]
    OUTCOMES["cases"] += 1
    OUTCOMES["clean_errors"] += 1
    assert not index.exists()
    (tmp_path / ".idx.lock").write_text("999999999\n")  # left by a killed writer: nobody holds it
    assert _build(collection["a"], index).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
