"""Names imported on first use, so importing a package or building the command-line parser stays cheap.

A package ``__init__`` that re-exported its heavy modules eagerly made every import of a
light submodule (a registry, a parameter table) pay for pandas and scipy: the CLI took
seconds to print a one-line error. The packages' public names are declared in one table
each and resolved here (PEP 562). The same holds for the parser: a command's options take their
defaults, choices and types from the workflow behind them (pandas and scipy, most of a second), which
:class:`LateParser` imports only once the command line is known to be well formed, or for its help.
"""

from __future__ import annotations

import argparse
import copy
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


def imported(path: str) -> Any:
    """What ``module:name.attribute`` names (``module`` alone: the module), its module imported now."""
    module, _, names = path.partition(":")
    value: Any = importlib.import_module(module)
    for name in names.split(".") if names else ():
        value = getattr(value, name)
    return value


@dataclass(frozen=True)
class Late:
    """An option's setting (``choices``, ``default``, ``type``) that a heavy module holds, named by its
    ``module:name`` path: read when the parser settles (:class:`LateParser`), not when the option is declared."""

    path: str

    def value(self) -> Any:
        return imported(self.path)


class LateParser(argparse.ArgumentParser):
    """An argument parser part of whose settings come from heavy modules, read only once needed: the
    functions given to :meth:`later` run once, when a command line has parsed without them (an error,
    a mistyped option or a missing value, is said before any heavy import; the line is then parsed
    again with them) or before the help is shown. A line with words it does not know is given back
    unsettled, as parsed: the parser above refuses them (``parse_args``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._later: list[Callable[[], None]] = []

    def later(self, settle: Callable[[], None]) -> None:
        """Run ``settle`` (it sets actions' help, defaults, choices, types) when the settings are needed."""
        self._later.append(settle)

    def settle(self) -> None:
        while self._later:
            self._later.pop(0)()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        return self.settled(super().parse_known_args, args, namespace)

    def settled(
        self,
        parse: Callable[..., tuple[argparse.Namespace, list[str]]],
        args: Sequence[str] | None,
        namespace: argparse.Namespace | None,
    ) -> tuple[argparse.Namespace, list[str]]:
        """``parse(args, namespace)`` (argparse's parse_known_args, or a subclass's way of parsing) once
        unsettled, then, when the line parsed with no word left over, settled and again."""
        if not self._later:
            return parse(None if args is None else list(args), namespace)
        words = None if args is None else list(args)
        first = parse(words, copy.copy(namespace))  # exits on an error, before the imports
        if first[1]:  # words it does not know: the hub refuses them (parse_args), no need to settle
            return first
        self.settle()
        return parse(words, namespace)

    def format_help(self) -> str:
        self.settle()
        return super().format_help()
