"""rankscope as a measure provider of ir_measures: ``provider.calc_aggregate(measures, qrels, run)``.

ir_measures keeps its providers in ``ir_measures.providers.registry``, which anyone may add to
(``providers.register``); importing this module registers rankscope there as ``rankscope``. Its
``DefaultPipeline`` (what ``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment`` call) is a
fixed list built when ir_measures is imported, with no discovery of other packages' providers, so
rankscope enters it only when asked: :func:`first_in_default_pipeline` puts it first for a block and
takes it out again.

The measures are those of pytrec_eval's provider that rankscope computes the same way (trec_eval's
semantics and tie rule: score descending, then doc_id descending), plus ``RR@k`` and ``Judged@k``:
``AP``, ``AP@k``, ``P@k``, ``R@k``, ``RR``, ``RR@k``, ``nDCG``, ``nDCG@k`` (with ``gains``), ``Rprec``,
``Bpref``, ``infAP``, ``Success@k``, ``SetP``, ``SetR``, ``SetF`` (beta 1), ``IPrec@r``, ``NumRet``,
``NumRel``, ``Judged@k``, each with ``rel=`` where it has one. ``judged_only=True`` (trec_eval's ``-J``)
is not among them: rankscope has no such filter, so another provider of the pipeline takes it.
As the other providers do, a query is scored when it is in both the qrels and the run; ir_measures
gives a qrels query the run lacks its measure's default. Scores are compared in double precision,
where trec_eval and pytrec_eval round them to float32 first (docs/metrics.md): runs whose scores
are exact in float32 get the same numbers from both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import ir_measures
import pandas as pd
from ir_measures import Metric as IrMetric
from ir_measures import providers
from ir_measures.measures.base import Measure

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.metrics import parse_metric

_SUPPORTED = {
    "AP": ("rel", "cutoff"),
    "P": ("rel", "cutoff"),
    "R": ("rel", "cutoff"),
    "RR": ("rel", "cutoff"),
    "nDCG": ("cutoff", "dcg", "gains"),
    "Rprec": ("rel",),
    "Bpref": ("rel",),
    "infAP": ("rel",),
    "Success": ("rel", "cutoff"),
    "SetP": ("rel", "relative"),
    "SetR": ("rel",),
    "SetF": ("rel", "beta"),
    "IPrec": ("recall",),
    "NumRet": ("rel",),
    "NumRel": ("rel",),
    "Judged": ("cutoff",),
}
"""ir_measures' measure names rankscope provides, and the parameters each may be given."""
_FIXED = {"dcg": "log2", "relative": False, "beta": 1.0, "judged_only": False}
"""Parameters rankscope's measures take only at these values."""


class RankscopeProvider(providers.Provider):
    """rankscope's :func:`~rankscope.evaluation.engine.evaluate` behind ir_measures' provider interface."""

    NAME = "rankscope"

    def supports(self, measure: Measure) -> bool:
        """True for the measures of the module doc, at parameters rankscope computes as pytrec_eval does."""
        measure.validate_params()
        allowed = _SUPPORTED.get(str(measure.NAME))
        if allowed is None:
            return False
        for name, value in measure.params.items():
            if name in _FIXED:
                if value != _FIXED[name]:
                    return False
            elif name not in allowed:
                return False
        if measure.NAME == "NumRel" and measure.params.get("rel", 1) != 1:
            return False  # pytrec_eval's num_rel ignores the level; not computed differently here
        return _metric_name(measure) is not None

    def _evaluator(self, measures: Iterable[Measure], qrels: Any) -> RankscopeEvaluator:
        measures = list(measures)
        names: dict[str, list[Measure]] = {}
        for measure in measures:
            name = _metric_name(measure)
            if name is None:
                raise RankscopeError(f"ir_measures measure {measure} is not provided by rankscope")
            names.setdefault(name, []).append(measure)
        table = ir_measures.util.QrelsConverter(qrels).as_pd_dataframe()[["query_id", "doc_id", "relevance"]]
        return RankscopeEvaluator(measures, table, names)


class RankscopeEvaluator(providers.Evaluator):
    """One qrels table and a set of measures, for as many runs as are given."""

    def __init__(self, measures: list[Measure], qrels: pd.DataFrame, names: dict[str, list[Measure]]) -> None:
        self.query_ids = set(qrels["query_id"].astype(str))
        super().__init__(measures, self.query_ids)
        self.qrels = qrels
        self.names = names

    def _iter_calc(self, run: Any) -> Iterator[IrMetric]:
        table = ir_measures.util.RunConverter(run).as_pd_dataframe()[["query_id", "doc_id", "score"]]
        if not self.query_ids & set(table["query_id"].astype(str)):
            return  # no query in common: ir_measures gives each qrels query its measure's default
        result = evaluate(self.qrels, table, list(self.names), judged_only=True)
        for query_id, name, value in result.per_query[["query_id", "metric", "value"]].itertuples(index=False):
            for measure in self.names[name]:
                yield IrMetric(query_id=query_id, measure=measure, value=float(value))


def _metric_name(measure: Measure) -> str | None:
    """rankscope's canonical name of an ir_measures measure (its own text is one rankscope reads)."""
    try:
        return parse_metric(str(measure), suggest=False).name
    except RankscopeError:
        return None


provider = providers.register(RankscopeProvider())
"""The provider, registered in ``ir_measures.providers.registry["rankscope"]``."""


@contextlib.contextmanager
def first_in_default_pipeline() -> Iterator[RankscopeProvider]:
    """rankscope first in ``ir_measures.DefaultPipeline`` inside the block (``ir_measures.calc_aggregate``,
    ``pt.Experiment``), the pipeline as it was after it; measures it does not provide go to the others."""
    pipeline = ir_measures.DefaultPipeline.providers
    before = list(pipeline)
    pipeline.insert(0, provider)
    try:
        yield provider
    finally:
        pipeline[:] = before
