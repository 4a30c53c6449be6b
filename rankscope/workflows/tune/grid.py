"""Parameter grids from ``start:stop:step`` strings, strict so a typo never tunes the wrong range; the
default grid (BM25's k1 and b) and grid values as plain Python values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError

DEFAULT_K1 = "0.2:2.0:0.1"
DEFAULT_B = "0.0:1.0:0.05"
SHORTHANDS = ("k1", "b")
"""Parameters with an option of their own (``--k1``, ``--b``), named so in messages."""
_DECIMALS = 10  # grid values are rounded so 0.1 * 3 prints as 0.3, not 0.30000000000000004
MAX_POINTS = 100_000
"""The most values one parameter's range gives, and the most points a grid scores (each point is a search
of every query): a typo like ``0:100000000:1`` is refused at once instead of running for days."""


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
    if n_steps + 1 > MAX_POINTS:
        raise RankscopeError(
            f"--{name} {text!r}: {n_steps + 1:,} values, more than the {MAX_POINTS:,} a grid may hold; use a larger step"
        )
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


def parse_param(item: str) -> tuple[str, str]:
    """``name=values`` from ``--param`` into its two parts."""
    name, eq, values = item.partition("=")
    if not eq or not name.strip() or not values.strip():
        raise RankscopeError(f"--param {item!r}: expected name=values, e.g. fb_terms=5:30:5 or norm=minmax,zscore")
    return name.strip(), values.strip()


def parse_values(text: str, kind: type, flag: str) -> list[str] | list[float] | list[int]:
    """Grid values for a parameter of type ``kind`` (its :class:`~rankscope.retrieval.params.Param`'s);
    errors name ``--flag``.

    ``start:stop:step`` (see :func:`parse_range`), one value, or a comma-separated list
    (``minmax,zscore``, ``10,60,100``). An int parameter takes whole numbers only; a
    float parameter takes numbers; a text parameter takes the words as given.
    """
    if kind is bool:
        raise RankscopeError(f"--{flag} {text!r}: a true/false parameter is not tunable on a grid")
    if kind is str:
        if ":" in text:
            raise RankscopeError(f"--{flag} {text!r}: the parameter is text; list its values, e.g. a,b")
        return [v.strip() for v in text.split(",") if v.strip()]
    pieces = [v.strip() for v in text.split(",")]
    numbers = [float(x) for piece in pieces for x in parse_range(piece, flag)]
    if kind is not int:
        return numbers
    fractional = [x for x in numbers if not float(x).is_integer()]
    if fractional:
        raise RankscopeError(f"--{flag} {text!r}: the parameter takes whole numbers, got {fractional[0]:g}")
    return [int(x) for x in numbers]


def plain(value: object) -> object:
    """A numpy scalar as the Python value, a missing one (a parameter another retriever has) as None."""
    if value is pd.NA:
        return None
    return value.item() if isinstance(value, np.generic) else value
