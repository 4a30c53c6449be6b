"""Work for the forked child of tests/test_forked.py: a function of a module, as a child waiting since
the command started (rankscope.core.forked.warm) is handed it by name."""

from __future__ import annotations

import os
from pathlib import Path


def write_pid(folder: Path, calls: Path, fail: bool = False) -> list[Path]:
    """Log the process doing the work in ``calls``, write its pid to ``folder/figure.svg``; ``fail`` raises."""
    with calls.open("a") as log:
        log.write(f"{os.getpid()}\n")
    if fail:
        raise ValueError("no space left")
    path = folder / "figure.svg"
    path.write_text(str(os.getpid()))
    return [path, folder / "report.md"]


def logged_sum(calls: Path, numbers: list[int], warn: bool = False) -> int:
    """Log the process in ``calls`` and give the sum of ``numbers``; ``warn`` issues a UserWarning first."""
    import warnings

    with calls.open("a") as log:
        log.write(f"{os.getpid()}\n")
    if warn:
        warnings.warn("a warning of the work", UserWarning, stacklevel=2)
    if not numbers:
        raise ValueError("nothing to add")
    return sum(numbers)


def state(pid: int) -> str:
    """The process state of ``pid`` (``Z``: a zombie, dead but not yet reaped), or ``gone``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def living(pids: set[int], seconds: float) -> set[int]:
    """Those of ``pids`` still alive (neither gone nor a zombie) after waiting up to ``seconds`` for them to end."""
    import time

    deadline = time.monotonic() + seconds
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if state(pid) not in ("gone", "Z")}
        time.sleep(0.05)
    return pids
