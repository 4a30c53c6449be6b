"""Progress bars for long steps: shown on a terminal, silent otherwise or when quiet.

Quiet mode is process-wide (the CLI's ``--quiet`` sets it) and can also be set
with the environment variable ``RANKSCOPE_QUIET=1``. Nothing is configured at
import time.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from typing import Self

T = TypeVar("T")


class Sliceable(Protocol):
    """A list, tuple, string or array: what :func:`progress_slices` cuts (a slice has the same type)."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> Self: ...


S = TypeVar("S", bound=Sliceable)

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


def progress(
    items: Iterable[T],
    desc: str,
    total: int | None = None,
    unit: str = "it",
    label: Callable[[T], str] | None = None,
    steps: Sequence[str] | None = None,
) -> Generator[T, None, None]:
    """Iterate over ``items`` with a tqdm bar on stderr unless quiet.

    The bar names the step running now, after the bar (``systems 1/3 [bm25]``), for steps slow
    enough that a user wonders which one is running: ``steps`` names each item in order, shown while
    it is being made (``items`` a generator doing the work: each system's run), or ``label`` names
    an item once it is given, while the loop works on it. A known ``total`` of 0 or 1 shows no bar:
    a single step has no progress to show, and a bar flashing on every one-query call would only be
    noise.
    """
    if is_quiet() or (total is not None and total <= 1):
        yield from items
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False) as bar:
        for item in _named(items, steps, bar):
            if label is not None:
                bar.set_postfix_str(label(item))
            yield item
            bar.update(1)


def _named(items: Iterable[T], steps: Sequence[str] | None, bar: Any) -> Iterator[T]:
    """``items``, the bar showing ``steps[i]`` while item ``i`` is being made."""
    iterator = iter(items)
    for position in itertools.count():
        if steps is not None and position < len(steps):
            bar.set_postfix_str(steps[position])
        try:
            yield next(iterator)
        except StopIteration:
            return


def progress_slices(items: S, size: int, desc: str, unit: str = "it") -> Iterator[S]:
    """Successive slices of at most ``size`` items, with a bar counting items (not slices) unless quiet.

    For loops that work a chunk at a time for speed: the bar still counts documents
    or queries, and costs one update per chunk, nothing per item. As with :func:`progress`,
    a single slice shows no bar.
    """
    if size < 1:
        raise ValueError(f"slice size must be a positive integer, got {size!r}")
    starts = range(0, len(items), size)
    if is_quiet() or len(starts) <= 1:
        for start in starts:
            yield items[start : start + size]
        return
    from tqdm.auto import tqdm

    with tqdm(total=len(items), desc=desc, unit=unit, file=sys.stderr, leave=False) as bar:
        for start in starts:
            piece = items[start : start + size]
            yield piece
            bar.update(len(piece))
