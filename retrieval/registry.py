"""Names and parameter strings for retrievers: ``make_retriever("bm25:k1=0.9,b=0.4")``.

Built-in retrievers register themselves with :func:`register` when their module
is imported; the registry imports those modules on first lookup, so importing
this module is cheap, and built-in modules themselves import heavy optional
dependencies (gensim, faiss, rank-bm25, jieba) only when a retriever is used.
Third-party retrievers use the same decorator::

    @register("my-retriever")
    class MyRetriever(Retriever): ...

and an installed package makes its retrievers available to every spec (and so to
the CLI) through the entry-point group ``rankscope.retrievers``::

    [project.entry-points."rankscope.retrievers"]
    my-retriever = "my_package.module:MyRetriever"

An entry point is imported only when its name is looked up and is not built in
(a built-in name always means the built-in); :func:`available` lists its name
without importing it.

A spec is ``name`` or ``name:key=value,key=value``. Values are read and checked
by the retriever's ``parameters`` table (:mod:`retrieval.params`); unknown names,
unknown parameters and refused values are a one-line :class:`SpecError` that says
what is allowed.
Commas inside brackets ``()[]{}`` do not split, so a value may itself hold a spec.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import typing
from pathlib import Path

from rankscope.core.suggest import did_you_mean
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.params import SpecError, parse_values
from rankscope.retrieval.storage import META_FILE, IndexFormatError, read_meta, verify_index

BUILTINS = {
    "bm25": "rankscope.retrieval.bm25",
    "rank_bm25": "rankscope.retrieval.rank_bm25_backend",
    "tfidf": "rankscope.retrieval.tfidf",
    "w2v": "rankscope.retrieval.word2vec",
    "hybrid": "rankscope.retrieval.fusion",
    "dense": "rankscope.retrieval.dense",
    "rerank": "rankscope.retrieval.rerank",
    "pisa": "rankscope.retrieval.engines.pisa",
    "lucene": "rankscope.retrieval.engines.lucene",
}
"""Each built-in retriever's name and the module whose import registers it: a lookup imports only
the module it needs, so checking ``bm25:k1=-1`` never loads gensim, faiss or torch."""

ENTRY_POINT_GROUP = "rankscope.retrievers"
"""The entry-point group third-party packages register retrievers in."""

_REGISTRY: dict[str, type[Retriever]] = {}


__all__ = [
    "SpecError",
    "available",
    "load_retriever",
    "make_retriever",
    "parse_spec",
    "register",
    "retriever_class",
    "split_top_level",
]


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


def _load_builtin(module: str) -> None:
    """Import a built-in retriever's module (one whose optional dependency is missing is skipped)."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise


def available() -> list[str]:
    """Names of every retriever: registered ones and installed packages' entry points, sorted."""
    for module in dict.fromkeys(BUILTINS.values()):
        _load_builtin(module)
    return sorted(set(_REGISTRY) | {entry.name for entry in _entry_points()})


def retriever_class(name: str) -> type[Retriever]:
    """The class registered under ``name`` (built-ins first, then installed packages' entry points)."""
    if name not in _REGISTRY and name in BUILTINS:
        _load_builtin(BUILTINS[name])
    if name not in _REGISTRY:
        _load_entry_point(name)
    if name not in _REGISTRY:
        raise SpecError(f"unknown retriever {name!r}{did_you_mean(name, available())}; known: {', '.join(available())}")
    return _REGISTRY[name]


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load_entry_point(name: str) -> None:
    """Import the entry point called ``name`` (if one is installed) and register what it names."""
    found = [entry for entry in _entry_points() if entry.name == name]
    if not found:
        return
    entry = found[0]
    origin = f"entry point {name} = {entry.value} ({ENTRY_POINT_GROUP}"
    origin += f", package {entry.dist.name})" if entry.dist is not None else ")"
    try:
        cls = entry.load()
    except Exception as exc:  # a broken plugin is the user's problem to fix, said in one line
        raise SpecError(f"retriever {name!r}: {origin} failed to load: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Retriever)):
        raise SpecError(f"retriever {name!r}: {origin} names {cls!r}, not a Retriever subclass")
    if _REGISTRY.get(name) is not cls:
        register(name)(cls)


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
    """Build the retriever a spec describes; parameters left out keep their defaults, and the spec of the
    result names every one, so a saved run says exactly what made it.

    >>> import pandas as pd
    >>> bm25 = make_retriever("bm25:k1=0.9,b=0.4")
    >>> bm25.spec()
    'bm25:variant=lucene,k1=0.9,b=0.4,...'
    >>> corpus = pd.DataFrame({"doc_id": ["d1", "d2", "d3"], "title": "",
    ...                        "text": ["the cat sat on the mat", "dogs bark at cats", "a quiet afternoon"]})
    >>> run = bm25.index(corpus).search(pd.DataFrame({"query_id": ["q1"], "text": ["cat"]}), k=2)
    >>> run[["doc_id", "rank"]].values.tolist()  # equal scores: doc_id descending, as trec_eval
    [['d2', 1], ['d1', 2]]
    """
    name, raw = parse_spec(spec)
    cls = retriever_class(name)
    return cls(**parse_values(cls.parameters, raw, name))


def brief_spec(spec: str) -> str:
    """``spec`` with only the parameters that differ from their defaults, as written in it, and each
    bracketed part spec (a fusion's or a rerank's) made brief the same way: what a terminal shows,
    while files and the provenance keep the full spec. ``bm25:variant=lucene,k1=1.9,b=0.75,...``
    becomes ``bm25:k1=1.9``."""
    name, raw = parse_spec(spec)
    cls = retriever_class(name)
    values = parse_values(cls.parameters, raw, name)
    defaults = {p.name: p.default for p in cls.parameters}
    kept = [f"{key}={_brief_parts(raw[key])}" for key in raw if values[key] != defaults[key]]
    return f"{name}:{','.join(kept)}" if kept else name


def _brief_parts(value: str) -> str:
    """A parameter value with each top-level ``[spec]`` in it made brief (others as written)."""
    if not value.startswith("["):
        return value
    pieces = []
    for piece in split_top_level(value, "+"):
        inner = piece.strip()
        pieces.append(f"[{brief_spec(inner[1:-1])}]" if inner.startswith("[") and inner.endswith("]") else piece)
    return "+".join(pieces)


def with_analyzer(spec: str, analyzer: str | None) -> str:
    """``spec`` with ``analyzer=<analyzer>`` added when its retriever has an analyzer parameter and the
    spec sets none: the dataset-level ``--analyzer`` option (one ``--analyzer chinese`` instead of
    ``analyzer=chinese`` in every spec). A spec that sets its own, or whose retriever has no
    analyzer (a hybrid's parts are specs of their own), is returned unchanged; so is every spec
    when ``analyzer`` is None."""
    if analyzer is None:
        return spec
    name, params = parse_spec(spec)
    if "analyzer" in params or "analyzer" not in {p.name for p in retriever_class(name).parameters}:
        return spec
    return f"{spec.strip()},analyzer={analyzer}" if params else f"{name}:analyzer={analyzer}"


def load_retriever(directory: str | os.PathLike[str], *, verify: bool = False) -> Retriever:
    """Load a saved index of any registered kind (its ``meta.json`` names the retriever).

    ``verify=True`` first checks every file against the checksums recorded when it was saved.
    """
    kind = read_meta(directory)["kind"]
    try:
        cls = retriever_class(kind)
    except SpecError:
        raise IndexFormatError(
            Path(directory) / META_FILE, None, f"unknown index kind {kind!r}; known: {', '.join(available())}"
        ) from None
    if verify:
        verify_index(directory)
    return cls.load(directory)


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
