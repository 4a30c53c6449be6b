"""The evaluation layer's shared settings, declared once: what "relevant" means and which queries count.

Every entry point that scores a run (``evaluate``, ``evaluate_run_file``, ``stream_evaluate``) takes an
:class:`EvaluationOptions` as ``options=`` or its fields as keywords (``relevance_level=2``), the two merged
by :func:`evaluation_options`; the functions below them take the object alone."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TypedDict

from rankscope.core.params import Param

RELEVANCE_LEVEL = Param(int, low=1, name="relevance_level")
"""Relevant means a label >= this; labels <= 0 mean non-relevant or unjudged (trec_eval), and
pytrec_eval refuses levels < 1 too."""


@dataclass(frozen=True)
class EvaluationOptions:
    """trec_eval's switches, as rankscope names them (module doc of :mod:`rankscope.evaluation.engine`).

    >>> EvaluationOptions(relevance_level=2).judged_only
    False
    >>> EvaluationOptions(relevance_level=0)
    Traceback (most recent call last):
    ...
    rankscope.core.errors.ParameterError: EvaluationOptions: relevance_level=0 is not allowed; relevance_level must be an int in [1, inf)
    """

    relevance_level: int = 1
    """A document is relevant when its label is >= this (trec_eval's ``-l``)."""
    judged_only: bool = False
    """Average over queries in both qrels and run only (a qrels query missing from the run scores 0 otherwise)."""
    exclude_unjudged: bool = False
    """Leave out queries whose judgments hold no relevant document (they score 0 and count otherwise)."""
    ignore_self: bool = False
    """Drop run rows whose doc_id is their query_id (BEIR's ArguAna and Quora)."""
    allow_disjoint: bool = False
    """Score a run sharing no query with the qrels (every query 0) instead of refusing it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "relevance_level", RELEVANCE_LEVEL.validate(self.relevance_level, type(self).__name__))


class EvaluationSettings(TypedDict, total=False):
    """:class:`EvaluationOptions`' fields as keywords (``evaluate(qrels, run, relevance_level=2)``)."""

    relevance_level: int
    judged_only: bool
    exclude_unjudged: bool
    ignore_self: bool
    allow_disjoint: bool


_NAMES = frozenset(field.name for field in fields(EvaluationOptions))


def evaluation_options(
    options: EvaluationOptions | None, settings: EvaluationSettings, owner: str
) -> EvaluationOptions:
    """``options`` (default: trec_eval's defaults) with the keywords given beside it applied over it."""
    unknown = sorted(set(settings) - _NAMES)
    if unknown:
        raise TypeError(f"{owner}() got unexpected keyword argument(s) {unknown}; known: {sorted(_NAMES)}")
    if options is not None and not isinstance(options, EvaluationOptions):
        raise TypeError(f"{owner}(): options must be an EvaluationOptions, got {type(options).__name__}")
    if "relevance_level" in settings:  # refused in the name of the function the caller called
        settings = {**settings, "relevance_level": RELEVANCE_LEVEL.validate(settings["relevance_level"], owner)}
    base = options if options is not None else EvaluationOptions()
    return replace(base, **settings) if settings else base
