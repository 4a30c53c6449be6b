"""The parameter tables: what they allow, the one-line errors they give, and that the CLI gives them
before any collection is read (the dataset named does not exist, so reading it would be another error)."""

from __future__ import annotations

import inspect
import math

import pytest

from rankscope.cli import main
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.params import Param, SpecError, parameter_table
from rankscope.retrieval.registry import make_retriever

BAD_SPECS = {
    "bm25:k1=-1": "bm25: k1=-1 is not allowed; k1 must be a float in [0, inf)",
    "bm25:variant=nope": "bm25: variant=nope is not allowed; variant must be one of okapi, lucene, bm25l, bm25+",
    "hybrid:method=x": "hybrid: method=x is not allowed; method must be one of rrf, combsum",
    "bm25:delta=abc": "bm25: delta=abc is not allowed; delta must be a float in [0, inf) or None",
    "hybrid:depth=0": "hybrid: depth=0 is not allowed; depth must be an int in [1, inf)",
    "bm25:b=1e400": "bm25: b=1e400 is not allowed; b must be a float in [0, 1]",
    "bm25:k1=inf": "bm25: k1=inf is not allowed; k1 must be a float in [0, inf)",
    "bm25:k1=nan": "bm25: k1=nan is not allowed; k1 must be a float in [0, inf)",
    "w2v:epochs=1.5": "w2v: epochs=1.5 is not allowed; epochs must be an int in [1, inf)",
    "w2v:sg=2": "w2v: sg=2 is not allowed; sg must be one of 0, 1",
    "rank_bm25:variant=lucene": "rank_bm25: variant=lucene is not allowed; variant must be one of okapi, bm25l, bm25+",
    "bm25:delta=0.3": "bm25: delta=0.3 is not allowed; delta applies to bm25l and bm25+ only, not variant 'lucene'",
    "tfidf:analyzer=zz": (
        "tfidf: analyzer=zz is not allowed; analyzer must be one of english, english-nostem, plain, chinese "
        "or an Analyzer"
    ),
    "hybrid:retrievers=[bm25:k1=-1]+tfidf": (
        "hybrid: retrievers=[bm25:k1=-1]+tfidf is not allowed; bm25: k1=-1 is not allowed; k1 must be a float in [0, inf)"
    ),
}


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_a_refused_value_is_one_line_naming_the_parameter_and_what_it_allows(spec: str) -> None:
    with pytest.raises(SpecError) as caught:
        make_retriever(spec)
    assert str(caught.value) == BAD_SPECS[spec]


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, -1.0, True, "1", None])
def test_python_values_are_checked_by_the_same_table(value: object) -> None:
    model = BM25(k1=0.9)
    with pytest.raises(SpecError, match=r"^bm25: k1=.* is not allowed; k1 must be a float in \[0, inf\)$"):
        model.set_params(k1=value)
    with pytest.raises(SpecError, match="k1 must be"):
        BM25(k1=value)
    assert model.k1 == 0.9


def test_ints_become_floats_for_a_float_parameter_and_the_spec_is_the_same() -> None:
    given_int, given_float = BM25(k1=2), make_retriever("bm25:k1=2")
    assert type(given_int.k1) is float and given_int.spec() == given_float.spec()
    assert given_int.spec() == (
        "bm25:variant=lucene,k1=2.0,b=0.75,delta=None,epsilon=0.25,analyzer=english,"
        "prf=none,fb_docs=None,fb_terms=None,weight=None"
    )


@pytest.mark.parametrize(
    ("closed", "shown", "zero", "one"),
    [
        ("both", "[0, 1]", True, True),
        ("left", "[0, 1)", True, False),
        ("right", "(0, 1]", False, True),
        ("neither", "(0, 1)", False, False),
    ],
)
def test_open_and_closed_ends(closed: str, shown: str, zero: bool, one: bool) -> None:
    param = Param("x", float, 0.5, "a fraction", low=0, high=1, closed=closed)
    assert param.allowed() == f"a float in {shown}"
    for value, allowed in ((0, zero), (1, one), (0.5, True), (-0.1, False), (1.1, False)):
        if allowed:
            assert param.validate(value, "t") == value
        else:
            with pytest.raises(SpecError, match=rf"^t: x={value!r} is not allowed; x must be a float in "):
                param.validate(value, "t")


def test_ints_refuse_bools_and_fractions_and_bools_read_words() -> None:
    count = Param("n", int, 1, "a count", low=1)
    assert count.parse("3", "t") == 3 and count.validate(4, "t") == 4
    for bad in (True, 1.5):
        with pytest.raises(SpecError, match="n must be an int in"):
            count.validate(bad, "t")
    flag = Param("f", bool, False, "a flag")
    assert [flag.parse(w, "t") for w in ("true", "Yes", "1", "false", "no", "0")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    with pytest.raises(SpecError, match="^t: f=maybe is not allowed; f must be true or false$"):
        flag.parse("maybe", "t")


def test_the_table_is_the_constructor_signature_and_the_help() -> None:
    assert str(inspect.signature(BM25)) == (
        "(*, variant='lucene', k1=1.5, b=0.75, delta=None, epsilon=0.25, analyzer='english', "
        "prf='none', fb_docs=None, fb_terms=None, weight=None)"
    )
    table = parameter_table(BM25.parameters)
    assert table.loc[table["parameter"] == "b", ["allowed", "default"]].values.tolist() == [
        ["a float in [0, 1]", "0.75"]
    ]


def test_a_retriever_with_its_own_init_or_a_parameter_twice_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="declare constructor parameters as class attributes"):

        class OwnInit(Retriever):
            def __init__(self, k1: float = 1.0) -> None:
                self.k1 = k1

    with pytest.raises(TypeError, match="a parameter is declared twice"):

        class Twice(Retriever):
            parameters = (Param("a", int, 1, "x"), Param("a", int, 2, "y"))


def test_the_cli_lists_parameters_from_the_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrievers", "bm25"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["parameter", "allowed", "default", "help"]
    assert lines[3].split()[:7] == ["k1", "a", "float", "in", "[0,", "inf)", "1.5"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "--retriever", "bm25:k1=-1", "--out", "x.trec"], BAD_SPECS["bm25:k1=-1"]),
        (["compare", "--retrievers", "bm25", "tfidf", "hybrid:depth=0"], BAD_SPECS["hybrid:depth=0"]),
        (["compare", "--retrievers", "bm25", "bm25:variant=nope"], BAD_SPECS["bm25:variant=nope"]),
        (["diagnose", "--vs", "hybrid:method=x"], BAD_SPECS["hybrid:method=x"]),
        (["tune", "--retriever", "bm25:delta=abc"], BAD_SPECS["bm25:delta=abc"]),
        (["tune", "--k1=-1:1:0.5"], "bm25: k1=-1.0 is not allowed; k1 must be a float in [0, inf)"),
    ],
)
def test_the_cli_refuses_every_spec_before_reading_the_collection(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    command = argv[0]
    assert main([*argv, "--dataset", str(tmp_path / "no-such-collection")]) == 2
    err = capsys.readouterr().err
    assert err == f"rankscope {command}: error: {message}\n"


def test_parameters_declared_as_class_attributes_form_the_table_in_order() -> None:
    class Base(Retriever):
        k1 = Param(float, 1.2, "saturation", low=0)
        mode = Param(str, "a", "which", choices=("a", "b"))

        def index(self, corpus):  # type: ignore[no-untyped-def]
            return self

        def search(self, queries, k=1000):  # type: ignore[no-untyped-def]
            return None

        def score(self, query, doc_ids):  # type: ignore[no-untyped-def]
            return None

    class Child(Base):
        depth = Param(int, 3, "how deep", low=1)
        k1 = Base.k1.replace(default=0.9)  # redeclared: keeps its parent's place

    assert [p.name for p in Child.parameters] == ["k1", "mode", "depth"]
    assert str(inspect.signature(Child)) == "(*, k1=0.9, mode='a', depth=3)"
    child = Child(depth=5)
    assert (child.k1, child.mode, child.depth) == (0.9, "a", 5) and type(child.k1) is float
    assert Child.k1 is Child.parameters[0] and Base(k1=2).k1 == 2.0
    with pytest.raises(SpecError, match=r"^Child: depth=0 is not allowed; depth must be an int in \[1, inf\)$"):
        child.set_params(depth=0)
    assert child.depth == 5


def test_one_way_per_class_and_every_parameter_has_help() -> None:
    with pytest.raises(TypeError, match=r"parameters \['b'\] are class attributes and the class also gives"):

        class Both(Retriever):
            parameters = (Param("a", int, 1, "x"),)
            b = Param(int, 2, "y")

    with pytest.raises(TypeError, match=r"parameters \['a'\] have no help text"):

        class Helpless(Retriever):
            a = Param(int, 1)

    with pytest.raises((TypeError, RuntimeError)) as caught:  # Python 3.11 wraps __set_name__'s error

        class Misnamed(Retriever):
            k2 = BM25.k1

    assert "Misnamed.k2: this Param is named 'k1'" in str(caught.value.__cause__ or caught.value)


def test_retriever_is_an_abstract_base_class() -> None:
    class NoSearch(Retriever):
        def index(self, corpus):  # type: ignore[no-untyped-def]
            return self

        def score(self, query, doc_ids):  # type: ignore[no-untyped-def]
            return None

    with pytest.raises(TypeError, match="abstract method.*search"):
        NoSearch()
    with pytest.raises(TypeError, match="abstract"):
        Retriever()  # type: ignore[abstract]


def test_one_param_class_serves_retrievers_and_metric_families() -> None:
    from rankscope.core.params import Param as CoreParam
    from rankscope.evaluation.metrics import FAMILIES

    assert Param is CoreParam and isinstance(FAMILIES["rbp"].params["p"], CoreParam)
    assert isinstance(BM25.k1, CoreParam) and BM25.k1.allowed() == "a float in [0, inf)"
