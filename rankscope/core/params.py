"""Parameters, declared once: one :class:`Param` says what values a parameter allows.

The same declaration serves three owners, as scikit-learn's parameter constraints serve both
estimators and functions:

- a retriever's constructor parameters, as class attributes a type checker sees
  (``k1 = Param(float, 1.2, "term-frequency saturation", low=0)``: ``self.k1`` is a float);
  ``rankscope.retrieval.base.Retriever`` collects them into its ``parameters`` table, which
  checks the constructor, ``set_params`` and spec strings (``bm25:k1=0.9``);
- a metric family's keyword parameters (RBP's ``p``), read from metric names;
- the arguments of a public function, checked by :func:`check_arguments` before its body runs.

Every refusal is one line naming the owner, the parameter, the value as given and what is
allowed: ``bm25: k1=-1 is not allowed; k1 must be a float in [0, inf)``. Numbers are always
finite (``inf``, ``nan`` and ``1e400`` are refused); an int parameter refuses ``1.5`` and
``True``; a float parameter takes ints and stores floats, so a spec is the same however the
value was given.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from rankscope.core.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

ENDS = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}
"""``closed`` values of a range and the brackets that show them, as in scikit-learn's ``Interval``."""

_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_TYPE_NAMES = {bool: "true or false", int: "an int", float: "a float", str: "a string"}
_FIELDS = ("name", "kind", "default", "help", "low", "high", "closed", "choices", "optional", "objects", "check")


def _number(bound: float) -> str:
    """A bound as written: an integer in full (``4294967295``, not ``4.29497e+09``), a float short."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


class Param(Generic[T]):
    """One parameter and what values it allows.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str`` (how text is read); ``low``/``high``
    bound a number, ``closed`` says which ends are included; ``choices`` lists the allowed
    values (or is a function returning them, for a list that grows at run time, like the
    analyzer presets); ``optional`` also allows None; ``objects`` are further types accepted
    from Python only (an ``Analyzer``); ``check`` is called with a value that passed the rest
    and raises ValueError for what a table cannot say (a hybrid's sub-specs must be valid).

    Written ``Param(kind, default, help, ...)`` as a class attribute or a keyword of
    :func:`check_arguments` (the attribute or keyword gives the name), or
    ``Param(name, kind, default, help, ...)`` in a ``parameters`` tuple (the older form).
    As a class attribute it is a descriptor: the class gives the Param, an instance the
    value its constructor stored.
    """

    name: str
    kind: type
    default: Any
    help: str
    low: float | None
    high: float | None
    closed: str
    choices: tuple[Any, ...] | Callable[[], tuple[Any, ...]] | None
    optional: bool
    objects: tuple[type, ...]
    check: Callable[[Any], object] | None

    @overload
    def __init__(self, kind: type[T], default: T, help: str = "", **options: Any) -> None: ...

    @overload
    def __init__(self, kind: type[T], **options: Any) -> None: ...

    @overload
    def __init__(self: Param[Any], kind: str, default: type, help: Any, *args: str, **options: Any) -> None: ...

    def __init__(self, kind: Any, default: Any = None, help: Any = "", *args: Any, **options: Any) -> None:
        if isinstance(kind, str):  # Param(name, kind, default, help): the table form
            name, kind, default, (help,) = kind, default, help, args or ("",)
        else:
            name = options.pop("name", "")
            if args:
                raise TypeError(f"Param({kind!r}, ...): at most kind, default and help are positional")
        values = {"low": None, "high": None, "closed": "both", "choices": None, "optional": False, "objects": ()}
        unknown = set(options) - {*values, "check"}
        if unknown:
            raise TypeError(f"Param {name!r}: unknown option(s) {sorted(unknown)}")
        values.update(options)
        fields = {"name": name, "kind": kind, "default": default, "help": help, "check": None, **values}
        for key in _FIELDS:
            object.__setattr__(self, key, fields[key])
        if kind not in _TYPE_NAMES:
            raise TypeError(f"Param {name!r}: kind must be bool, int, float or str, got {kind!r}")
        if self.closed not in ENDS:
            raise ValueError(f"Param {name!r}: closed must be one of {list(ENDS)}, got {self.closed!r}")

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Param {self.name!r} is frozen; use replace(...) for a changed copy")

    def __set_name__(self, owner: type, name: str) -> None:
        """Take the attribute's name (a Param shared by several classes must be named the same in each)."""
        if self.name and self.name != name:
            raise TypeError(f"{owner.__qualname__}.{name}: this Param is named {self.name!r}")
        object.__setattr__(self, "name", name)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Param[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        """The Param on the class; on an instance the constructor stores the value in its ``__dict__``,
        which Python reads before this (a non-data descriptor), so this runs only if it never did."""
        if obj is None:
            return self
        raise AttributeError(f"{type(obj).__name__} has no value for parameter {self.name!r} yet")

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={getattr(self, key)!r}" for key in _FIELDS if key not in ("kind", "name"))
        return f"Param({self.name!r}, {self.kind.__name__}, {shown})"

    def replace(self, **changes: Any) -> Param[T]:
        """A copy with some fields changed (a subclass narrowing its parent's parameter)."""
        fields = {key: getattr(self, key) for key in _FIELDS}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Param {self.name!r}: unknown field(s) {sorted(unknown)}")
        fields.update(changes)
        return Param(fields.pop("kind"), fields.pop("default"), fields.pop("help"), **fields)

    def allowed(self) -> str:
        """What values are allowed, e.g. ``a float in [0, inf)`` or ``one of okapi, lucene``."""
        if self.choices is not None:
            text = "one of " + ", ".join(str(c) for c in self.allowed_choices() or ())
        else:
            text = _TYPE_NAMES[self.kind]
            if self.low is not None or self.high is not None:
                text += f" in {self.interval()}"
        extras = [f"{'an' if t.__name__[0] in 'AEIOU' else 'a'} {t.__name__}" for t in self.objects]
        return " or ".join([text, *extras, *(["None"] if self.optional else [])])

    def allowed_choices(self) -> tuple[Any, ...] | None:
        """The allowed values as of now (None: any value of the right type and range)."""
        return self.choices() if callable(self.choices) else self.choices

    def interval(self) -> str:
        """The range in interval notation, ``[0, 1]``, ``(0, inf)``; a missing bound is an open infinity."""
        left, right = ENDS[self.closed]
        low = "(-inf" if self.low is None else f"{left}{_number(self.low)}"
        high = "inf)" if self.high is None else f"{_number(self.high)}{right}"
        return f"{low}, {high}"

    def refusal(self, owner: str, shown: str) -> ParameterError:
        """The one-line error for a refused value (``shown`` as the user wrote it)."""
        return ParameterError(f"{owner}: {self.name}={shown} is not allowed; {self.name} must be {self.allowed()}")

    def parse(self, text: str, owner: str) -> Any:
        """The value a text gives (``k1=0.9`` in a spec, ``p=0.8`` in a metric name), validated."""
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
        """``value`` as stored (ints become floats for a float parameter), or a :class:`ParameterError`."""
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
                raise ParameterError(f"{owner}: {self.name}={shown} is not allowed; {exc}") from None
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
        choices = self.allowed_choices()
        if choices is not None and value not in choices:
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


def changed(parameters: Iterable[Param[Any]], name: str, **changes: Any) -> tuple[Param[Any], ...]:
    """``parameters`` with the one named ``name`` changed (a subclass narrowing its parent's table)."""
    parameters = tuple(parameters)
    if name not in {p.name for p in parameters}:
        raise KeyError(f"no parameter {name!r} to change; known: {[p.name for p in parameters]}")
    return tuple(p.replace(**changes) if p.name == name else p for p in parameters)


def check_values(parameters: Iterable[Param[Any]], values: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Every parameter's validated value: ``values`` over the defaults. Unknown names are an error."""
    table = known(parameters, values, owner)
    return {name: p.validate(values[name], owner) if name in values else p.default for name, p in table.items()}


def parse_values(parameters: Iterable[Param[Any]], raw: Mapping[str, str], owner: str) -> dict[str, Any]:
    """Typed values of ``key=value`` strings (only those given)."""
    table = known(parameters, raw, owner)
    return {name: table[name].parse(text, owner) for name, text in raw.items()}


def known(parameters: Iterable[Param[Any]], names: Iterable[str], owner: str) -> dict[str, Param[Any]]:
    """The parameters by name, or a :class:`ParameterError` listing the known ones if ``names`` has another."""
    table = {p.name: p for p in parameters}
    unknown = sorted(set(names) - set(table))
    if unknown:
        raise ParameterError(f"{owner} has no parameter(s) {unknown}; known: {', '.join(table) or '(none)'}")
    return table


def check_arguments(**params: Param[Any]) -> Callable[[F], F]:
    """Decorator: check the named arguments of a public function against their :class:`Param` before it runs.

    ``@check_arguments(k=Param(int, low=1))`` refuses ``f(k=0)`` with
    ``f: k=0 is not allowed; k must be an int in [1, inf)`` and passes the validated value
    (a float parameter given an int gets a float). The defaults come from the function's
    signature and are checked once, when it is decorated; only given arguments are checked
    per call.
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        owner = function.__qualname__.removesuffix(".__init__")  # a class names its constructor
        table: dict[str, Param[Any]] = {}
        for key, param in params.items():
            if key not in signature.parameters:
                raise TypeError(f"check_arguments: {owner} has no argument {key!r}")
            table[key] = param if param.name == key else param.replace(name=key)
            default = signature.parameters[key].default
            if default is not inspect.Parameter.empty:
                table[key].validate(default, owner)

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            for key, value in bound.arguments.items():
                if key in table:
                    bound.arguments[key] = table[key].validate(value, owner)
            return function(*bound.args, **bound.kwargs)

        checked.parameters = tuple(table.values())  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate


def parameter_table(parameters: Iterable[Param[Any]]) -> pd.DataFrame:
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


SEED = Param(
    int,
    0,
    "seed of the random generators (tests, folds, sampling): numpy's take 0 to 2**32-1",
    low=0,
    high=2**32 - 1,
    name="seed",
)
"""Every public seed: a negative one is a ValueError deep inside numpy, a larger one differs between generators."""

WORKERS = Param(
    int, 1, "processes working at once (this one and the others forked from it)", low=1, high=1024, name="workers"
)
"""Every count of worker processes: 0 or a negative count is a caller's mistake, refused before any work."""


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from ``123``, ``512M``, ``2G`` (powers of 1024); anything else is a one-line error."""
    value = text.strip().upper().removesuffix("B")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)]
    if not (number.isascii() and number.isdigit()) or int(number) * _UNITS[unit] < 1:
        raise ParameterError(f"--memory-budget must be a positive size such as 512M or 2G, got {text!r}")
    return int(number) * _UNITS[unit]
