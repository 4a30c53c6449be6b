"""Metric names: a small registry and a strict parser.

Grammar (lower case, no spaces)::

    name      := family | family "@" k | family "(threshold=" number ")"
    k         := positive integer without leading zeros      e.g. ndcg@10
    number    := decimal or scientific literal               e.g. precision(threshold=0.5)

``precision``, ``recall`` and ``f1`` without a cutoff are set measures over the
whole retrieved list; with ``(threshold=x)`` only documents with score >= x count
as retrieved. The formulas are in :mod:`evaluation.measures` and docs/metrics.md.
Anything else is refused with the list of known forms: a typo must never turn
into a silently missing column.

:data:`FAMILIES` is the one registry of measures: the parser, the error text,
``known_forms`` and the CLI read it, and :func:`define` adds a user's measure to it
at run time (like ``ir_measures.define``), after which its name works everywhere a
metric name does (``evaluate``, ``compare --metrics``, ``tune --metric``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.evaluation import measures
from rankscope.evaluation.ranking import Judged

DEFAULT_METRICS = ("ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "precision@10")

PerQuery = np.ndarray


@dataclass(frozen=True)
class Family:
    """One metric family and the forms it accepts (None = form not allowed)."""

    at_k: Callable[[Judged, int], PerQuery] | None
    whole: Callable[[Judged], PerQuery] | None
    threshold: Callable[[Judged, float], PerQuery] | None = None


FAMILIES: dict[str, Family] = {
    "precision": Family(measures.precision_at, measures.set_precision, measures.set_precision),
    "recall": Family(measures.recall_at, measures.set_recall, measures.set_recall),
    "f1": Family(measures.f1_at, measures.set_f1, measures.set_f1),
    "hit": Family(measures.hit_at, None),
    "mrr": Family(measures.reciprocal_rank, measures.reciprocal_rank),
    "map": Family(measures.average_precision, measures.average_precision),
    "ndcg": Family(measures.ndcg, measures.ndcg),
    "ndcg_exp": Family(measures.ndcg_exp, measures.ndcg_exp),
    "rprec": Family(None, measures.r_precision),
    "bpref": Family(None, measures.bpref),
}

CUTOFF_USES = ("optional", "required", "none")
"""How a defined measure takes a cutoff: ``name`` and ``name@k``, only ``name@k``, or only ``name``."""


def define(name: str, fn: Callable[..., PerQuery], *, cutoff: str = "optional") -> None:
    """Add the measure ``name``, computed by ``fn(judged, k)`` (``k`` None without a cutoff).

    ``judged`` is a :class:`~evaluation.ranking.Judged` (the judged retrieved documents
    in rank order, per-query counts); ``fn`` returns one float per query, in the order of
    ``judged.query_ids``. Built-in names cannot be replaced; defining a name twice
    replaces the user's own definition.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise RankscopeError(f"metric name {name!r} must be lower case letters, digits and _, starting with a letter")
    if name in _BUILT_IN:
        raise RankscopeError(f"metric {name!r} is built in and cannot be redefined")
    if cutoff not in CUTOFF_USES:
        raise RankscopeError(f"cutoff must be one of {', '.join(CUTOFF_USES)}, got {cutoff!r}")
    if not callable(fn):
        raise RankscopeError(f"metric {name!r}: fn must be callable, got {fn!r}")
    at_k = fn if cutoff != "none" else None
    whole = (lambda judged: fn(judged, None)) if cutoff != "required" else None
    FAMILIES[name] = Family(at_k, whole)


_BUILT_IN = frozenset(FAMILIES)

_NAME = re.compile(
    r"(?P<family>[a-z][a-z0-9_]*)"
    r"(?:@(?P<k>[1-9][0-9]*)"
    r"|\(threshold=(?P<threshold>-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?)\))?"
)


@dataclass(frozen=True)
class Metric:
    """A parsed metric: its name as written, family, and cutoff or score threshold."""

    name: str
    family: str
    k: int | None = None
    threshold: float | None = None

    def compute(self, judged: Judged) -> PerQuery:
        """One value per query of ``judged``."""
        family = FAMILIES[self.family]
        if self.k is not None:
            values = family.at_k(judged, self.k)  # type: ignore[misc]
        elif self.threshold is not None:
            values = family.threshold(judged, self.threshold)  # type: ignore[misc]
        else:
            values = family.whole(judged)  # type: ignore[misc]
        if self.family in _BUILT_IN:
            return values
        return _checked_values(self.name, values, judged.n_queries)


def _checked_values(name: str, values: object, n_queries: int) -> PerQuery:
    """A defined measure's output as floats, one per query, or an error naming the metric."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise RankscopeError(f"metric {name!r} returned {type(values).__name__}, not numbers") from None
    if array.shape != (n_queries,):
        raise RankscopeError(
            f"metric {name!r} returned shape {array.shape}, expected one value per query ({n_queries},)"
        )
    if not np.isfinite(array).all():
        raise RankscopeError(
            f"metric {name!r} returned a non-finite value for query {int(np.flatnonzero(~np.isfinite(array))[0])}"
        )
    return array


def known_forms() -> list[str]:
    """Every accepted form, for error messages and docs."""
    forms = []
    for name, family in FAMILIES.items():
        if family.whole is not None:
            forms.append(name)
        if family.at_k is not None:
            forms.append(f"{name}@k")
        if family.threshold is not None:
            forms.append(f"{name}(threshold=x)")
    return forms


def parse_metric(name: str) -> Metric:
    """Parse one metric name; raise :class:`RankscopeError` listing the known forms if it is not one."""
    if not isinstance(name, str):
        raise RankscopeError(f"metric names are strings, got {name!r}")
    match = _NAME.fullmatch(name)
    family = FAMILIES.get(match.group("family")) if match else None
    if match is None or family is None:
        raise RankscopeError(
            f"unknown metric {name!r}; known metrics: {', '.join(known_forms())} (k is a positive integer, x a number)"
        )
    base, k, threshold = match.group("family"), match.group("k"), match.group("threshold")
    if k is not None:
        if family.at_k is None:
            raise RankscopeError(f"metric {name!r}: {base} takes no cutoff; use {base!r}")
        return Metric(name, base, k=int(k))
    if threshold is not None:
        if family.threshold is None:
            raise RankscopeError(f"metric {name!r}: {base} takes no score threshold")
        value = float(threshold)
        if not math.isfinite(value):
            raise RankscopeError(f"metric {name!r}: threshold must be a finite number")
        return Metric(name, base, threshold=value)
    if family.whole is None:
        raise RankscopeError(f"metric {name!r} needs a cutoff, e.g. {base}@10")
    return Metric(name, base)


def parse_metrics(names: str | Iterable[str]) -> tuple[Metric, ...]:
    """Parse several names (a single string counts as one name); duplicates are refused."""
    if isinstance(names, str):
        names = [names]
    parsed = tuple(parse_metric(n) for n in names)
    if not parsed:
        raise RankscopeError("no metric requested")
    seen: set[str] = set()
    for metric in parsed:
        if metric.name in seen:
            raise RankscopeError(f"metric {metric.name!r} is listed twice")
        seen.add(metric.name)
    return parsed
