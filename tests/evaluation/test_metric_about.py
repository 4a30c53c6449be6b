"""The registry's descriptions of measures (evaluation/metric_about.py): docs/metrics.md's table is the one
the registry makes, every family has one, and the names it gives for trec_eval and ir_measures are names
those tools (and rankscope's own parser) accept for the same measure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytrec_eval

from rankscope.evaluation.metric_about import ABOUT
from rankscope.evaluation.metrics import _BUILT_IN, FAMILIES, measures_table, parse_metric
from tests.evaluation.trec_reference import TREC_NAMES

TREC_EVAL_10_ONLY = {"rbp"}  # pytrec_eval wraps trec_eval 9.0.8
DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def _concrete(form: str) -> str:
    """A name with its placeholders filled: a cutoff, a recall level, a persistence, a relevance level."""
    return (
        form.replace(".k", ".10")
        .replace("@k", "@10")
        .replace("_x", "_0.50")
        .replace("p=x", "p=0.8")
        .replace("rel=n", "rel=2")
        .replace("@x", "@0.5")
    )


def test_the_docs_table_is_the_registrys() -> None:
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- measures table:[^\n]*-->\n(.*?)<!-- end of measures table -->", text, re.S)
    assert found is not None
    assert found.group(1) == measures_table()


def test_every_built_in_family_is_described() -> None:
    built_in = {FAMILIES_NAME for FAMILIES_NAME in FAMILIES if FAMILIES_NAME in _BUILT_IN}
    assert set(ABOUT) == built_in
    assert all(FAMILIES[name].about is ABOUT[name] and ABOUT[name].definition for name in ABOUT)


@pytest.mark.parametrize("family", sorted(ABOUT))
def test_trec_eval_names_are_trec_evals_and_read_as_the_family(family: str) -> None:
    for form in ABOUT[family].trec_eval:
        concrete = _concrete(form)
        assert concrete.split(".")[0] in pytrec_eval.supported_measures | TREC_EVAL_10_ONLY or concrete.startswith(
            "iprec_at_recall"
        )
        assert parse_metric(concrete).family == family


@pytest.mark.parametrize("family", sorted(ABOUT))
def test_ir_measures_names_parse_as_ir_measures_measures(family: str) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    for form in ABOUT[family].ir_measures:
        measure = ir_measures.parse_measure(_concrete(form))
        assert str(measure).split("(")[0].split("@")[0] == _concrete(form).split("(")[0].split("@")[0]


def test_the_tests_map_to_pytrec_eval_comes_from_the_registry() -> None:
    assert TREC_NAMES["ndcg@10"] == ("ndcg_cut.10", "ndcg_cut_10")
    assert TREC_NAMES["precision"] == ("set_P", "set_P")
    assert TREC_NAMES["mrr"] == ("recip_rank", "recip_rank")
    assert parse_metric("mrr@10").trec_eval is None  # trec_eval has no cut of recip_rank
    assert parse_metric("precision(rel=2)@10").trec_eval == ("P.10", "P_10")  # the level is trec_eval's -l
    assert parse_metric("rbp(p=0.8)").trec_eval is None
