"""compare on both cores: the second half of the systems made and scored in a forked child while the first half
is made here, and every pair of systems tested in a child while the systems are tested against the baseline here;
the same result as one after the other, and those parts come from the children."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core import forked
from rankscope.workflows.common import fanout
from tests.workflows.tiny_collection import small_dataset

compare_module = importlib.import_module("rankscope.workflows.compare.workflow")  # the package names the function so
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


def _note(path: Path, system: str) -> None:
    with path.open("a") as log:
        log.write(f"{system} {os.getpid()}\n")


def test_half_the_systems_and_every_pair_are_done_in_children_with_the_same_result(
    tmp_path: Path, monkeypatch, forkable: None
) -> None:
    pid = tmp_path / "pid"  # the process that tested every pair, written there
    real = compare_module.all_pairs_tests
    monkeypatch.setattr(compare_module, "all_pairs_tests", lambda *a: (pid.write_text(str(os.getpid())), real(*a))[1])
    made = tmp_path / "made"  # which process made each system's run
    make = fanout.produce_run
    monkeypatch.setattr(fanout, "produce_run", lambda system, *a: (_note(made, system.name), make(system, *a))[1])
    data = small_dataset()
    systems = ["bm25", "tfidf", "bm25:k1=0.5,b=0.3"]
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    beside = compare_module.compare(data, systems)
    assert pid.read_text() != str(os.getpid())
    processes = dict(line.rsplit(" ", 1) for line in made.read_text().splitlines())
    assert processes.pop("bm25:k1=0.5,b=0.3") != str(os.getpid())  # the second half: the last of three
    assert processes == {"bm25": str(os.getpid()), "tfidf": str(os.getpid())}
    monkeypatch.setenv(forked.FORK_ENV, "0")
    made.unlink()
    alone = compare_module.compare(data, systems)
    assert pid.read_text() == str(os.getpid())
    assert {line.rsplit(" ", 1)[1] for line in made.read_text().splitlines()} == {str(os.getpid())}
    for table in ("summary", "per_query", "curves", "systems", "precision_recall", "diagnostics"):
        pd.testing.assert_frame_equal(getattr(beside, table), getattr(alone, table), obj=table)
    assert beside.runs.keys() == alone.runs.keys()
    for name, run in beside.runs.items():
        pd.testing.assert_frame_equal(run, alone.runs[name], obj=name)
    assert len(beside.tiers) == 3 * len(beside.metrics) and len(beside.pairs) == 3 * len(beside.metrics)
    pd.testing.assert_frame_equal(beside.tiers, alone.tiers)
    pd.testing.assert_frame_equal(beside.pairs, alone.pairs)
    pd.testing.assert_frame_equal(beside.significance, alone.significance)
    assert beside.tier_captions == alone.tier_captions


def test_with_an_openmp_runtime_loaded_every_system_is_made_here(tmp_path: Path, monkeypatch) -> None:
    """GNU OpenMP is not fork-safe: with its runtime loaded, no system is made in a child."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread()])
    monkeypatch.setattr(forked, "openmp_loaded", lambda: True)
    made = tmp_path / "made"
    make = fanout.produce_run
    monkeypatch.setattr(fanout, "produce_run", lambda system, *a: (_note(made, system.name), make(system, *a))[1])
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    compare_module.compare(small_dataset(), ["bm25", "tfidf"])
    assert made.read_text().split()[1::2] == [str(os.getpid())] * 2
