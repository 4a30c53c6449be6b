"""Output piped into a reader that stops early (``rankscope evaluate ... | head -1``) ends quietly:
exit 141 (128 + SIGPIPE, as a shell reports it), no traceback, no "Exception ignored" at exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.trec"
    queries = range(20_000)  # --per-query prints a line each: far more than a pipe buffer holds
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in queries))
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in queries))
    argv = [
        sys.executable,
        "-m",
        "rankscope.cli",
        "evaluate",
        str(qrels),
        str(run),
        "map",
        "--per-query",
        "--format",
        "csv",
    ]
    env = {**os.environ, "RANKSCOPE_QUIET": "1"}
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = child.stdout.readline()
    child.stdout.close()  # the reader goes away while the command is still writing
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=300) == 141
    assert first.strip() != b""
    assert stderr == ""
