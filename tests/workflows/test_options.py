"""Options objects instead of long signatures: no public workflow function takes more than 8
parameters, and calls in the earlier form (never released) are refused by Python, not translated."""

from __future__ import annotations

import inspect

import pytest

import rankscope as rs
from rankscope import workflows
from rankscope.core.errors import RankscopeError
from rankscope.workflows import Execution, Output, Search
from rankscope.workflows.diagnose.sampling import Sampled
from rankscope.workflows.rag import Answers, Budgets
from tests.workflows.tiny_collection import DATA

PUBLIC = [getattr(workflows, name) for name in workflows.__all__ if inspect.isfunction(getattr(workflows, name))]


@pytest.mark.parametrize("function", [*PUBLIC, rs.rag], ids=lambda f: f.__name__)
def test_no_public_workflow_takes_more_than_eight_parameters(function) -> None:
    assert len(inspect.signature(function).parameters) <= 8


def test_the_options_are_frozen() -> None:
    for options in (Output(), Execution(), Search(), Sampled(), Budgets(), Answers("a.jsonl")):
        with pytest.raises(AttributeError):
            options.seed = 1  # type: ignore[misc, attr-defined]


def test_compare_refuses_the_earlier_form() -> None:
    """``seed=``, ``test=``, ``scheduler=`` and ``figures=`` are refused by Python (the shim that folded them
    into the options is gone), as is a 6th positional argument; ranx's ``qrels=``/``runs=`` still work."""
    for earlier in ({"seed": 3}, {"test": "t"}, {"scheduler": "local:1"}, {"figures": ["svg"]}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(earlier))}'"):
            rs.compare(DATA, ["bm25", "tfidf"], ["ndcg@5"], **earlier)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="positional argument"):
        rs.compare(DATA, ["bm25", "tfidf"], ["ndcg@5"], None, None, 5)
    new = rs.compare(DATA, ["bm25", "tfidf"], ["ndcg@5"], execution=Execution(3, "t"))
    assert new.test == "t" and new.provenance.settings["seed"] == 3


def test_tune_refuses_the_earlier_form() -> None:
    """The earlier signature's shim is gone (never released): its positional arguments and keywords are
    refused by Python, not translated with a warning."""
    with pytest.raises(TypeError, match="positional argument"):
        rs.tune(DATA, "bm25", "1.0:1.2:0.2", "0.5", "ndcg@5", 2, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'retrievers'"):
        rs.tune(DATA, retrievers=["bm25", "tfidf"], folds=2)
    for earlier in ({"k1": "1.2"}, {"trials": 5}, {"seed": 1}, {"scheduler": "local:1"}, {"figures": ["svg"]}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(earlier))}'"):
            rs.tune(DATA, "bm25", **earlier)  # type: ignore[arg-type]


def test_diagnose_refuses_the_earlier_form() -> None:
    """``sampled_negatives=``, ``sampled_repeats=`` and ``figures=`` are refused by Python (the shim is gone);
    ``sampled=Sampled(negatives, repeats)`` gives the counts."""
    for earlier in ({"sampled_negatives": 2}, {"sampled_repeats": 2}, {"figures": ["svg"]}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(earlier))}'"):
            rs.diagnose(DATA, "bm25", depth=5, sampled=True, **earlier)  # type: ignore[arg-type]
    assert rs.diagnose(DATA, "bm25", depth=5, sampled=Sampled(2, 2), seed=4).sampled_settings == (
        "2 negatives, 2 repeats, seed 4"
    )


def test_rag_refuses_the_earlier_form() -> None:
    """The earlier keywords are refused by Python (the shim that folded them into the options is gone);
    the options objects give what they gave."""
    for earlier in ({"tokenizer": "analyzer"}, {"answer_mode": "regex"}, {"test": "t"}, {"seed": 1}, {"figures": []}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(earlier))}'"):
            rs.rag(DATA, ["words:4"], ["bm25"], [5], **earlier)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="positional argument"):
        rs.rag(DATA, ["words:4"], ["bm25"], [5], None, None, 20)
    counted = rs.rag(DATA, ["words:4"], ["bm25"], Budgets((5,), "analyzer"), execution=Execution(test="t"))
    assert counted.counter != rs.rag(DATA, ["words:4"], ["bm25"], [5]).counter and counted.test == "t"


def test_an_unknown_keyword_is_a_type_error_not_a_deprecation() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="unexpected keyword argument 'sede'"):
            rs.compare(DATA, ["bm25", "tfidf"], sede=3)


def test_tune_refuses_a_test_it_does_not_run() -> None:
    with pytest.raises(RankscopeError, match="paired randomization test"):
        rs.tune(DATA, "bm25", execution=Execution(test="t"))


def test_the_earlier_system_class_of_diagnose_runs_is_gone() -> None:
    """``rankscope.workflows.diagnose.System`` (an alias of SystemRun with a DeprecationWarning) is gone."""
    import rankscope.workflows.diagnose as room

    with pytest.raises(ImportError):
        from rankscope.workflows.diagnose import System  # noqa: F401
    assert not hasattr(room, "System")
