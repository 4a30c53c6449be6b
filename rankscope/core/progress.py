"""Progress of long steps: a bar on a terminal, sparse lines in a pipe or a log file, nothing when quiet.

A bar redrawn in place is noise in a CI log, yet a long run with no output at all looks hung: when stderr
is not a terminal each loop prints a line at each tenth of its items (each item when there are at most
ten: a line per step), with the counts. Quiet mode is process-wide (the CLI's ``--quiet`` sets it) and
can also be set with the environment variable ``RANKSCOPE_QUIET=1``. Nothing is configured at import time.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
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
    """True when no progress may be shown at all: quiet requested (``--quiet``, ``RANKSCOPE_QUIET``)."""
    if _quiet is not None:
        return _quiet
    return os.environ.get("RANKSCOPE_QUIET", "") not in ("", "0")


def shows_bars() -> bool:
    """True when progress is a bar redrawn in place: not quiet, and stderr is a terminal (else lines)."""
    return not is_quiet() and sys.stderr.isatty()


def progress(
    items: Iterable[T],
    desc: str,
    total: int | None = None,
    unit: str = "it",
    label: Callable[[T], str] | None = None,
    steps: Sequence[str] | None = None,
) -> Generator[T, None, None]:
    """Iterate over ``items`` with a tqdm bar on stderr (lines when not a terminal) unless quiet.

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
    with _shown(total, desc, unit) as bar:
        for item in _named(items, steps, bar):
            if label is not None:
                bar.set_postfix_str(label(item))
            yield item
            bar.update(1)


def _shown(total: int | None, desc: str, unit: str) -> Any:
    """The progress display of one loop: a tqdm bar on a terminal, else :class:`Lines`."""
    if not shows_bars():
        return Lines(total, desc, unit)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)


class Lines:
    """Progress as sparse lines on stderr (``searching: 300/1000 query, 4 s``), for a pipe or a log file:
    a line when the count reaches each tenth of ``total`` (with no total: 1, 10, 100... items), the item
    being worked on after the counts. The part of a bar's interface that :func:`progress` uses."""

    def __init__(self, total: int | None, desc: str, unit: str) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.count, self.postfix, self.started = 0, "", time.monotonic()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    def update(self, n: int = 1) -> None:
        before, self.count = self.count, self.count + n
        if self._tenth(before) != self._tenth(self.count):
            self._print()

    def _tenth(self, count: int) -> int:
        """Which tenth of the total ``count`` has reached (no total: its number of decimal digits)."""
        if self.total is None:
            return len(str(count)) if count else 0
        return count * 10 // max(self.total, 1)

    def _print(self) -> None:
        counts = f"{self.count}/{self.total}" if self.total is not None else str(self.count)
        named = f" ({self.postfix})" if self.postfix else ""
        seconds = time.monotonic() - self.started
        print(f"{self.desc}: {counts} {self.unit}{named}, {seconds:.0f} s", file=sys.stderr, flush=True)


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
    """Successive slices of at most ``size`` items, with a bar (or lines) counting items, not slices, unless quiet.

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
    with _shown(len(items), desc, unit) as bar:
        for start in starts:
            piece = items[start : start + size]
            yield piece
            bar.update(len(piece))
