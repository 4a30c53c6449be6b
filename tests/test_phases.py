"""The phase timer (``RANKSCOPE_PHASES``) and the workflow benchmark that reads it."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path

import pytest

from rankscope.core import phases

REPO = Path(__file__).resolve().parents[1]


class Clock:
    """A clock that moves only when told, so the seconds counted are known exactly."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch, tmp_path) -> Clock:
    fake = Clock()
    monkeypatch.setattr(phases.time, "perf_counter", fake)
    monkeypatch.setattr(phases, "_path", str(tmp_path / "phases.json"))
    monkeypatch.setattr(phases, "_seconds", {})
    monkeypatch.setattr(phases, "_open", [])
    return fake


def test_time_counts_once_in_the_innermost_phase(clock) -> None:
    with phases.phase("report"):
        clock.now += 1.0
        with phases.phase("evaluate"):
            clock.now += 2.0
            with phases.phase("figures"):
                clock.now += 4.0
            clock.now += 8.0
        clock.now += 16.0
        with phases.phase("evaluate"):  # a second visit adds up
            clock.now += 32.0
    assert phases.recorded() == {"report": 17.0, "evaluate": 42.0, "figures": 4.0}


def test_a_decorated_function_and_an_exception_are_counted(clock) -> None:
    @phases.phase("search")
    def search() -> None:
        clock.now += 3.0
        raise ValueError("boom")

    with pytest.raises(ValueError), phases.phase("other"):
        clock.now += 1.0
        search()
    assert phases.recorded() == {"other": 1.0, "search": 3.0}


def test_other_threads_are_not_counted(clock) -> None:
    def work() -> None:
        with phases.phase("figures"):
            clock.now += 5.0

    with phases.phase("report"):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert phases.recorded() == {"report": 5.0}


def test_written_as_json_at_exit(clock, tmp_path) -> None:
    with phases.phase("load"):
        clock.now += 0.5
    phases._write()
    assert json.loads((tmp_path / "phases.json").read_text()) == {"load": 0.5}


def test_disabled_records_nothing(monkeypatch) -> None:
    monkeypatch.setattr(phases, "_path", None)
    monkeypatch.setattr(phases, "_seconds", {})
    with phases.phase("load"):
        pass
    assert not phases.enabled()
    assert phases.recorded() == {}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_workflows", REPO / "benchmarks" / "bench_workflows.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_benchmark_splits_a_cold_compare_into_its_phases(tmp_path, data_dir, monkeypatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    row = _bench().run_once(["compare", "--retrievers", "tfidf", "bm25", "--dataset", "cranfield"], tmp_path / "out")
    for name in ("import", "load", "index", "search", "evaluate", "report", "figures", "other"):
        assert row[name] > 0, name
    assert row["start"] > 0
    assert row["wall"] == pytest.approx(sum(v for k, v in row.items() if k not in ("wall", "cpu")))
    assert row["cpu"] > 0
    assert (tmp_path / "out" / "report.html").is_file()
