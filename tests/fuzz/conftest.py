"""Makes the fuzz harness importable by the fuzz tests and prints its class counts at the end of the run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests run with --import-mode=importlib: no package imports

from harness import OUTCOMES, summary  # noqa: E402


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if OUTCOMES["cases"]:
        terminalreporter.write_line(summary())
