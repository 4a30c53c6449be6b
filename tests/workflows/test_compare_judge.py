"""compare --judge SPEC --human-sample N: the same numbers as rankscope judge then compare --judgments, one
cache between them, and intervals whose estimand is the mean under the humans' labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.export import export_dataset
from rankscope.evaluation import evaluate
from rankscope.judging.cache import JudgmentCache
from rankscope.workflows.common.judgments import read_judgments
from rankscope.workflows.compare import compare
from rankscope.workflows.judge import Study, judge
from rankscope.workflows.options import Execution, Judging
from tests.workflows.tiny_collection import small_dataset

SYSTEMS = ["bm25", "tfidf", "bm25:k1=0.3,b=0.2"]
METRICS = ["ndcg@10", "precision@5"]


def test_judging_while_comparing_equals_judge_then_compare(tmp_path: Path) -> None:
    data = small_dataset()
    cache = tmp_path / "cache"
    spec, seed = "qrels:flip=0.3,seed=2", 7
    judged = judge(data, SYSTEMS, spec, tmp_path / "judged", depth=8, judgments=cache,
                   study=Study(human_sample=5), execution=Execution(seed=seed))  # fmt: skip
    calls = sum(JudgmentCache(cache).call_counts().values())
    assert calls == judged.counts["calls"] == judged.counts["pairs"] > 0  # with a sample: every pooled pair
    two_steps = compare(data, SYSTEMS, METRICS, judgments=tmp_path / "judged", execution=Execution(seed=seed))
    one_step = compare(data, SYSTEMS, METRICS, judgments=Judging(spec, 5, 8, cache), execution=Execution(seed=seed))
    assert sum(JudgmentCache(cache).call_counts().values()) == calls  # the one cache: no call paid twice
    pd.testing.assert_frame_equal(one_step.summary, two_steps.summary)
    pd.testing.assert_frame_equal(one_step.systems, two_steps.systems)
    pd.testing.assert_frame_equal(one_step.intervals, two_steps.intervals)
    assert len(one_step.intervals) == len(METRICS) * (2 * len(SYSTEMS) - 1)
    merged = read_judgments(tmp_path / "judged").qrels
    for name, run in one_step.runs.items():  # scored with the merged qrels, not the dataset's
        assert one_step.summary.loc[name].to_dict() == pytest.approx(evaluate(merged, run, METRICS).mean, abs=1e-12)
    assert one_step.provenance.settings["judge"] == spec and "judgments" not in one_step.provenance.settings


def test_a_perfect_judge_gives_the_human_mean_through_either_path(tmp_path: Path) -> None:
    """The estimand: with a judge equal to the humans (qrels, no flips), the judging process equals the humans'
    labels on every query, so the naive estimate and PPI's (the judge's mean over every judged query plus the
    sample's gap, 0 here: docs/intervals.md) are both the mean under the human qrels over the judged queries,
    and PPI's interval is that value exactly (no residual to vary). Had the sample's values come
    from the judge's labels of the holes alone while the rest kept the human labels (the mixed process),
    PPI's estimate would be near twice the mean."""
    data = small_dataset()
    result = judge(data, SYSTEMS, "qrels:", tmp_path / "out", depth=10, judgments=tmp_path / "c",
                   study=Study(human_sample=4, metric="precision@5"), execution=Execution(seed=3))  # fmt: skip
    back = compare(data, SYSTEMS, ["precision@5"], judgments=tmp_path / "out", execution=Execution(seed=3))
    intervals = back.intervals[back.intervals["baseline"] == ""].set_index("system")
    for name, run in back.runs.items():
        truth = evaluate(data.qrels, run, ["precision@5"]).per_query.set_index("query_id")["value"]
        truth = truth.reindex(result.population, fill_value=0.0)
        row = intervals.loc[name]
        assert row["naive_estimate"] == pytest.approx(truth.mean(), abs=1e-12)
        assert row["ppi_estimate"] == pytest.approx(truth.mean(), abs=1e-12)
        assert row["ppi_high"] - row["ppi_low"] == pytest.approx(0.0, abs=1e-12)
        own = result.ppi.means.set_index("system").loc[name]
        assert own["ppi_estimate"] == pytest.approx(row["ppi_estimate"], abs=1e-12)


def test_a_folder_whose_judge_filled_only_the_holes_is_refused(tmp_path: Path) -> None:
    data = small_dataset()
    judge(data, SYSTEMS, "qrels:flip=0.2", tmp_path / "out", depth=5, judgments=tmp_path / "c")
    (tmp_path / "out" / "human_sample.txt").write_text("q1 0 d01 1\nq2 0 d02 1\n")
    with pytest.raises(RankscopeError, match=r"labels.jsonl: the judge did not label pooled pair \(q\S+, d\S+\)"):
        compare(data, SYSTEMS, ["ndcg@10"], judgments=tmp_path / "out")


def test_cli_judges_while_comparing_and_refuses_mixed_options(tmp_path: Path, capsys, monkeypatch) -> None:
    export_dataset(small_dataset(), tmp_path / "small")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    base = ["compare", "--dataset", str(tmp_path / "small"), "--retrievers", "bm25", "tfidf", "--metrics", "ndcg@10"]
    assert main([*base, "--judge", "qrels:flip=0.2", "--human-sample", "4", "--pool-depth", "6"]) == 0
    shown = capsys.readouterr().out
    assert "judge_share@10" in shown and "4 human-labelled queries of 12" in shown and "tfidf vs bm25" in shown
    assert (tmp_path / "xdg" / "rankscope" / "judgments" / "judgments.sqlite").is_file()
    for extra, message in (
        (["--human-sample", "4"], "--human-sample needs --judge SPEC"),
        (["--judge", "qrels:", "--judgments", str(tmp_path)], "not both"),
        (["--judge", "qrels:", "--human-sample", "1"], "--human-sample must be at least 2"),
        (["--judge", "nope:x=1"], "nope"),
    ):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
