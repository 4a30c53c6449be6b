"""The contract every built-in retriever keeps, run over everything ``available()`` lists.

A new retriever registered in one of retrieval.registry.BUILTIN_MODULES is picked
up here automatically.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import NotFittedError
from rankscope.corpora.schema import RUN_COLUMNS, sort_run
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.registry import SpecError, available, load_retriever, make_retriever, retriever_class

BUILTIN = [name for name in available() if retriever_class(name).__module__.startswith("rankscope.retrieval.")]

_WORDS = (
    "boundary layer flow heat transfer wing shock wave pressure supersonic laminar turbulent "
    "plate cone cylinder nozzle jet mach number drag lift stability buckling shell panel"
).split()


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(_WORDS, size=rng.integers(4, 15))) for _ in range(40)]
    texts += ["identical twin text about drag", "identical twin text about drag"]  # a guaranteed tie
    return pd.DataFrame(
        {"doc_id": [f"doc{i:02d}" for i in range(len(texts))], "title": [""] * len(texts), "text": texts}
    )


@pytest.fixture(scope="module")
def queries() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q3", "empty", "oov"],
            "text": ["boundary layer flow", "heat transfer in a shock wave", "twin drag", "", "qqqzzz xxyyww"],
        }
    )


@pytest.fixture(scope="module", params=BUILTIN)
def fitted(request: pytest.FixtureRequest, corpus: pd.DataFrame) -> Retriever:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_retriever(request.param).index(corpus)


def _search(retriever: Retriever, queries: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. w2v's counted warning for queries without known words
        return retriever.search(queries, k=k)


def test_run_schema_and_tie_order(fitted: Retriever, queries: pd.DataFrame) -> None:
    run = _search(fitted, queries)
    assert tuple(run.columns) == RUN_COLUMNS
    assert run["score"].dtype == np.float64 and run["rank"].dtype == np.int64
    assert all(isinstance(v, str) for v in run["query_id"]) and all(isinstance(v, str) for v in run["doc_id"])
    assert np.isfinite(run["score"]).all()
    assert not run.duplicated(["query_id", "doc_id"]).any()
    for _, group in run.groupby("query_id"):
        assert list(group["rank"]) == list(range(1, len(group) + 1))
    resorted = sort_run(run)  # trec_eval's order: score desc, doc_id desc
    for qid, group in run.groupby("query_id"):
        assert list(group["doc_id"]) == list(resorted[resorted["query_id"] == qid]["doc_id"])
    assert {"q1", "q2", "q3"} <= set(run["query_id"])


def test_k_is_respected(fitted: Retriever, queries: pd.DataFrame) -> None:
    for k in (1, 3):
        counts = _search(fitted, queries, k=k).groupby("query_id").size()
        assert counts.max() <= k and counts.loc["q1"] == k


def test_empty_and_out_of_vocabulary_queries_give_no_rows(fitted: Retriever, queries: pd.DataFrame) -> None:
    run = _search(fitted, queries)
    assert not {"empty", "oov"} & set(run["query_id"])
    only_bad = _search(fitted, queries[queries["query_id"].isin(["empty", "oov"])])
    assert len(only_bad) == 0 and tuple(only_bad.columns) == RUN_COLUMNS


def test_deterministic(fitted: Retriever, corpus: pd.DataFrame, queries: pd.DataFrame) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = make_retriever(fitted.spec()).index(corpus)
    pd.testing.assert_frame_equal(_search(again, queries), _search(fitted, queries))


def test_score_agrees_with_search(fitted: Retriever, queries: pd.DataFrame) -> None:
    run = _search(fitted, queries)
    for qid, text in zip(queries["query_id"], queries["text"]):
        found = run[run["query_id"] == qid]
        if len(found):
            scores = fitted.score(text, list(found["doc_id"]))
            np.testing.assert_allclose(scores, found["score"].to_numpy(), rtol=1e-5, atol=1e-6)
    assert fitted.score("boundary layer flow", []).shape == (0,)


def test_save_load_round_trip(fitted: Retriever, queries: pd.DataFrame, tmp_path: Path) -> None:
    fitted.save(tmp_path / "index")
    loaded = load_retriever(tmp_path / "index")
    assert type(loaded) is type(fitted) and loaded.get_params() == fitted.get_params()
    pd.testing.assert_frame_equal(_search(loaded, queries), _search(fitted, queries))


@pytest.mark.parametrize("name", BUILTIN)
def test_search_before_index_is_a_clear_error(name: str, queries: pd.DataFrame, tmp_path: Path) -> None:
    retriever = make_retriever(name)
    with pytest.raises(NotFittedError):
        retriever.search(queries)
    with pytest.raises(NotFittedError):
        retriever.score("flow", ["doc01"])
    with pytest.raises(NotFittedError):
        retriever.save(tmp_path / "index")


@pytest.mark.parametrize("name", BUILTIN)
def test_params_round_trip_through_the_spec(name: str) -> None:
    retriever = make_retriever(name)
    again = make_retriever(retriever.spec())
    assert type(again) is type(retriever) and again.get_params() == retriever.get_params()


@pytest.mark.parametrize("name", BUILTIN)
def test_set_params_refuses_unknown_names_and_bad_values_without_changing_anything(name: str) -> None:
    retriever = make_retriever(name)
    before = retriever.get_params()
    known = ", ".join(p.name for p in type(retriever).parameters)
    with pytest.raises(
        SpecError, match=rf"^{re.escape(name)} has no parameter\(s\) \['nope'\]; known: {re.escape(known)}$"
    ):
        retriever.set_params(nope=1)
    with pytest.raises(SpecError, match="is not allowed"):
        retriever.set_params(**{next(iter(before)): object()})  # no parameter accepts an arbitrary object
    assert retriever.get_params() == before
