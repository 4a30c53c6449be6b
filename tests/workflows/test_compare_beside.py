"""Every pair of systems tested on the second core (a forked child) while the systems are tested against the
baseline here: the same tiers and pairs as one after the other, and they come from the child."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core import forked
from tests.workflows.tiny_collection import small_dataset

compare_module = importlib.import_module("rankscope.workflows.compare")  # the package names the function so
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


def test_every_pair_is_tested_in_a_child_with_the_same_result(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)  # as in a command: no other thread
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread()])
    pid = tmp_path / "pid"  # the process that tested every pair, written there
    real = compare_module.all_pairs_tests
    monkeypatch.setattr(compare_module, "all_pairs_tests", lambda *a: (pid.write_text(str(os.getpid())), real(*a))[1])
    data = small_dataset()
    systems = ["bm25", "tfidf", "bm25:k1=0.5,b=0.3"]
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    beside = compare_module.compare(data, systems)
    assert pid.read_text() != str(os.getpid())
    monkeypatch.setenv(forked.FORK_ENV, "0")
    alone = compare_module.compare(data, systems)
    assert pid.read_text() == str(os.getpid())
    assert len(beside.tiers) == 3 * len(beside.metrics) and len(beside.pairs) == 3 * len(beside.metrics)
    pd.testing.assert_frame_equal(beside.tiers, alone.tiers)
    pd.testing.assert_frame_equal(beside.pairs, alone.pairs)
    pd.testing.assert_frame_equal(beside.significance, alone.significance)
    assert beside.tier_captions == alone.tier_captions
