"""Warnings a command collected, printed on stderr one per line, so nothing kept on purpose goes unseen."""

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
