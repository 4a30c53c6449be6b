"""The ``rankscope`` program ends without Python's slow teardown (``rankscope.cli.leave``), yet as a
normal exit would: every line of output written, exit handlers run, its exit code kept, and a thread
still running waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _program(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rankscope.cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "RANKSCOPE_QUIET": "1", **(env or {})},
        timeout=120,
    )


def test_output_to_a_pipe_is_complete_and_exit_handlers_run(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.trec"
    queries = range(5_000)  # a line each: far more than the pipe's buffer of stdout holds at the end
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in queries))
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in queries))
    phases = tmp_path / "phases.json"  # written by an exit handler (rankscope.core.phases)
    done = _program(
        "evaluate", str(qrels), str(run), "map", "--per-query", "--format", "csv", env={"RANKSCOPE_PHASES": str(phases)}
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "query_id,metric,value" and lines[-1] == "all,map,1.0"
    assert len(lines) == 5_002 and set(lines[1:-1]) == {f"q{i},map,1.0" for i in queries}
    assert isinstance(json.loads(phases.read_text(encoding="utf-8")), dict)


def test_an_error_keeps_its_exit_code_and_line(tmp_path: Path) -> None:
    done = _program("evaluate", str(tmp_path / "missing.qrels"), str(tmp_path / "missing.trec"), "map")
    assert done.returncode == 2
    assert done.stderr.startswith("rankscope evaluate: error:") and done.stderr.count("\n") == 1


def test_a_thread_still_running_is_waited_for() -> None:
    code = (
        "import threading, time\n"
        "from rankscope.cli import leave\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()\n"
        "print('main done')\n"
        "leave(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["main done", "thread done"]


def test_buffered_output_is_flushed_before_leaving() -> None:
    code = "import sys\nfrom rankscope.cli import leave\nsys.stdout.write('x' * 100 + 'end')\nleave(0)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "x" * 100 + "end"
