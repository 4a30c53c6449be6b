"""Judging many pairs through the cache: each distinct pair asked at most once, ever.

:func:`judge_pairs` keys every pair (:func:`~rankscope.judging.cache.pair_key`), answers the
keys the cache holds from it, asks the judge the rest (one call per distinct key, whatever the
number of (query_id, doc_id) pairs sharing the texts) and commits each answer as it arrives. The
progress bar counts calls and shows cache hits and the estimated tokens spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rankscope.core.progress import progress
from rankscope.judging.base import FAILED, INVALID, Judge, Judgment, Pair
from rankscope.judging.cache import JudgmentCache, pair_key


@dataclass(frozen=True)
class Outcome:
    """Judgments in the order of the pairs, and what getting them took."""

    judgments: tuple[Judgment, ...]
    calls: int
    cache_hits: int
    distinct: int
    estimated_tokens: int

    @property
    def invalid(self) -> int:
        return sum(j.status == INVALID for j in self.judgments)

    @property
    def failed(self) -> int:
        return sum(j.status == FAILED for j in self.judgments)


def judge_pairs(judge: Judge, pairs: Sequence[Pair], cache: JudgmentCache) -> Outcome:
    """Every pair's judgment: from the cache where it has one, from the judge (once per key) otherwise."""
    identity = judge.identity
    cache.add_judge(identity)
    keys = [pair_key(identity, pair, judge.reads_ids) for pair in pairs]
    first: dict[str, Pair] = {}
    for key, pair in zip(keys, pairs):
        first.setdefault(key, pair)
    answers = cache.lookup(first)
    hits = len(answers)
    todo = [key for key in first if key not in answers]
    asked = [first[key] for key in todo]
    tokens = 0

    def status(_: object) -> str:
        return f"cache hits {hits}, ~{tokens:,} tokens"

    calls = 0
    stream = progress(judge.stream(asked), desc="judging", total=len(asked), unit="call", label=status)
    for position, judgment in stream:
        cache.record(identity.key, todo[position], judgment)
        answers[todo[position]] = judgment
        calls += 1
        tokens += judge.estimate_tokens(asked[position])
    cache.link(identity.key, [(pair.query_id, pair.doc_id, key) for key, pair in zip(keys, pairs)])
    return Outcome(tuple(answers[key] for key in keys), calls, hits, len(first), tokens)
