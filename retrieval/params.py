"""Retriever parameters, declared once: one :class:`Param` per constructor parameter.

A retriever lists its parameters in the class attribute ``parameters`` (in the
spirit of scikit-learn's ``_parameter_constraints``); that one table is the
constructor's signature and defaults, the validation of the constructor, of
``set_params`` and of spec strings (``bm25:k1=0.9``), the text of every error
and what ``rankscope retrievers`` prints::

    class MyRetriever(Retriever):
        parameters = (
            Param("k1", float, 1.2, "term-frequency saturation", low=0),
            Param("variant", str, "fast", "which formula", choices=("fast", "exact")),
        )

Numbers are always finite (``inf``, ``nan`` and ``1e400`` are refused); an int
parameter refuses ``1.5`` and ``True``; a float parameter takes ints and stores
floats, so the spec is the same however the value was given.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import RankscopeError

if TYPE_CHECKING:
    import pandas as pd

ENDS = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}
"""``closed`` values of a range and the brackets that show them, as in scikit-learn's ``Interval``."""

_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_TYPE_NAMES = {bool: "true or false", int: "an int", float: "a float", str: "a string"}


class SpecError(RankscopeError, ValueError):
    """A retriever spec or parameter names an unknown retriever or parameter, or a value it does not allow."""


@dataclass(frozen=True)
class Param:
    """One constructor parameter of a retriever and what values it allows.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str`` (how a spec string is read);
    ``low``/``high`` bound a number, ``closed`` says which ends are included;
    ``choices`` lists the allowed values (or is a function returning them, for a
    list that grows at run time, like the analyzer presets); ``optional`` also allows None;
    ``objects`` are further types accepted from Python only (an ``Analyzer``);
    ``check`` is called with a value that passed the rest and raises ValueError
    for what a table cannot say (a hybrid's sub-specs must themselves be valid).
    """

    name: str
    kind: type
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    choices: tuple[Any, ...] | Callable[[], tuple[Any, ...]] | None = None
    optional: bool = False
    objects: tuple[type, ...] = ()
    check: Callable[[Any], object] | None = None

    def __post_init__(self) -> None:
        if self.kind not in _TYPE_NAMES:
            raise TypeError(f"Param {self.name!r}: kind must be bool, int, float or str, got {self.kind!r}")
        if self.closed not in ENDS:
            raise ValueError(f"Param {self.name!r}: closed must be one of {list(ENDS)}, got {self.closed!r}")

    def allowed(self) -> str:
        """What values are allowed, e.g. ``a float in [0, inf)`` or ``one of okapi, lucene``."""
        if self.choices is not None:
            text = "one of " + ", ".join(str(c) for c in self.allowed_choices())
        else:
            text = _TYPE_NAMES[self.kind]
            if self.low is not None or self.high is not None:
                left, right = ENDS[self.closed]
                low, high = (
                    f"{self.low:g}" if self.low is not None else "-inf",
                    f"{self.high:g}" if self.high is not None else "inf",
                )
                text += (
                    f" in {left if self.low is not None else '('}{low}, {high}{right if self.high is not None else ')'}"
                )
        extras = [f"{'an' if t.__name__[0] in 'AEIOU' else 'a'} {t.__name__}" for t in self.objects]
        return " or ".join([text, *extras, *(["None"] if self.optional else [])])

    def allowed_choices(self) -> tuple[Any, ...] | None:
        """The allowed values as of now (None: any value of the right type and range)."""
        return self.choices() if callable(self.choices) else self.choices

    def interval(self) -> str:
        """The range in interval notation, ``[0, 1]``, ``(0, inf)``; a missing bound is an open infinity."""
        left, right = ENDS[self.closed]
        low = "(-inf" if self.low is None else f"{left}{self.low:g}"
        high = "inf)" if self.high is None else f"{self.high:g}{right}"
        return f"{low}, {high}"

    def refusal(self, owner: str, shown: str) -> SpecError:
        """The one-line error for a refused value (``shown`` as the user wrote it)."""
        return SpecError(f"{owner}: {self.name}={shown} is not allowed; {self.name} must be {self.allowed()}")

    def parse(self, text: str, owner: str) -> Any:
        """The value a spec string gives (``k1=0.9``), validated."""
        if self.optional and text.lower() == "none":
            return None
        if self.kind is bool:
            value: Any = _BOOL_WORDS.get(text.lower())
        elif self.kind is str:
            value = text
        else:
            try:
                value = self.kind(text)
            except ValueError:
                value = None
        if value is None:
            raise self.refusal(owner, text)
        return self.validate(value, owner, shown=text)

    def validate(self, value: Any, owner: str, shown: str | None = None) -> Any:
        """``value`` as stored (ints become floats for a float parameter), or a :class:`SpecError`."""
        shown = repr(value) if shown is None else shown
        if value is None and self.optional:
            return None
        if self.objects and isinstance(value, self.objects):
            return value
        value = self._typed(value)
        if value is None or not self._in_range(value):
            raise self.refusal(owner, shown)
        if self.check is not None:
            try:
                self.check(value)
            except ValueError as exc:
                raise SpecError(f"{owner}: {self.name}={shown} is not allowed; {exc}") from None
        return value

    def _typed(self, value: Any) -> Any:
        """``value`` as a plain bool/int/float/str, or None if it is not one."""
        if self.kind is bool:
            return value if isinstance(value, bool) else None
        if isinstance(value, bool):
            return None
        if self.kind is int:
            return int(value) if isinstance(value, numbers.Integral) else None
        if self.kind is float:
            return float(value) if isinstance(value, numbers.Real) else None
        return value if isinstance(value, str) else None

    def _in_range(self, value: Any) -> bool:
        if self.choices is not None and value not in self.allowed_choices():
            return False
        if self.kind not in (int, float):
            return True
        if not math.isfinite(value):
            return False
        low_closed = self.closed in ("both", "left")
        high_closed = self.closed in ("both", "right")
        if self.low is not None and not (value >= self.low if low_closed else value > self.low):
            return False
        return self.high is None or (value <= self.high if high_closed else value < self.high)


def changed(parameters: Iterable[Param], name: str, **changes: Any) -> tuple[Param, ...]:
    """``parameters`` with the one named ``name`` changed (a subclass narrowing its parent's table)."""
    parameters = tuple(parameters)
    if name not in {p.name for p in parameters}:
        raise KeyError(f"no parameter {name!r} to change; known: {[p.name for p in parameters]}")
    return tuple(replace(p, **changes) if p.name == name else p for p in parameters)


def check_values(parameters: Iterable[Param], values: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Every parameter's validated value: ``values`` over the defaults. Unknown names are an error."""
    table = _known(parameters, values, owner)
    return {name: p.validate(values[name], owner) if name in values else p.default for name, p in table.items()}


def parse_values(parameters: Iterable[Param], raw: Mapping[str, str], owner: str) -> dict[str, Any]:
    """Typed values of a spec's ``key=value`` strings (only those given)."""
    table = _known(parameters, raw, owner)
    return {name: table[name].parse(text, owner) for name, text in raw.items()}


def _known(parameters: Iterable[Param], names: Iterable[str], owner: str) -> dict[str, Param]:
    """The parameters by name, or a :class:`SpecError` listing the known ones if ``names`` has another."""
    table = {p.name: p for p in parameters}
    unknown = sorted(set(names) - set(table))
    if unknown:
        raise SpecError(f"{owner} has no parameter(s) {unknown}; known: {', '.join(table) or '(none)'}")
    return table


def parameter_table(parameters: Iterable[Param]) -> pd.DataFrame:
    """The parameters as a table: name, allowed values, default, help (what ``rankscope retrievers`` prints)."""
    import pandas as pd  # only here: spec parsing and checking must not load it

    rows = [
        {
            "parameter": p.name,
            "allowed": p.allowed(),
            "default": "None" if p.default is None else str(p.default),
            "help": p.help,
        }
        for p in parameters
    ]
    return pd.DataFrame(rows, columns=["parameter", "allowed", "default", "help"])
