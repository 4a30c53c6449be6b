"""Fuzz: hostile per-query values and sample sizes for the human-sample intervals (issue 43).

Every case through ``ppi_intervals`` (the tables' one entry from per-query values) or the CLI: a clean
one-line error, or accepted with finite intervals that hold the estimate; never NaN, an infinite bound
or a traceback.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.corpora.export import export_dataset
from rankscope.evaluation.ppi import ppi_intervals

QUERIES = pd.Index([f"q{i}" for i in range(20)], name="query_id")


def _judge() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.random(20), "b": rng.random(20)}, index=QUERIES)


def _bad(value: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    judge = _judge().astype(object)
    judge.iat[3, 1] = value
    return judge.iloc[:8], judge


ERRORS = {
    "one labelled query": (lambda: (_judge().iloc[:1], _judge()), "at least 2 labelled queries, got 1"),
    "no labelled query": (lambda: (_judge().iloc[:0], _judge()), "at least 2 labelled queries, got 0"),
    "NaN": (lambda: _bad(float("nan")), "system 'b', query 'q3' has no finite value"),
    "infinity": (lambda: _bad(float("inf")), "system 'b', query 'q3' has no finite value"),
    "text": (lambda: _bad("0.5x"), "system 'b', query 'q3' has no finite value ('0.5x')"),
    "huge": (lambda: _bad(1e300), "system 'b', query 'q3' is beyond ±1e+100, too large to average"),
    "huge negative": (lambda: _bad(-1e200), "is beyond ±1e+100"),
    "human query unknown": (
        lambda: (_judge().iloc[:5].rename(index={"q0": "nowhere"}), _judge()),
        "human-labelled query 'nowhere' has no judge value",
    ),
    "repeated query": (lambda: (pd.concat([_judge().iloc[:5], _judge().iloc[:1]]), _judge()), "appears more than once"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_values_are_one_line(name: str) -> None:
    make, fragment = ERRORS[name]
    human, judge = make()
    check(run_call(lambda: ppi_intervals(human, judge, baseline="a")), "error", fragment)


ACCEPTED = {
    "every query labelled": lambda: (_judge(), _judge()),
    "two labelled": lambda: (_judge().iloc[:2], _judge()),
    "three labelled": lambda: (_judge().iloc[:3], _judge()),
    "all but one labelled": lambda: (_judge().iloc[:19], _judge()),
    "constant everywhere": lambda: (_judge().iloc[:6] * 0 + 0.3, _judge() * 0 + 0.3),
    "judge equals humans": lambda: (_judge().iloc[:6], _judge()),
    "judge constant": lambda: (_judge().iloc[:6], _judge() * 0),
    "large but allowed": lambda: (_judge().iloc[:6] * 1e90, _judge() * 1e90),
    "tiny": lambda: (_judge().iloc[:6] * 1e-300, _judge() * 1e-300),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_edge_samples_give_finite_intervals(name: str) -> None:
    human, judge = ACCEPTED[name]()
    found: dict[str, object] = {}
    check(run_call(lambda: found.setdefault("r", ppi_intervals(human, judge, baseline="a"))), "accepted")
    result = found["r"]
    for table in (result.means, result.differences):
        for method in ("ppi", "ppipp"):
            low, estimate, high = (table[f"{method}_{part}"].to_numpy() for part in ("low", "estimate", "high"))
            assert np.isfinite([low, estimate, high]).all(), (name, method)
            assert (low <= estimate).all() and (estimate <= high).all(), (name, method)
        assert table["ppipp_lambda"].between(0, 1).all(), name


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.workflows.tiny_collection import small_dataset

    path = tmp_path_factory.mktemp("intervals") / "small"
    export_dataset(small_dataset(), path)
    return path


@pytest.mark.parametrize(
    ("sample", "expect", "fragment"),
    [
        ("13", "error", "--human-sample 13 is more than the 12 judged queries"),
        ("1", "error", "--human-sample must be at least 2, got 1"),
        ("0", "error", "--human-sample must be at least 2, got 0"),
        ("-3", "error", "--human-sample must be at least 2, got -3"),
        ("2", "warning", "2 human-labelled queries: fewer than the simulation's smallest sample"),
        ("12", "accepted", ""),
    ],
)
def test_human_sample_sizes(folder: Path, tmp_path: Path, monkeypatch, sample: str, expect: str, fragment: str) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    argv = ["judge", "--dataset", str(folder), "--systems", "bm25", "--judge", "qrels:flip=0.1",
            "--human-sample", sample, "--metric", "precision@5", "--quiet", "--format", "json"]  # fmt: skip
    check(run_cli(argv), expect, fragment)


def _pool() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(1)
    judge = pd.DataFrame(
        [(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for q in range(5) for d in range(8)],
        columns=["query_id", "doc_id", "relevance"],
    )
    sample = judge.iloc[::3].assign(inclusion_probability=0.4, relevance=lambda s: 2 - s["relevance"])
    run = judge.assign(score=rng.random(len(judge)))[["query_id", "doc_id", "score"]]
    return judge, sample, {"a": run, "b": run.assign(score=-run["score"])}


PAIR_ERRORS = {
    "NaN probability": (
        lambda s: s.assign(inclusion_probability=np.nan),
        "precision@5",
        "has inclusion probability nan",
    ),
    "text probability": (
        lambda s: s.assign(inclusion_probability="half"),
        "precision@5",
        "inclusion probability 'half'",
    ),
    "negative probability": (lambda s: s.assign(inclusion_probability=-0.1), "precision@5", "probability -0.1"),
    "infinite label": (lambda s: s.assign(relevance=np.inf), "precision@5", "label inf"),
    "pair outside the pool": (
        lambda s: s.assign(query_id=s["query_id"] + "x"),
        "precision@5",
        "pair (q0x, d0) is not in the pool",
    ),
    "pair twice": (lambda s: pd.concat([s, s.iloc[:1]]), "precision@5", "pair (q0, d0) appears more than once"),
    "no probability column": (lambda s: s.drop(columns="inclusion_probability"), "precision@5", "no column"),
    "nDCG": (lambda s: s, "ndcg@10", "a pair sample estimates precision@k"),
    "precision@0": (lambda s: s, "precision@0", "a pair sample estimates precision@k"),
    "precision@x": (lambda s: s, "precision@x", "a pair sample estimates precision@k"),
}


@pytest.mark.parametrize("name", list(PAIR_ERRORS))
def test_bad_pair_samples_are_one_line(name: str) -> None:
    from rankscope.evaluation.pair_sample import pair_sample_evaluate

    change, metric, fragment = PAIR_ERRORS[name]
    judge, sample, runs = _pool()
    check(run_call(lambda: pair_sample_evaluate(judge, change(sample), runs, metric)), "error", fragment)


@pytest.mark.parametrize("rows", [0, 1, 40])
def test_pair_samples_of_any_size_give_finite_intervals(rows: int) -> None:
    """No pair drawn (the judge's numbers, warned of), one, every pair (exact): finite, ordered bounds."""
    from rankscope.evaluation.pair_sample import pair_sample_evaluate

    judge, _, runs = _pool()
    sample = judge.iloc[:rows].assign(inclusion_probability=1.0 if rows == 40 else 0.3)
    found: dict[str, object] = {}
    check(
        run_call(lambda: found.setdefault("r", pair_sample_evaluate(judge, sample, runs, "precision@5", baseline="a"))),
        "accepted",
    )
    result = found["r"]
    for table in (result.means, result.differences):
        assert np.isfinite(table[["estimate", "low", "high"]].to_numpy()).all()
        assert (table["low"] <= table["estimate"]).all() and (table["estimate"] <= table["high"]).all()
    assert (len(result.warnings) == 0) == (rows == 40)
