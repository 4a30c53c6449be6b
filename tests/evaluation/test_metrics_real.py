"""Real collections: a TF-IDF run over Cranfield (graded labels) and CISI, scored by us and by trec_eval."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.evaluation import evaluate
from tests.evaluation.real_runs import tfidf_run
from tests.evaluation.trec_reference import assert_matches_trec


@pytest.mark.parametrize("collection", ["cranfield", "cisi"])
@pytest.mark.parametrize("granularity", [None, 2.0**-6])
def test_tfidf_runs_match_pytrec_eval(data_dir: Path, collection: str, granularity: float | None) -> None:
    qrels, run = tfidf_run(data_dir / collection, depth=100, granularity=granularity)
    compared = assert_matches_trec(qrels, run)
    assert compared >= 70  # queries with judgments in both tools
    if granularity is not None:
        assert run.duplicated(["query_id", "score"]).mean() > 0.5  # the tie rule really decides ranks


@pytest.mark.slow
def test_cranfield_graded_levels_match_pytrec_eval(data_dir: Path) -> None:
    qrels, run = tfidf_run(data_dir / "cranfield", depth=50, granularity=None)
    assert qrels["relevance"].nunique() >= 4
    for level in (2, 3):
        assert assert_matches_trec(qrels, run, relevance_level=level) > 50


def test_tfidf_beats_a_reversed_ranking(data_dir: Path) -> None:
    """A sanity anchor on real data: reversing a run's scores must not help."""
    qrels, run = tfidf_run(data_dir / "cranfield", depth=100, granularity=None)
    good = evaluate(qrels, run).mean
    bad = evaluate(qrels, run.assign(score=-run["score"])).mean
    assert good["ndcg@10"] > 2 * bad["ndcg@10"]
    assert good["recall@100"] == pytest.approx(bad["recall@100"])  # same documents, other order
