"""Warnings a command collected, printed on stderr one per line, so nothing kept on purpose goes unseen;
notes (what a reader may want to know but need not act on) only with ``--verbose``."""

from __future__ import annotations

import sys
from collections.abc import Iterable


def print_warnings(command: str, warnings: Iterable[str]) -> int:
    """Print each warning as ``rankscope <command>: warning: <text>``; returns how many were printed."""
    count = 0
    for text in warnings:
        print(f"rankscope {command}: warning: {text}", file=sys.stderr)
        count += 1
    return count


_VERBOSE = [False]


def set_verbose(verbose: bool) -> None:
    """``--verbose``: print notes too (the hub sets it for every command)."""
    _VERBOSE[0] = verbose


def is_verbose() -> bool:
    """Whether ``--verbose`` was given (notes, and other libraries' own chatter, are printed)."""
    return _VERBOSE[0]


def print_notes(command: str, notes: Iterable[str]) -> int:
    """With ``--verbose``, print each note as ``rankscope <command>: note: <text>``; returns how many were printed."""
    if not _VERBOSE[0]:
        return 0
    count = 0
    for text in notes:
        print(f"rankscope {command}: note: {text}", file=sys.stderr)
        count += 1
    return count
