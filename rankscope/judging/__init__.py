"""Relevance judgments where nobody judged: judges behind one interface and a cache that never pays twice.

A judge (:class:`~rankscope.judging.base.Judge`) grades (query, document) pairs 0-3, each with a
status (ok, invalid reply, failed) and the raw reply; :func:`~rankscope.judging.spec.make_judge`
builds one from a spec (``openai:model=M,base_url=U``, ``qrels:PATH,flip=F,seed=S``), and
:class:`~rankscope.judging.callable_judge.CallableJudge` wraps a Python function. docs/judges.md.
"""

from rankscope.judging.base import (
    FAILED,
    INVALID,
    LABELS,
    OK,
    STATUSES,
    Judge,
    JudgeError,
    JudgeFailedError,
    JudgeIdentity,
    Judgment,
    Pair,
)
from rankscope.judging.spec import make_judge, parse_judge_spec

__all__ = [
    "FAILED",
    "INVALID",
    "LABELS",
    "OK",
    "STATUSES",
    "Judge",
    "JudgeError",
    "JudgeFailedError",
    "JudgeIdentity",
    "Judgment",
    "Pair",
    "make_judge",
    "parse_judge_spec",
]
