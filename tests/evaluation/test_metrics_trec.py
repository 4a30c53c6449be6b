"""Every metric trec_eval defines equals pytrec_eval's value on every query (to 1e-9)."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluation import evaluate
from tests.evaluation.trec_reference import TREC_NAMES, pytrec_per_query, random_case

SHARED = list(TREC_NAMES)


def assert_matches_trec(qrels: pd.DataFrame, run: pd.DataFrame, relevance_level: int = 1) -> int:
    """Compare on the queries both tools score; return how many were compared."""
    ours = evaluate(qrels, run, SHARED, relevance_level=relevance_level).wide()
    reference = pytrec_per_query(qrels, run, SHARED, relevance_level)
    for qid, values in reference.items():
        for metric, expected in values.items():
            assert ours.loc[qid, metric] == pytest.approx(expected, abs=1e-9), (qid, metric)
    return len(reference)


@pytest.mark.parametrize("seed", range(8))
def test_random_runs_match_pytrec_eval(seed: int) -> None:
    qrels, run = random_case(seed)
    assert assert_matches_trec(qrels, run) > 10


@pytest.mark.parametrize("level", [2, 3])
def test_relevance_level_matches_pytrec_eval(level: int) -> None:
    qrels, run = random_case(100 + level)
    assert assert_matches_trec(qrels, run, relevance_level=level) > 10
