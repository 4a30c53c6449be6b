"""Spec parsing and registration."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from rankscope.retrieval.base import QueryInput, Retriever, make_run
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import SpecError, available, make_retriever, parse_spec, register


class Dummy(Retriever):
    """Parameters of every kind; it finds nothing (only its specs are tested)."""

    k1 = Param(float, 1.5, "a float")
    depth = Param(int, 3, "an int")
    exact = Param(bool, False, "a bool")
    mode = Param(str, "a", "a string")
    cap = Param(float, None, "a float or None", optional=True)

    def index(self, corpus: pd.DataFrame) -> Dummy:
        return self

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        return make_run([], [], [])

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        return np.zeros(len(doc_ids))


@pytest.fixture(autouse=True)
def dummy(scratch_registry: None) -> type[Retriever]:
    return register("test-dummy")(Dummy)


def test_values_are_typed_by_the_parameter_table() -> None:
    r = make_retriever("test-dummy:k1=2,depth=7,exact=true,mode=b(x,y),cap=None")
    assert (r.k1, r.depth, r.exact, r.mode, r.cap) == (2.0, 7, True, "b(x,y)", None)
    assert isinstance(r.k1, float) and isinstance(r.depth, int)
    assert make_retriever("test-dummy:cap=0.5").cap == 0.5


def test_spec_round_trip() -> None:
    r = make_retriever("test-dummy:k1=0.9,exact=yes")
    again = make_retriever(r.spec())
    assert again.get_params() == r.get_params() == {"k1": 0.9, "depth": 3, "exact": True, "mode": "a", "cap": None}


def test_errors_list_what_is_known() -> None:
    assert "test-dummy" in available()
    with pytest.raises(SpecError, match="unknown retriever 'nope'; known: .*test-dummy"):
        make_retriever("nope:k1=1")
    with pytest.raises(SpecError, match=r"no parameter\(s\) \['k3'\]; known: k1, depth, exact, mode, cap"):
        make_retriever("test-dummy:k3=1")
    with pytest.raises(SpecError, match="^test-dummy: depth=1.5 is not allowed; depth must be an int$"):
        make_retriever("test-dummy:depth=1.5")
    with pytest.raises(SpecError, match="^test-dummy: exact=maybe is not allowed; exact must be true or false$"):
        make_retriever("test-dummy:exact=maybe")
    with pytest.raises(SpecError, match="expected key=value"):
        make_retriever("test-dummy:k1")
    with pytest.raises(SpecError, match="given twice"):
        parse_spec("test-dummy:k1=1,k1=2")


def test_a_name_cannot_be_taken_by_another_class() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @register("test-dummy")
        class Other(Retriever):
            pass


def test_listing_builtins_imports_no_heavy_optional_package() -> None:
    code = (
        "import sys\n"
        "from rankscope.retrieval.registry import available\n"
        "names = available()\n"
        "heavy = sorted(m for m in ('gensim', 'faiss', 'rank_bm25', 'jieba', 'sklearn') if m in sys.modules)\n"
        "print(','.join(names), '|', ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    names, heavy = (part.strip() for part in out.split("|"))
    assert {"bm25", "rank_bm25"} <= set(names.split(","))
    assert heavy == ""


def test_commas_inside_brackets_do_not_split_and_unbalanced_brackets_are_errors() -> None:
    assert parse_spec("x:a=[p,q],b={1,2}") == ("x", {"a": "[p,q]", "b": "{1,2}"})
    with pytest.raises(SpecError, match=r"spec 'bm25:k1=\(0.9,b=0.4': parameters .*: a bracket is not closed"):
        parse_spec("bm25:k1=(0.9,b=0.4")
    with pytest.raises(SpecError, match=r"parameters 'k1=\)0.9': unbalanced '\)' at position 3"):
        parse_spec("bm25:k1=)0.9")


def test_builtin_table_names_the_module_that_registers_each_retriever() -> None:
    """``BUILTINS`` lets a lookup import one module; it must say truly which module registers each name,
    and list every retriever the package's own modules register."""
    from rankscope.retrieval.registry import _REGISTRY, BUILTINS

    available()
    own = {name: cls.__module__ for name, cls in _REGISTRY.items() if cls.__module__.startswith("rankscope.")}
    importable = {name: module for name, module in BUILTINS.items() if name in _REGISTRY}
    assert own == importable
    assert {"bm25", "tfidf", "hybrid", "rerank", "rank_bm25", "w2v"} <= set(own)


def test_looking_up_one_builtin_imports_only_its_module() -> None:
    code = (
        "import sys\n"
        "from rankscope.retrieval.registry import BUILTINS, retriever_class\n"
        "retriever_class('bm25')\n"
        "print(sorted(m for m in set(BUILTINS.values()) if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['rankscope.retrieval.bm25']"
