"""The quick tier's budget: a test that spends more than RANKSCOPE_TEST_CPU_LIMIT seconds of CPU (5 by default)
in its body, this process's and its waited-for children's, and is not marked ``slow`` fails.

CPU time, not wall time: the machine is shared and noisy, and a test's CPU does not grow with the load.
Fixtures are not counted (a session fixture's cost would fall on whichever test asked first)."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest

DEFAULT_LIMIT = 5.0


def cpu_seconds() -> float:
    """This process's CPU plus that of the children it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def limit() -> float:
    return float(os.environ.get("RANKSCOPE_TEST_CPU_LIMIT", DEFAULT_LIMIT))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    start = cpu_seconds()
    yield
    item.stash[_SPENT] = cpu_seconds() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    spent = item.stash.get(_SPENT, 0.0)
    if call.when != "call" or not report.passed or item.get_closest_marker("slow") or spent <= limit():
        return
    report.outcome = "failed"
    report.longrepr = (
        f"{item.nodeid} spent {spent:.1f} s of CPU, over the quick tier's {limit():g} s: "
        "make it cheaper or mark it @pytest.mark.slow"
    )


_SPENT = pytest.StashKey[float]()
