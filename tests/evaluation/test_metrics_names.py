"""The metric-name grammar is strict: every accepted form, every refused one."""

from __future__ import annotations

import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.metrics import Metric, known_forms, parse_metric, parse_metrics


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ndcg@10", Metric("ndcg@10", "ndcg", k=10)),
        ("ndcg", Metric("ndcg", "ndcg")),
        ("ndcg_exp@5", Metric("ndcg_exp@5", "ndcg_exp", k=5)),
        ("map", Metric("map", "map")),
        ("map@100", Metric("map@100", "map", k=100)),
        ("mrr", Metric("mrr", "mrr")),
        ("hit@1", Metric("hit@1", "hit", k=1)),
        ("bpref", Metric("bpref", "bpref")),
        ("rprec", Metric("rprec", "rprec")),
        ("precision", Metric("precision", "precision")),
        ("precision(threshold=0.5)", Metric("precision(threshold=0.5)", "precision", threshold=0.5)),
        ("f1(threshold=-2e-3)", Metric("f1(threshold=-2e-3)", "f1", threshold=-0.002)),
        ("recall(threshold=3)", Metric("recall(threshold=3)", "recall", threshold=3.0)),
    ],
)
def test_accepted_forms(name: str, expected: Metric) -> None:
    assert parse_metric(name) == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("P@10", "unknown metric 'P@10'; known metrics: precision, precision@k"),
        ("NDCG@10", "unknown metric"),
        ("ndcg@0", "unknown metric"),
        ("ndcg@010", "unknown metric"),
        ("ndcg@ 10", "unknown metric"),
        ("ndcg@10 ", "unknown metric"),
        ("precision(threshold=abc)", "unknown metric"),
        ("precision(threshold=nan)", "unknown metric"),
        ("hit", "needs a cutoff, e.g. hit@10"),
        ("bpref@10", "bpref takes no cutoff"),
        ("map(threshold=1)", "map takes no score threshold"),
    ],
)
def test_refused_forms(name: str, message: str) -> None:
    with pytest.raises(RankscopeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_metric(name)


KNOWN_FORMS = [
    "precision",
    "precision@k",
    "precision(threshold=x)",
    "recall",
    "recall@k",
    "recall(threshold=x)",
    "f1",
    "f1@k",
    "f1(threshold=x)",
    "hit@k",
    "mrr",
    "mrr@k",
    "map",
    "map@k",
    "ndcg",
    "ndcg@k",
    "ndcg_exp",
    "ndcg_exp@k",
    "rprec",
    "bpref",
]
"""Written out, not read from known_forms(): an empty or shrunken list must fail this test."""


def test_error_lists_every_known_form() -> None:
    assert known_forms() == KNOWN_FORMS
    with pytest.raises(RankscopeError) as info:
        parse_metric("success@10")
    assert str(info.value) == (
        f"unknown metric 'success@10'; known metrics: {', '.join(KNOWN_FORMS)} (k is a positive integer, x a number)"
    )


def test_several_names() -> None:
    assert [m.name for m in parse_metrics(["map", "ndcg@10"])] == ["map", "ndcg@10"]
    assert parse_metrics("map") == (Metric("map", "map"),)
    with pytest.raises(RankscopeError, match="listed twice"):
        parse_metrics(["map", "map"])
    with pytest.raises(RankscopeError, match="no metric"):
        parse_metrics([])
