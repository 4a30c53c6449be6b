"""check_retriever: every built-in passes it, and each check fails on a retriever that breaks its rule."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from rankscope.corpora.schema import RUN_COLUMNS
from rankscope.retrieval.checks import CHECKS, RetrieverCheckError, check_retriever
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import available, register, retriever_class

BUILTIN = [name for name in available() if retriever_class(name).__module__.startswith("rankscope.retrieval.")]


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILTIN)
def test_every_builtin_keeps_the_contract(name: str) -> None:
    reason = getattr(retriever_class(name), "unavailable", lambda: None)()  # engines: pisa, lucene
    if reason:
        pytest.skip(reason)
    check_retriever(name)


@pytest.fixture
def toy(toy_module: types.ModuleType, scratch_registry: None) -> type:
    return register("test-overlap")(toy_module.Overlap)


def test_a_correct_third_party_retriever_passes_by_name_class_or_instance(toy: type) -> None:
    check_retriever("test-overlap:weight=2")
    check_retriever(toy)
    check_retriever(toy(weight=0.5))


def _breakages(toy: type) -> dict[str, dict[str, object]]:
    """For each check, methods that break exactly its rule in a subclass of the correct toy retriever."""

    def ascending_ties(self, queries, k=1000):
        run = toy.search(self, queries, k)
        order = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, True], kind="stable")
        return order.assign(rank=order.groupby("query_id").cumcount().astype(np.int64) + 1).reset_index(drop=True)

    def noisy_scores(self, text):
        exact = toy._scores(self, text)
        return exact + (exact > 0) * np.random.default_rng().random(len(exact))

    return {
        "parameters": {"parameters": (Param("weight", float, -1.0, "a default its own range refuses", low=0),)},
        "set_params_refusals": {"set_params": lambda self, **params: self},
        "not_fitted": {"search": lambda self, queries, k=1000: pd.DataFrame(columns=list(RUN_COLUMNS))},
        "run_schema": {"search": lambda self, queries, k=1000: toy.search(self, queries, k)[::-1]},
        "tie_order": {"search": ascending_ties},
        "k_respected": {"search": lambda self, queries, k=1000: toy.search(self, queries, 1000)},
        "empty_queries": {"_scores": lambda self, text: toy._scores(self, text) + 0.5},
        "deterministic": {"_scores": noisy_scores},
        "score_agrees": {"score": lambda self, query, doc_ids: toy.score(self, query, doc_ids) + 1},
        "save_load": {
            "load": classmethod(lambda cls, directory: toy.load.__func__(cls, directory).set_params(weight=9.0))
        },
    }


@pytest.mark.parametrize("check", [name for name, _ in CHECKS if name not in ("registered", "spec_round_trip")])
def test_each_check_fails_on_a_retriever_that_breaks_it(toy: type, check: str) -> None:
    name = f"test_broken_{check}"
    broken = register(name.replace("_", "-"))(type(name, (toy,), _breakages(toy)[check]))
    with pytest.raises(
        RetrieverCheckError, match=rf"^check_retriever\({broken.__qualname__}\): check '{check}' failed: "
    ):
        check_retriever(broken)


def test_an_unregistered_class_and_a_spec_that_does_not_rebuild_are_named(toy: type) -> None:
    unregistered = type("Unregistered", (toy,), {"name": ""})
    with pytest.raises(RetrieverCheckError, match=r"check 'registered' failed: Unregistered has no name"):
        check_retriever(unregistered)
    lossy = register("test-lossy")(type("Lossy", (toy,), {"spec": lambda self: self.name}))
    with pytest.raises(
        RetrieverCheckError, match=r"check 'spec_round_trip' failed: make_retriever\('test-lossy'\) has"
    ):
        check_retriever(lossy(weight=3.0))


def test_the_checks_have_distinct_names() -> None:
    names = [name for name, _ in CHECKS]
    assert len(set(names)) == len(names) and names[0] == "registered"
