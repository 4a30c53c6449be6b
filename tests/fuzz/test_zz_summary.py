"""Runs last in the fuzz folder (file order): the class counts of every case before it."""

from __future__ import annotations

from harness import OUTCOMES, summary  # tests/fuzz/harness.py


def test_no_traceback_hang_or_silently_wrong_result() -> None:
    print(summary())
    assert OUTCOMES["cases"] > 0
    assert [OUTCOMES[key] for key in ("tracebacks", "hangs", "silently_wrong", "unclean")] == [0, 0, 0, 0]
