"""Package attributes imported on first use (PEP 562), so importing a package stays cheap.

A package ``__init__`` that re-exported its heavy modules eagerly made every import of a
light submodule (a registry, a parameter table) pay for pandas and scipy: the CLI took
seconds to print a one-line error. The packages' public names are declared in one table
each and resolved here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose names ``table`` maps to their defining modules."""
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name]), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace.get("__all__", ())) | set(table))

    return getattr_, dir_
