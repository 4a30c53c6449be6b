"""The fuzz suite's harness: run the CLI in-process on a bad input, classify what happened, count it.

Every case names the outcome it must have:

- ``error``: exit 2 and exactly one stderr line ``rankscope <command>: error: ...`` holding the
  expected fragment (the file, line and problem), no traceback;
- ``warning``: exit 0 and only ``warning:`` lines on stderr, one holding the fragment;
- ``accepted``: exit 0, nothing on stderr, and the same output as the clean input.

What actually happened is counted by class (tracebacks, hangs, silently_wrong, clean_errors,
warnings, accepted) and printed at the end of the run, e.g.
``fuzz: cases=212 tracebacks=0 hangs=0 silently_wrong=0 clean_errors=170 warnings=12 accepted=30``.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rankscope.cli import main
from rankscope.core.errors import RankscopeError

CASE_SECONDS = 60
"""Per-case guard: a case running longer counts as a hang. The alarm interrupts a regular expression
too (CPython's ``re`` checks for signals while matching); the quadratic patterns it guards against took
over two minutes on these inputs. Generous, because a case may pay for first imports on a busy machine."""

OUTCOMES: Counter[str] = Counter()


class Hang(Exception):
    """Raised by the alarm when a case outlives :data:`CASE_SECONDS`."""


@dataclass(frozen=True)
class Outcome:
    code: int | None
    out: str
    err: str
    crashed: str = ""  # an exception that escaped main(), or "hang"

    @property
    def kind(self) -> str:
        """tracebacks, hangs, clean_errors, warnings, accepted or unclean (exit 2 but not one line)."""
        if self.crashed == "hang":
            return "hangs"
        if self.crashed or "Traceback" in self.err:
            return "tracebacks"
        lines = self.err.splitlines()
        if self.code == 2:
            return "clean_errors" if len(lines) == 1 and ": error: " in lines[0] else "unclean"
        if self.code == 0 and lines and all(": warning: " in line for line in lines):
            return "warnings"
        if self.code == 0 and not lines:
            return "accepted"
        return "unclean"


def _alarm(signum: int, frame: object) -> None:
    raise Hang


def run_cli(argv: Sequence[str]) -> Outcome:
    """``rankscope.cli.main(argv)`` in-process with stdout/stderr captured and an alarm as hang guard."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    except Hang:
        return Outcome(None, out.getvalue(), err.getvalue(), "hang")
    except SystemExit as exc:  # argparse usage errors exit 2 with a usage line first
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # noqa: BLE001 - the point is to count what escapes
        return Outcome(None, out.getvalue(), err.getvalue(), f"{type(exc).__name__}: {exc}"[:300])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(code, out.getvalue(), err.getvalue())


def run_call(function: Callable[[], object]) -> Outcome:
    """A library call judged like a command: a RankscopeError is the one-line error the CLI would print."""
    try:
        function()
    except RankscopeError as exc:
        return Outcome(2, "", f"rankscope call: error: {exc}\n")
    except BaseException as exc:  # noqa: BLE001 - the point is to count what escapes
        return Outcome(None, "", "", f"{type(exc).__name__}: {exc}"[:300])
    return Outcome(0, "", "")


def check(outcome: Outcome, expect: str, fragment: str = "", clean: Outcome | None = None) -> None:
    """Count the outcome's class and assert it is the expected one (see the module docstring)."""
    kind = outcome.kind
    wrong = (
        expect in ("error", "warning")
        and kind == "accepted"
        or (
            expect == "accepted"
            and kind in ("accepted", "warnings")
            and clean is not None
            and timeless(outcome.out) != timeless(clean.out)
        )
    )
    OUTCOMES["silently_wrong" if wrong else kind] += 1
    OUTCOMES["cases"] += 1
    wanted = {"error": "clean_errors", "warning": "warnings", "accepted": "accepted"}[expect]
    assert kind == wanted, (
        f"expected {wanted}, got {kind}: code={outcome.code} {outcome.crashed} stderr={outcome.err!r}"
    )
    assert fragment in outcome.err, f"{fragment!r} not in {outcome.err!r}"
    if clean is not None:
        assert timeless(outcome.out) == timeless(clean.out)


_SECONDS = re.compile(r" in \d+(?:\.\d+)? s\b")


def timeless(out: str) -> str:
    """Output with wall times (``wrote ... in 1.2 s``) blanked: the one part of it that may differ
    between two runs of the same input."""
    return _SECONDS.sub(" in <t> s", out)


def summary() -> str:
    keys = ("cases", "tracebacks", "hangs", "silently_wrong", "unclean", "clean_errors", "warnings", "accepted")
    return "fuzz: " + " ".join(f"{key}={OUTCOMES[key]}" for key in keys)
