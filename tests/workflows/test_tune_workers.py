"""tune's grid on forked workers: the same numbers as one process, a lost worker one clear line, and the
settings that cannot go together refused before any work."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core import forked
from rankscope.core.errors import ParameterError, RankscopeError
from rankscope.core.forked import WorkerLost
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.common.fanout import grid_scores
from rankscope.workflows.options import Execution
from rankscope.workflows.tune import tune
from tests.workflows.tiny_collection import small_dataset

GRID = {"k1": "0.3:1.5:0.3", "b": "0.2:1.0:0.2"}
PARENT = os.getpid()


@pytest.mark.parametrize("workers", [2, 3])
def test_forked_workers_give_one_process_numbers(workers: int) -> None:
    data = small_dataset()
    alone = tune(data, "bm25", params=GRID, metric="map")
    forked = tune(data, "bm25", params=GRID, metric="map", execution=Execution(workers=workers))
    assert alone.grid["mean"].std() > 0  # the points differ: a point scored with another's weights would show
    pd.testing.assert_frame_equal(forked.grid, alone.grid, check_exact=True)
    pd.testing.assert_frame_equal(forked.per_query, alone.per_query, check_exact=True)
    assert (forked.best, forked.cv_gain, forked.in_sample_gain) == (alone.best, alone.cv_gain, alone.in_sample_gain)
    assert forked.timing.to_dict()["grid_points"] == len(alone.grid) == 25


def test_a_choice_of_retrievers_on_workers_equals_one_process() -> None:
    data = small_dataset()
    specs = ["bm25", "tfidf", "bm25:variant=bm25+"]
    alone = tune(data, specs, params={"k1": "0.6:1.2:0.6"})
    forked = tune(data, specs, params={"k1": "0.6:1.2:0.6"}, execution=Execution(workers=2))
    assert alone.grid["retriever"].nunique() == 3
    pd.testing.assert_frame_equal(forked.grid, alone.grid, check_exact=True)
    pd.testing.assert_frame_equal(forked.per_query, alone.per_query, check_exact=True)


class _DiesAt:
    """BM25 whose worker process dies (as killed) or raises when given one k1."""

    def __init__(self, k1: float, how: str) -> None:
        self.retriever, self.k1, self.how = make_retriever("bm25"), k1, how

    def index(self, corpus: pd.DataFrame) -> _DiesAt:
        self.retriever.index(corpus)
        return self

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        return self.retriever.search(queries, k=k)

    def set_params(self, **params: object) -> _DiesAt:
        if params.get("k1") == self.k1:
            if self.how == "killed" and os.getpid() != PARENT:  # never this process, whatever the pool's size
                os._exit(9)
            raise ValueError(f"k1={self.k1} cannot be set")
        self.retriever.set_params(**params)
        return self


def test_a_lost_worker_is_one_line_and_no_result(forkable: None) -> None:
    points = [{"k1": k1} for k1 in (0.5, 0.9, 1.3, 1.7)]
    with pytest.raises(WorkerLost) as lost:
        grid_scores(_DiesAt(1.3, "killed"), small_dataset(), "map", 1000, points, workers=2)
    assert "\n" not in str(lost.value) and "scoring the grid's points" in str(lost.value)
    with pytest.raises(ValueError, match="k1=1.3 cannot be set"):  # a worker's error, raised as it was raised there
        grid_scores(_DiesAt(1.3, "raises"), small_dataset(), "map", 1000, points, workers=2)


def test_settings_that_cannot_go_together_are_refused_before_any_work() -> None:
    data = small_dataset()
    with pytest.raises(ParameterError, match="workers=0 is not allowed"):
        Execution(workers=0)
    with pytest.raises(RankscopeError, match="--scheduler and --workers are for the grid"):
        tune(data, "bm25", search="optuna", execution=Execution(workers=2))
    with pytest.raises(RankscopeError, match="give one"):
        tune(data, "bm25", execution=Execution(scheduler="local:2", workers=2))


@pytest.mark.slow
def test_the_command_on_two_workers_writes_one_process_files(data_dir: Path, tmp_path: Path) -> None:
    """``rankscope tune`` (up to 2 workers by default) writes what ``--workers 1`` writes, byte for byte
    but for the provenance's command line and the seconds spent."""
    base = ["tune", "--dataset", str(data_dir / "cisi"), "--k1", "0.6:1.8:0.4", "--b", "0.3:0.9:0.3"]
    base += ["--figure-format", "svg"]
    assert main([*base, "--workers", "1", "--out", str(tmp_path / "one")]) == 0
    assert main([*base, "--workers", "2", "--out", str(tmp_path / "two")]) == 0
    written = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert {"grid.csv", "folds.csv", "summary.json"} <= set(written)
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == written
    for name in ("grid.csv", "folds.csv", "fold_seeds.csv"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    one, two = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("one", "two"))
    for summary in (one, two):
        summary.pop("provenance", None)
        summary.pop("timing", None)
    assert one == two


def test_the_command_refuses_no_workers_in_the_line_index_and_evaluate_give(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    assert main(["tune", "--dataset", str(data_dir / "cisi"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "--workers must be a positive integer, got 0" in err and err.count("\n") == 1


class _Where(_DiesAt):
    """BM25 noting the process setting each of its points (a child's notes stay in the child)."""

    noted: list[int] = []

    def set_params(self, **params: object) -> _Where:
        self.noted.append(os.getpid())
        self.retriever.set_params(**params)
        return self


def test_no_worker_is_forked_once_an_openmp_runtime_is_loaded(forkable: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an OpenMP runtime loaded (a dense system indexed here), workers forked would hang in its next
    parallel region: the points are scored here, with the same numbers (before, forked all the same)."""
    points = [{"k1": k1} for k1 in (0.5, 0.9, 1.3, 1.7)]
    forked_scores = grid_scores(_Where(0.0, ""), small_dataset(), "map", 1000, points, workers=2)[1]
    assert _Where.noted == []  # each point set in a worker
    monkeypatch.setattr(forked, "openmp_loaded", lambda: True)
    here = grid_scores(_Where(0.0, ""), small_dataset(), "map", 1000, points, workers=2)[1]
    assert _Where.noted == [os.getpid()] * len(points)
    for one, other in zip(forked_scores, here):
        pd.testing.assert_series_equal(one, other)
