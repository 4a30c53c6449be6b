"""Names and parameter strings for retrievers: ``make_retriever("bm25:k1=0.9,b=0.4")``.

Built-in retrievers register themselves with :func:`register` when their module
is imported; the registry imports those modules on first lookup, so importing
this module is cheap, and built-in modules themselves import heavy optional
dependencies (gensim, faiss, rank-bm25, jieba) only when a retriever is used.
Third-party retrievers use the same decorator::

    @register("my-retriever")
    class MyRetriever(Retriever): ...

A spec is ``name`` or ``name:key=value,key=value``. Values are typed from the
constructor's annotations (or, without one, from the default's type); unknown
names, unknown parameters and ill-typed values are errors that list what is known.
Commas inside brackets ``()[]{}`` do not split, so a value may itself hold a spec.
"""

from __future__ import annotations

import importlib
import inspect
import os
import types
import typing
from typing import Any

from rankscope.core.errors import RankscopeError
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.storage import read_meta

BUILTIN_MODULES = (
    "rankscope.retrieval.bm25",
    "rankscope.retrieval.rank_bm25_backend",
    "rankscope.retrieval.tfidf",
    "rankscope.retrieval.word2vec",
    "rankscope.retrieval.fusion",
)
"""Modules whose import registers the built-in retrievers (missing ones are skipped)."""

_REGISTRY: dict[str, type[Retriever]] = {}
_builtins_loaded = False


class SpecError(RankscopeError, ValueError):
    """A retriever spec names an unknown retriever or parameter, or a value of the wrong type."""


def register(name: str) -> typing.Callable[[type[Retriever]], type[Retriever]]:
    """Class decorator: make ``cls`` available as ``name`` (and set ``cls.name``)."""
    if not name or any(c in name for c in ":,= "):
        raise ValueError(f"retriever name {name!r} must be non-empty without ':', ',', '=' or spaces")

    def decorator(cls: type[Retriever]) -> type[Retriever]:
        known = _REGISTRY.get(name)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise ValueError(
                f"retriever name {name!r} is already registered to {known.__module__}.{known.__qualname__}"
            )
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return decorator


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for module in BUILTIN_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    _builtins_loaded = True


def available() -> list[str]:
    """Names of every registered retriever, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)


def retriever_class(name: str) -> type[Retriever]:
    """The class registered under ``name``."""
    if name not in _REGISTRY:
        _load_builtins()
    if name not in _REGISTRY:
        raise SpecError(f"unknown retriever {name!r}; known: {', '.join(available())}")
    return _REGISTRY[name]


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name:k=v,k=v`` into the name and the raw (string) parameter values."""
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError(f"retriever spec must be a non-empty string like 'bm25:k1=0.9,b=0.4', got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    try:
        items = [piece for piece in split_top_level(rest, ",") if piece.strip()]
    except SpecError as exc:
        raise SpecError(f"retriever spec {spec!r}: parameters {rest!r}: {exc}") from None
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SpecError(f"retriever spec {spec!r}: expected key=value, got {item!r}")
        if key in params:
            raise SpecError(f"retriever spec {spec!r}: parameter {key!r} given twice")
        params[key] = value.strip()
    return name.strip(), params


def make_retriever(spec: str) -> Retriever:
    """Build the retriever a spec describes, e.g. ``make_retriever("bm25:k1=0.9,b=0.4")``."""
    name, raw = parse_spec(spec)
    cls = retriever_class(name)
    signature = inspect.signature(cls.__init__)
    parameters = {p: v for p, v in signature.parameters.items() if p != "self"}
    unknown = sorted(set(raw) - set(parameters))
    if unknown:
        raise SpecError(f"{name} has no parameter(s) {unknown}; known: {', '.join(parameters) or '(none)'}")
    hints = _type_hints(cls)
    kwargs = {key: _convert(name, key, value, hints.get(key), parameters[key].default) for key, value in raw.items()}
    return cls(**kwargs)


def load_retriever(directory: str | os.PathLike[str]) -> Retriever:
    """Load a saved index of any registered kind (its ``meta.json`` names the retriever)."""
    kind = read_meta(directory)["kind"]
    return retriever_class(kind).load(directory)


def split_top_level(text: str, separator: str) -> list[str]:
    """The pieces of ``text`` between ``separator`` characters outside brackets ``()[]{}``.

    Brackets let a parameter value hold a whole spec (a hybrid's sub-retrievers);
    unbalanced brackets are a :class:`SpecError` saying where (the caller adds what ``text`` was).
    """
    pieces, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                raise SpecError(f"unbalanced {char!r} at position {i}")
        elif char == separator and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    if depth:
        raise SpecError("a bracket is not closed")
    pieces.append(text[start:])
    return pieces


def _type_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except (NameError, TypeError):  # annotations naming types not importable here: fall back to defaults
        return {}


def _allowed_types(hint: Any, default: Any) -> tuple[type, ...]:
    if hint is None:
        if default is inspect.Parameter.empty or default is None:
            return (str,)
        return (type(default),)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(t for arg in typing.get_args(hint) for t in _allowed_types(arg, default))
    if hint is type(None):
        return (type(None),)
    if typing.get_origin(hint) is typing.Literal:
        return tuple({type(v) for v in typing.get_args(hint)})
    return (hint,) if isinstance(hint, type) else (str,)


def _convert(name: str, key: str, value: str, hint: Any, default: Any) -> Any:
    allowed = _allowed_types(hint, default)
    if type(None) in allowed and value.lower() == "none":
        return None
    for kind in (bool, int, float, str):
        if kind not in allowed:
            continue
        parsed = _parse_scalar(kind, value)
        if parsed is not None:
            return parsed
    expected = " or ".join(t.__name__ for t in allowed)
    raise SpecError(f"{name}: parameter {key}={value!r} is not a valid {expected}")


def _parse_scalar(kind: type, value: str) -> Any:
    if kind is bool:
        return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(value.lower())
    if kind is str:
        return value
    try:
        return kind(value)
    except ValueError:
        return None
