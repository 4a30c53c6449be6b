"""A framework retriever's own parameters on tune's grid (docs/frameworks.md, "Tuning a framework retriever").

A parameter is named by a path from the object: an attribute (``k``, LangChain BM25Retriever's),
attributes of attributes (``vectorizer.k1``, the rank_bm25 model inside it) and keys of a dictionary
held on the way (``search_kwargs.k``, ``document_store.bm25_parameters.k1``); a PyTerrier
transformer's plain name goes through its own ``get_parameter``/``set_parameter``.

For each grid point the values are set on the object, the point's queries asked, and the previous
values put back (in a ``finally``: on an error or an interrupt too). A dictionary on a path is
replaced by a changed copy, never changed in place, so putting the attribute back restores it. The
object given is as it was when tune returns, though changed while tune asks it: do not use it
elsewhere (another thread) meanwhile. Restoring, not copying, because only the framework knows
how to copy its objects (an index, a Java handle, a client).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import RankscopeError
from rankscope.workflows.common.frameworks import Adapted, attributes, framework_run

if TYPE_CHECKING:
    import pandas as pd

    from rankscope.corpora.dataset import Dataset

ABSENT = None
"""The value a dictionary key on a path has when the dictionary lacks it (the framework's default applies)."""


@dataclass(frozen=True)
class Parameter:
    """A tuned path and the type its grid values are read as (from its value now; float when unset)."""

    name: str
    kind: type


@dataclass
class FrameworkParams:
    """A framework retriever as tune's system: ``set_params`` records a point, ``search`` asks the
    dataset's judged queries with the point's values set on the object, then puts them back."""

    name: str
    adapted: Adapted
    parameters: list[Parameter]
    defaults: dict[str, object]
    data: Dataset | None = None
    point: dict[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, adapted: Adapted, paths: list[str]) -> FrameworkParams:
        """The object's parameters at ``paths``, read now (a path it lacks is a one-line error)."""
        defaults = {path: value_at(adapted.retriever, path) for path in paths}
        kinds = [Parameter(path, _kind(value)) for path, value in defaults.items()]
        return cls(name, adapted, kinds, defaults)

    def spec(self) -> str:
        return self.adapted.describe()

    def effective_params(self) -> dict[str, object]:
        return dict(self.defaults)

    def get_params(self) -> dict[str, object]:
        return {**self.defaults, **self.point}

    def set_params(self, **point: object) -> FrameworkParams:
        self.point = {**self.point, **point}
        return self

    def check(self, values: Mapping[str, object]) -> None:
        """Set and put back ``values`` at once: a read-only attribute or a value the framework refuses
        fails before any query is asked."""
        with applied(self.adapted.retriever, values):
            pass

    def bound(self, data: Dataset) -> FrameworkParams:
        """This system asking ``data``'s queries."""
        return replace(self, data=data)

    def index(self, corpus: pd.DataFrame) -> FrameworkParams:
        """Nothing to index: the framework's object holds its collection."""
        return self

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        """The run of the bound dataset's judged queries (the others are not scored) with the point set."""
        if self.data is None:
            raise RankscopeError(f"system {self.name!r}: bound to no dataset")
        with applied(self.adapted.retriever, self.point):
            run, _ = framework_run(self.name, self.adapted, self.data, k)
        return run


def _kind(value: object) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    return str if isinstance(value, str) else float


def _steps(obj: Any, path: str) -> Iterator[tuple[Any, str, Any]]:
    """(holder, step, value) along ``path``: each step an attribute of an object or a key of a mapping."""
    holder = obj
    for step in path.split("."):
        if isinstance(holder, Mapping):
            value = holder.get(step, ABSENT)
        elif hasattr(holder, step):
            value = getattr(holder, step)
        else:
            raise RankscopeError(
                f"{type(obj).__name__} has no parameter {path!r}: {type(holder).__name__} has no attribute {step!r} "
                f"(it has {', '.join(_public(holder)) or 'none'})"
            )
        yield holder, step, value
        holder = value


def _public(holder: Any) -> list[str]:
    return sorted(n for n in attributes(holder) if not n.startswith("_"))[:20]


def value_at(obj: Any, path: str) -> object:
    """The value at ``path`` (``ABSENT`` for a key its dictionary lacks)."""
    if "." not in path and callable(getattr(obj, "get_parameter", None)):
        return _framework_says(lambda: obj.get_parameter(path), obj, path, "read")
    *_, (_, _, value) = _steps(obj, path)
    return value


@contextlib.contextmanager
def applied(obj: Any, point: Mapping[str, object]) -> Iterator[None]:
    """``point``'s values set on ``obj`` while the block runs, the previous ones put back after."""
    undo: list[tuple[Any, str, object]] = []
    try:
        for path, value in point.items():
            undo.append(_set(obj, path, value))
        yield
    finally:
        for holder, name, previous in reversed(undo):
            _assign(holder, name, previous)


def _set(obj: Any, path: str, value: object) -> tuple[Any, str, object]:
    """Set ``path`` to ``value``; (holder, attribute, previous value) to put back. The attribute set is
    the last one on the path: the mappings after it are copied with the key changed."""
    steps = list(_steps(obj, path))
    last = max(i for i, (holder, _, _) in enumerate(steps) if not isinstance(holder, Mapping))
    holder, name, previous = steps[last]
    new = value
    for mapping, key, _ in reversed(steps[last + 1 :]):
        new = {**mapping, key: new}
    _assign(holder, name, new)
    return holder, name, previous


def _assign(holder: Any, name: str, value: object) -> None:
    if callable(getattr(holder, "set_parameter", None)):  # PyTerrier's own setter
        _framework_says(lambda: holder.set_parameter(name, value), holder, name, "set")
    else:
        _framework_says(lambda: setattr(holder, name, value), holder, name, "set")


def _framework_says(call: Any, holder: Any, name: str, doing: str) -> Any:
    """``call()``, with what the framework refuses as one line naming the parameter."""
    try:
        return call()
    except (AttributeError, TypeError, ValueError) as exc:
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RankscopeError(f"cannot {doing} {type(holder).__name__}'s {name!r}: {said}") from None
