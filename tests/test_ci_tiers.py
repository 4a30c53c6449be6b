"""CI's tiers: .ci/run runs the README's test command tier by tier, and the quick tier's CPU budget
(tests/cpu_budget.py), checked on planted tests in a pytest of their own: a test over the budget fails unless
marked slow, and the CPU of the children it waits for counts."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PLANTED = """
import subprocess, sys, time
import pytest

def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def test_cheap():
    assert sum(range(10)) == 45

def test_burns_here():
    burn(0.4)

@pytest.mark.slow
def test_burns_marked():
    burn(0.4)

def test_burns_in_a_child():
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"], check=True)

def test_fails_on_its_own():
    assert 1 == 2
"""


def test_a_planted_test_over_the_budget_fails_unless_marked_slow(tmp_path: Path) -> None:
    (tmp_path / "test_planted.py").write_text(PLANTED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", "/dev/null", "--rootdir", str(tmp_path), "-p", "cpu_budget"]
        + ["-p", "no:cacheprovider", "-q", "-rf", str(tmp_path / "test_planted.py")],
        cwd=REPO,
        env={
            "PATH": "/usr/bin:/bin",
            "RANKSCOPE_TEST_CPU_LIMIT": "0.2",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONPATH": str(REPO / "tests"),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    failed = sorted(line.split("::")[1].split()[0] for line in done.stdout.splitlines() if line.startswith("FAILED"))
    assert failed == ["test_burns_here", "test_burns_in_a_child", "test_fails_on_its_own"], done.stdout
    assert "over the quick tier's 0.2 s: make it cheaper or mark it @pytest.mark.slow" in done.stdout
    assert "2 passed" in done.stdout.splitlines()[-1]


def test_ci_runs_the_readmes_test_command_tier_by_tier() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()[4]
    in_readme = [shlex.split(part) for part in re.findall(r"python -m pytest[^&#]*", readme)]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    in_ci = [
        shlex.split(line.split(" ", 2)[2]) for line in ci.splitlines() if re.match(r"tier \w+ python -m pytest", line)
    ]
    assert (
        in_readme
        == in_ci
        == [
            ["python", "-m", "pytest", "-q", "-m", "not slow"],
            ["python", "-m", "pytest", "-q", "-m", "slow"],
        ]
    )
