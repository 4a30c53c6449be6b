"""Progress bars for long steps: shown on a terminal, silent otherwise or when quiet.

Quiet mode is process-wide (the CLI's ``--quiet`` sets it) and can also be set
with the environment variable ``RANKSCOPE_QUIET=1``. Nothing is configured at
import time.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_quiet: bool | None = None


def set_quiet(quiet: bool) -> None:
    """Silence (or re-enable) every progress bar in this process."""
    global _quiet
    _quiet = quiet


def is_quiet() -> bool:
    """True when progress must not be shown: quiet requested, or stderr is not a terminal."""
    if _quiet is not None:
        return _quiet
    if os.environ.get("RANKSCOPE_QUIET", "") not in ("", "0"):
        return True
    return not sys.stderr.isatty()


def progress(items: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Iterate over ``items`` with a tqdm bar on stderr unless quiet."""
    if is_quiet():
        yield from items
        return
    from tqdm.auto import tqdm

    yield from tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, leave=False)
