"""Where a command's wall time goes, by phase: set ``RANKSCOPE_PHASES=FILE`` and the process writes
each phase's seconds to FILE (JSON) when it exits. ``benchmarks/bench_workflows.py`` reads it.

The workflows mark their phases with :func:`phase` (``load``, ``index``, ``search``, ``evaluate``,
``report``, ``figures``). Time is counted once, in the innermost phase open: an evaluation inside a
report counts as ``evaluate``, the report keeps the rest. Only the main thread records (a figure
drawn on another thread is not a phase of the command's critical path). Without the variable,
:func:`phase` does nothing but check a flag, so the markers cost nothing in normal runs.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES_ENV = "RANKSCOPE_PHASES"

_path = os.environ.get(PHASES_ENV) or None
_seconds: dict[str, float] = {}
_open: list[list] = []  # [name, when the phase last resumed], innermost last


def enabled() -> bool:
    """True when this process records its phases (``RANKSCOPE_PHASES`` was set when it started)."""
    return _path is not None


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Count the time inside the block as ``name`` (minus the time of phases opened inside it)."""
    if _path is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    now = time.perf_counter()
    if _open:
        outer = _open[-1]
        _seconds[outer[0]] = _seconds.get(outer[0], 0.0) + now - outer[1]
    _open.append([name, now])
    try:
        yield
    finally:
        now = time.perf_counter()
        inner = _open.pop()
        _seconds[inner[0]] = _seconds.get(inner[0], 0.0) + now - inner[1]
        if _open:
            _open[-1][1] = now


def recorded() -> dict[str, float]:
    """The seconds counted so far, per phase (a copy)."""
    return dict(_seconds)


def _write() -> None:
    if _path is not None:
        from rankscope.core.fileio import atomic_write

        with atomic_write(_path) as handle:
            json.dump(_seconds, handle)


atexit.register(_write)
