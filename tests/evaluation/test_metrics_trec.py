"""Every metric trec_eval defines equals pytrec_eval's value on every query (to 1e-9)."""

from __future__ import annotations

import pytest

from tests.evaluation.trec_reference import assert_matches_trec, random_case


@pytest.mark.parametrize("seed", range(8))
def test_random_runs_match_pytrec_eval(seed: int) -> None:
    qrels, run = random_case(seed)
    assert assert_matches_trec(qrels, run) > 10


@pytest.mark.parametrize("level", [2, 3])
def test_relevance_level_matches_pytrec_eval(level: int) -> None:
    qrels, run = random_case(100 + level)
    assert assert_matches_trec(qrels, run, relevance_level=level) > 10
