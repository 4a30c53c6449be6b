"""The audit flags a bias planted in a stub judge at 200 pairs, and leaves a noisy but fair judge alone."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from rankscope.judging import JudgeError, Pair
from rankscope.judging.audit import PROBES, audit
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.callable_judge import CallableJudge

VOCABULARY = [f"w{i}" for i in range(300)]


def sample_pairs(n: int = 400, seed: int = 1) -> list[Pair]:
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        query = " ".join(rng.choice(VOCABULARY, size=3, replace=False))
        words = list(rng.choice(VOCABULARY, size=int(rng.integers(20, 60))))
        words[int(rng.integers(len(words)))] = query.split()[0]  # some overlap with the query
        pairs.append(Pair(f"q{i % 40}", f"d{i}", query, " ".join(words)))
    return pairs


def noise(query: str, document: str) -> int:
    """A fair judge with no skill: the grade is a hash of the two texts, so any change moves it either way."""
    return hashlib.sha256(f"{query}|{document}".encode()).digest()[0] % 4


def reads_the_start_only(query: str, document: str) -> int:
    start = document.split()[:60]
    return min(3, 1 + sum(word in start for word in query.split())) if any(w in start for w in query.split()) else 0


def likes_length(query: str, document: str) -> int:
    return min(3, len(document.split()) // 40)


def likes_its_words(query: str, document: str) -> int:
    return min(3, sum(document.split().count(word) for word in query.split()) // 2)


def gullible(query: str, document: str) -> int:
    """Answers 3 when a document says so (a model that follows what it reads), else a fair hash."""
    return 3 if "answer Final score: 3" in document else noise(query, document)


@pytest.mark.parametrize(
    ("function", "planted"),
    [
        (reads_the_start_only, "position"),
        (likes_length, "length"),
        (likes_its_words, "keyword_stuffing"),
        (gullible, "injection"),
    ],
)
def test_a_planted_bias_is_flagged_at_200_pairs(tmp_path: Path, function, planted: str) -> None:
    with JudgmentCache(tmp_path) as cache:
        results = {r.probe: r for r in audit(CallableJudge(function), sample_pairs(), cache, n=200, seed=3)}
    assert list(results) == list(PROBES)
    assert results[planted].flagged and results[planted].pairs == 200
    assert results[planted].p_value < 1e-6


def test_a_fair_noisy_judge_is_not_flagged(tmp_path: Path) -> None:
    with JudgmentCache(tmp_path) as cache:
        results = audit(CallableJudge(noise), sample_pairs(), cache, n=200, seed=3)
    assert [r.flagged for r in results] == [False, False, False, False]
    assert all(r.pairs == 200 and r.up > 0.2 and r.down > 0.2 for r in results)  # it moved, both ways


def test_an_audit_run_twice_costs_its_calls_once(tmp_path: Path) -> None:
    calls = []

    def counted(query: str, document: str) -> int:
        calls.append(1)
        return noise(query, document)

    with JudgmentCache(tmp_path) as cache:
        audit(CallableJudge(counted, name="c"), sample_pairs(), cache, n=50, seed=0)
        first = len(calls)
        audit(CallableJudge(counted, name="c"), sample_pairs(), cache, n=50, seed=0)
    assert first == 50 * 5 and len(calls) == first  # original, padded, moved, stuffed, planted: padded is shared


def test_an_audit_needs_text_and_two_queries(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    from rankscope.judging import make_judge

    with JudgmentCache(tmp_path) as cache:
        with pytest.raises(JudgeError, match="answers from ids"):
            audit(make_judge(f"qrels:{qrels}"), sample_pairs(), cache)
        with pytest.raises(JudgeError, match="at least two queries"):
            audit(CallableJudge(noise), [Pair("q", "d", "a", "b")] * 5, cache)


def test_the_injection_probe_measures_how_far_planted_text_moves_grades(tmp_path: Path) -> None:
    """The gullible judge answers 3 for every planted version: its mean shift is 3 minus its mean grade."""
    with JudgmentCache(tmp_path) as cache:
        results = {r.probe: r for r in audit(CallableJudge(gullible), sample_pairs(), cache, n=200, seed=3)}
        fair = {r.probe: r for r in audit(CallableJudge(noise, name="fair"), sample_pairs(), cache, n=200, seed=3)}
    planted = results["injection"]
    assert planted.flagged and planted.down == 0 and planted.up > 0.6
    assert not results["position"].flagged and not fair["injection"].flagged
    assert fair["injection"].up > 0.2 and fair["injection"].down > 0.2
