"""Scoring rankings against relevance judgments, exactly as trec_eval does where it defines a metric."""

from evaluation.engine import evaluate
from evaluation.metrics import DEFAULT_METRICS
from evaluation.results import EvaluationResult

__all__ = ["DEFAULT_METRICS", "EvaluationResult", "evaluate"]
