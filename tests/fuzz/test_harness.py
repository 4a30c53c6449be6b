"""The harness judges each case by itself, so the fuzz tests need no summary test run last: a traceback, a
hang, an unclean error or a silently wrong result fails the case that produced it, whatever runs before."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

import pytest
from harness import OUTCOMES, Outcome, check, run_call  # tests/fuzz/harness.py

from rankscope.core.errors import FormatError

CLEAN_ERROR = Outcome(2, "", "rankscope evaluate: error: run.trec, line 3: bad score\n")


@contextlib.contextmanager
def counting() -> Iterator[Counter[str]]:
    """What the cases inside add to the counts, given back on exit; the run's printed counts stay the real cases'."""
    before = OUTCOMES.copy()
    added: Counter[str] = Counter()
    try:
        yield added
    finally:
        added.update(OUTCOMES - before)
        OUTCOMES.clear()
        OUTCOMES.update(before)


@pytest.mark.parametrize(
    ("outcome", "expect", "kind"),
    [
        (Outcome(None, "", "", "ValueError: boom"), "error", "tracebacks"),
        (Outcome(None, "", "", "hang"), "error", "hangs"),
        (Outcome(2, "", "usage: rankscope\nrankscope: error: bad\n"), "error", "unclean"),
        (Outcome(0, "table\n", ""), "error", "silently_wrong"),  # a bad input accepted without a word
        (Outcome(0, "other numbers\n", ""), "accepted", "silently_wrong"),  # accepted, but not the clean output
    ],
)
def test_a_bad_outcome_fails_its_case_and_is_counted(outcome: Outcome, expect: str, kind: str) -> None:
    with counting() as added, pytest.raises(AssertionError):
        check(outcome, expect, clean=Outcome(0, "table\n", ""))
    assert added == {kind: 1, "cases": 1}


def test_the_expected_outcome_passes_and_is_counted() -> None:
    with counting() as added:
        check(CLEAN_ERROR, "error", "line 3")
        check(Outcome(0, "wrote x in 1.5 s\n", ""), "accepted", clean=Outcome(0, "wrote x in 2.0 s\n", ""))
    assert added == {"clean_errors": 1, "accepted": 1, "cases": 2}


def test_a_library_error_is_the_line_the_cli_would_print() -> None:
    def refuse() -> None:
        raise FormatError("run.trec", 3, "bad score")

    assert run_call(refuse).kind == "clean_errors"
    assert run_call(lambda: int("x")).kind == "tracebacks"
