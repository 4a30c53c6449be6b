"""core.forked.forked_map: results in the items' order, all items at once or at most ``ahead`` in flight,
a dead worker one WorkerLost, a task's error raised as it was, workers that die with their parent."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from rankscope.core import forked
from rankscope.core.forked import WorkerLost, forked_map
from tests.forked_work import living, state

HELD: list[int] = []
"""What each worker's set-up saw (inherited from the parent at the fork, never pickled)."""


def _hold(value: int) -> None:
    HELD.append(value)


def _task(item: int) -> tuple[int, int, int]:
    """The item, its square, and what this worker's set-up held."""
    if item == -1:
        raise ValueError("minus one is refused")
    if item == -2:
        os.kill(os.getpid(), signal.SIGKILL)
    return item, item * item, HELD[-1]


def _counted(items: list[int], read: list[int]) -> Iterator[int]:
    for item in items:
        read.append(item)
        yield item


@pytest.mark.parametrize("ahead", [1, 2, 5])
def test_at_most_ahead_items_are_in_flight_and_results_come_in_order(ahead: int) -> None:
    read: list[int] = []
    results = forked_map(2, _hold, (7,), _task, _counted(list(range(20)), read), "squaring", ahead=ahead)
    taken = []
    for result in results:
        taken.append(result)
        assert len(read) <= len(taken) + ahead - 1 or len(read) == 20, (len(read), len(taken))
    assert taken == [(i, i * i, 7) for i in range(20)]


def test_without_ahead_every_item_is_submitted_before_the_first_result() -> None:
    read: list[int] = []
    results = forked_map(2, _hold, (3,), _task, _counted(list(range(9)), read), "squaring")
    assert next(results) == (0, 0, 3) and len(read) == 9
    assert list(results) == [(i, i * i, 3) for i in range(1, 9)]


@pytest.mark.parametrize("ahead", [None, 3])
def test_a_dead_worker_is_one_worker_lost_and_a_tasks_error_is_raised_as_it_was(ahead: int | None) -> None:
    before = set(multiprocessing.active_children())  # others' (a Dask cluster of the suite) stay
    with pytest.raises(WorkerLost, match="a worker process squaring ended before giving its result"):
        list(forked_map(2, _hold, (1,), _task, [1, 2, -2, 4, 5, 6, 7], "squaring", ahead=ahead))
    with pytest.raises(ValueError, match="minus one is refused"):
        list(forked_map(2, _hold, (1,), _task, [1, -1, 3, 4], "squaring", ahead=ahead))
    assert set(multiprocessing.active_children()) <= before  # the pools are shut down


def test_closed_early_it_reads_no_further_and_stops_its_workers() -> None:
    read: list[int] = []
    before = set(multiprocessing.active_children())  # others' (a Dask cluster of the suite) stay
    results = forked_map(2, _hold, (1,), _task, _counted(list(range(1000)), read), "squaring", ahead=4)
    assert [next(results)[0] for _ in range(3)] == [0, 1, 2]
    results.close()
    assert len(read) <= 3 + 4 and set(multiprocessing.active_children()) <= before
    with pytest.raises(ValueError, match="ahead must be a positive number of items, got 0"):
        next(forked_map(2, _hold, (1,), _task, [1], "squaring", ahead=0))


def test_bounded_workers_die_with_their_parent_killed(tmp_path) -> None:
    """A parent killed mid-map (SIGKILL: no clean-up of its own) takes its workers with it."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from rankscope.core.forked import forked_map

        def slow(item):
            os.write(1, f"{os.getpid()}\\n".encode())  # one write: the two workers' lines never interleave
            time.sleep(60)

        for _ in forked_map(2, lambda: None, (), slow, iter(range(100)), "sleeping", ahead=2):
            pass
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert parent.stdout is not None and parent.stderr is not None
    started = [parent.stdout.readline() for _ in range(2)]  # each worker started its first item
    parent.kill()
    parent.wait()
    assert all(line.strip().isdigit() for line in started), (started, parent.stderr.read())
    workers = {int(line) for line in started}
    still = living(workers, 60)  # a bound for a loaded machine, not a timing
    assert still == set(), {pid: state(pid) for pid in still}


def test_a_pool_is_this_process_alone_where_no_child_may_be_forked(monkeypatch, forkable: None) -> None:
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    assert (forked.pool_size(3), forked.pool_size(1)) == (3, 1)
    monkeypatch.setattr(forked, "openmp_loaded", lambda: True)
    assert forked.pool_size(3) == 1
    monkeypatch.setattr(forked, "openmp_loaded", lambda: False)
    monkeypatch.setenv(forked.FORK_ENV, "0")
    assert forked.pool_size(3) == 1
