"""Scoring rankings against relevance judgments, exactly as trec_eval does where it defines a metric."""

from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.metrics import DEFAULT_METRICS
from rankscope.evaluation.results import EvaluationResult

__all__ = ["DEFAULT_METRICS", "EvaluationResult", "evaluate"]
