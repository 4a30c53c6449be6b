"""Parameter grids from ``start:stop:step`` strings, strict so a typo never tunes the wrong range."""

from __future__ import annotations

import numpy as np

from rankscope.core.errors import RankscopeError

_DECIMALS = 10  # grid values are rounded so 0.1 * 3 prints as 0.3, not 0.30000000000000004


def parse_range(text: str, name: str = "range") -> np.ndarray:
    """Values of ``start:stop:step``, both ends included (``0.2:2.0:0.1`` gives 19 values).

    The stop must be reached by whole steps (within 1e-9 of a step): a grid that
    silently stops short of what the user typed would hide the best point.
    A single number ``x`` is the one-point grid ``[x]``.
    """
    parts = text.split(":")
    if len(parts) == 1:
        return np.array([_number(parts[0], text, name)])
    if len(parts) != 3:
        raise RankscopeError(f"--{name} {text!r}: expected start:stop:step (e.g. 0.2:2.0:0.1) or one number")
    start, stop, step = (_number(p, text, name) for p in parts)
    if step <= 0:
        raise RankscopeError(f"--{name} {text!r}: step must be positive, got {step:g}")
    if stop < start:
        raise RankscopeError(f"--{name} {text!r}: stop {stop:g} is below start {start:g}")
    steps = (stop - start) / step
    n_steps = round(steps)
    if abs(steps - n_steps) > 1e-9 * max(1.0, steps):
        raise RankscopeError(f"--{name} {text!r}: stop {stop:g} is not start plus a whole number of steps of {step:g}")
    return np.round(start + step * np.arange(n_steps + 1), _DECIMALS)


def _number(part: str, text: str, name: str) -> float:
    try:
        value = float(part)
    except ValueError:
        raise RankscopeError(f"--{name} {text!r}: {part!r} is not a number") from None
    if not np.isfinite(value):
        raise RankscopeError(f"--{name} {text!r}: {part!r} is not a finite number")
    return value
