"""Scoring rankings against relevance judgments, exactly as trec_eval does where it defines a metric."""

from rankscope.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DEFAULT_METRICS": "rankscope.evaluation.metrics",
    "EvaluationResult": "rankscope.evaluation.results",
    "evaluate": "rankscope.evaluation.engine",
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
