"""The second system of a diagnosis computed on the second core (a forked child) while the first is
computed here: the same result as one after the other, and the second system's tables come from the child."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core import forked
from rankscope.workflows.common.systems import named_systems, produce_run
from rankscope.workflows.diagnose import workflow
from rankscope.workflows.diagnose.sampling import Sampled
from tests.workflows.tiny_collection import small_dataset

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


def assert_same(one: object, other: object, where: str) -> None:
    """Equal values, frames and series compared as frames (their values, dtypes, index and columns)."""
    if isinstance(one, pd.DataFrame):
        pd.testing.assert_frame_equal(one, other, obj=where)
    elif isinstance(one, pd.Series):
        pd.testing.assert_series_equal(one, other, obj=where)
    elif dataclasses.is_dataclass(one):
        for field in dataclasses.fields(one):
            assert_same(getattr(one, field.name), getattr(other, field.name), f"{where}.{field.name}")
    else:
        assert one == other, where


def test_the_second_system_is_diagnosed_in_a_child_with_the_same_result(
    tmp_path: Path, monkeypatch, forkable: None
) -> None:
    data = small_dataset()
    systems = [produce_run(s, data, 10) for s in named_systems([("bm25", "bm25"), ("tfidf", "tfidf")]).values()]
    calls = tmp_path / "calls"
    real = workflow.diagnose_system

    def logged(*args, **kwargs):  # which process diagnoses which system
        with calls.open("a") as log:
            log.write(f"{args[1].name} {os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(workflow, "diagnose_system", logged)
    sampled = Sampled(negatives=5, repeats=2)
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    beside = workflow.diagnose_runs(data, systems, 10, sampled=sampled)
    processes = dict(line.split() for line in calls.read_text().splitlines())
    assert processes["bm25"] == str(os.getpid()) and processes["tfidf"] != str(os.getpid())
    monkeypatch.setenv(forked.FORK_ENV, "0")
    calls.unlink()
    alone = workflow.diagnose_runs(data, systems, 10, sampled=sampled)
    assert calls.read_text().split()[1::2] == [str(os.getpid())] * 2
    assert len(beside.diagnoses) == 2 and len(beside.diagnoses[1].sampled) and len(beside.diagnoses[1].failures)
    for one, other in zip(beside.diagnoses, alone.diagnoses):
        assert_same(one, other, one.retriever)
    assert beside.comparison == alone.comparison and beside.findings == alone.findings
