"""Fuzz: work beside this process (core.forked) that its child cannot finish: killed, leaving without an
answer, an answer that does not pickle or nests too deep, an exception that is no Exception. Each is done
again here, giving the value one process gives (or raising here what it raises here), never a traceback
of the helper's own."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

import pytest
from harness import check, run_call  # tests/fuzz/harness.py

from rankscope.core import forked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")
PARENT = os.getpid()


@pytest.fixture(autouse=True)
def _forking(monkeypatch: pytest.MonkeyPatch, forkable: None) -> None:
    monkeypatch.delenv(forked.FORK_ENV, raising=False)


def _in_child(hostile: Callable[[], object], value: object) -> Callable[[], object]:
    """Work that is ``hostile`` in a child and gives ``value`` in this process."""

    def work() -> object:
        return hostile() if os.getpid() != PARENT else value

    return work


def _deep() -> list[object]:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    return nested


HOSTILE: dict[str, Callable[[], object]] = {
    "killed": lambda: os.kill(os.getpid(), signal.SIGKILL),
    "leaves without answering": lambda: os._exit(0),
    "answer that does not pickle": lambda: lambda: None,
    "answer nested 100,000 deep": _deep,
    "KeyboardInterrupt": lambda: (_ for _ in ()).throw(KeyboardInterrupt()),
    "SystemExit 0": lambda: sys.exit(0),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("helper", ["beside", "start"])
def test_a_child_that_cannot_answer_is_redone_here(case: str, helper: str) -> None:
    got: list[object] = []
    run = getattr(forked, helper)
    outcome = run_call(lambda: got.append(run(_in_child(HOSTILE[case], 42))()))
    check(outcome, "accepted")
    assert got == [42]


def test_an_error_is_raised_here_as_here() -> None:
    def fails() -> object:
        raise ValueError(f"bad value in {'a child' if os.getpid() != PARENT else 'here'}")

    with pytest.raises(ValueError, match="bad value in here"):
        forked.beside(fails)()
