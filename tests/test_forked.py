"""The report written on the second core: a forked child does the work, or this process does it."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from rankscope.core import forked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


@pytest.fixture
def one_thread(monkeypatch) -> None:
    """As in a command's process: no other Python thread (an earlier test may have left an idle one)."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread()])


def writer(folder: Path, calls: Path, fail: bool = False):
    def work() -> list[Path]:
        with calls.open("a") as log:
            log.write(f"{os.getpid()}\n")
        if fail:
            raise ValueError("no space left")
        path = folder / "figure.svg"
        path.write_text(str(os.getpid()))
        return [path, folder / "report.md"]

    return work


def test_the_work_runs_in_a_child_and_its_paths_come_back(tmp_path: Path, one_thread: None) -> None:
    calls = tmp_path / "calls"
    wait = forked.start(writer(tmp_path, calls))
    assert wait() == [tmp_path / "figure.svg", tmp_path / "report.md"]
    assert calls.read_text().split() == [(tmp_path / "figure.svg").read_text()]
    assert int((tmp_path / "figure.svg").read_text()) != os.getpid()  # written by another process


def test_a_failing_child_is_redone_here_so_its_error_is_raised_here(tmp_path: Path, one_thread: None) -> None:
    calls = tmp_path / "calls"
    wait = forked.start(writer(tmp_path, calls, fail=True))
    with pytest.raises(ValueError, match="no space left"):
        wait()
    child, parent = calls.read_text().split()
    assert int(parent) == os.getpid() and int(child) != os.getpid()


def test_no_child_when_asked_or_when_another_thread_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(forked.FORK_ENV, "0")
    assert forked.start(writer(tmp_path, tmp_path / "a"))()
    assert (tmp_path / "a").read_text().split() == [str(os.getpid())]
    monkeypatch.delenv(forked.FORK_ENV)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.can_fork()
        forked.start(writer(tmp_path, tmp_path / "b"))()
    finally:
        stop.set()
        thread.join()
    assert (tmp_path / "b").read_text().split() == [str(os.getpid())]


@pytest.mark.slow
def test_a_report_folder_is_the_same_with_and_without_the_child(tmp_path: Path, monkeypatch, one_thread: None) -> None:
    from rankscope.workflows import compare
    from tests.workflows.tiny_collection import small_dataset

    data = small_dataset()
    forked_out = compare(data, ["tfidf", "bm25"], out=tmp_path / "forked").files
    monkeypatch.setenv(forked.FORK_ENV, "0")
    here_out = compare(data, ["tfidf", "bm25"], out=tmp_path / "here").files
    assert [p.name for p in forked_out] == [p.name for p in here_out]
    assert {p.suffix for p in forked_out} >= {".png", ".svg", ".csv", ".trec", ".html", ".md"}
    stamped = {"provenance.json", "summary.json", "summary.tex", "report.md", "report.html"}  # time and command
    for one, other in zip(forked_out, here_out):
        if one.name not in stamped:
            assert one.read_bytes() == other.read_bytes(), one.name


def test_tqdms_monitor_thread_does_not_stop_the_child(monkeypatch) -> None:
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    stop = threading.Event()
    monitor = threading.Thread(target=stop.wait, name="tqdm_monitor")  # a terminal's progress bars start it
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread(), monitor])
    monkeypatch.setattr(forked.threading, "active_count", lambda: 2)
    assert forked.can_fork()
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread(), threading.Thread()])
    assert not forked.can_fork()
