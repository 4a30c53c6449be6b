"""The metric-name grammar is strict: every accepted form, every refused one, and the other tools' names."""

from __future__ import annotations

import re

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
        ("f1(threshold=-2e-3)", Metric("f1(threshold=-0.002)", "f1", threshold=-0.002)),
        ("NDCG@10", Metric("ndcg@10", "ndcg", k=10)),
        ("judged@10", Metric("judged@10", "judged", k=10)),
        ("err@20", Metric("err@20", "err", k=20)),
        ("rbp(p=0.8)", Metric("rbp(p=0.8)", "rbp", params=(("p", 0.8),))),
        ("rbp.p=0.9", Metric("rbp(p=0.9)", "rbp", params=(("p", 0.9),))),
        ("rbp_p=0.9", Metric("rbp(p=0.9)", "rbp", params=(("p", 0.9),))),  # trec_eval's printed form
        ("RBP(p=0.8,rel=1)", Metric("rbp(p=0.8,rel=1)", "rbp", rel=1, params=(("p", 0.8),))),
        ("NumRet(rel=1)", Metric("num_rel_ret(rel=1)", "num_rel_ret", rel=1)),
        ("nDCG(dcg=exp-log2)@10", Metric("ndcg_exp@10", "ndcg_exp", k=10)),
        ("nDCG(dcg='log2')", Metric("ndcg", "ndcg")),
        ("nDCG(gains={0:0,1:1,2:3})@5", Metric("ndcg(gains={2:3})@5", "ndcg", k=5, params=(("gains", ((2, 3),)),))),
        ("rbp(p=0.95)@100", Metric("rbp(p=0.95)@100", "rbp", k=100, params=(("p", 0.95),))),
        ("iprec@0.3", Metric("iprec@0.3", "iprec", params=(("recall", 0.3), ("trec", 10)))),
        ("precision(rel=2)@10", Metric("precision(rel=2)@10", "precision", k=10, rel=2)),
        ("num_rel_ret", Metric("num_rel_ret", "num_rel_ret")),
        ("recall(threshold=3)", Metric("recall(threshold=3)", "recall", threshold=3.0)),
    ],
)
def test_accepted_forms(name: str, expected: Metric) -> None:
    assert parse_metric(name) == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("P@1O", "unknown metric 'P@1O'; known metrics: precision, precision@k"),
        ("ndgc@10", "unknown metric 'ndgc@10'; did you mean 'ndcg@10'?"),
        ("recip_rnk", "did you mean 'mrr'?"),
        ("ndcg@10.5", "a cutoff is a positive integer"),
        ("ndcg_10", "write the cutoff as ndcg@10"),
        ("ndcg(rel=2)@10", "ndcg does not use a relevance level"),
        ("precision(rel=0)@10", "metric 'precision(rel=0)@10': rel=0 is not allowed; rel must be an int in [1, inf)"),
        ("precision(rel=1.5)@10", "rel=1.5 is not allowed; rel must be an int in [1, inf)"),
        ("rbp(p=1)", "metric 'rbp(p=1)': p=1 is not allowed; p must be a float in (0, 1)"),
        ("rbp(p=1e400)", "p=1e400 is not allowed; p must be a float in (0, 1)"),
        ("iprec(trec=8)@0.5", "trec=8 is not allowed; trec must be an int in [9, 10]"),
        ("rbp(q=0.5)", "metric 'rbp(q=0.5)': rbp has no parameter(s) ['q']; known: p, rel"),
        ("ndcg(p=0.5)@10", "metric 'ndcg(p=0.5)@10': ndcg has no parameter(s) ['p']; known: (none)"),
        ("iprec", "iprec needs recall"),
        ("rbp", "metric 'rbp': rbp needs p (RBP's persistence, always written: ir_measures' RBP takes 0.8"),
        ("RBP(rel=1)", "rbp needs p"),
        ("nDCG(dcg=exp)@10", "metric 'nDCG(dcg=exp)@10': dcg=exp is not known; dcg is one of log2, exp-log2"),
        ("iprec@1.5", "metric 'iprec@1.5': recall=1.5 is not allowed; recall must be a float in [0, 1]"),
        ("num_ret@10", "num_ret takes no cutoff"),
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
    with pytest.raises(RankscopeError, match=re.escape(message)):
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
    "infap",
    "judged",
    "judged@k",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec(trec=x)@recall",
    "err",
    "err@k",
    "rbp(p=x)",
    "rbp(p=x)@k",
]
"""Written out, not read from known_forms(): an empty or shrunken list must fail this test."""


def test_error_lists_every_known_form() -> None:
    assert known_forms() == KNOWN_FORMS
    with pytest.raises(RankscopeError) as info:
        parse_metric("xyz@10")
    assert str(info.value) == (
        f"unknown metric 'xyz@10'; known metrics: {', '.join(KNOWN_FORMS)} (k is a positive integer, x a number)"
    )


def test_several_names() -> None:
    assert [m.name for m in parse_metrics(["map", "ndcg@10"])] == ["map", "ndcg@10"]
    assert parse_metrics("map") == (Metric("map", "map"),)
    with pytest.raises(RankscopeError, match="listed twice"):
        parse_metrics(["map", "map"])
    with pytest.raises(RankscopeError, match="no metric"):
        parse_metrics([])


# trec_eval's names (as ``trec_eval -m`` takes them and as it prints them) and ir_measures' names
OTHER_TOOLS = {
    "P_10": "precision@10",
    "P.10": "precision@10",
    "ndcg_cut_10": "ndcg@10",
    "ndcg_cut.10": "ndcg@10",
    "ndcg": "ndcg",
    "recip_rank": "mrr",
    "recall_100": "recall@100",
    "success_10": "hit@10",
    "map_cut_100": "map@100",
    "Rprec": "rprec",
    "bpref": "bpref",
    "infAP": "infap",
    "infAP(rel=2)": "infap(rel=2)",
    "set_P": "precision",
    "set_recall": "recall",
    "set_F": "f1",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "iprec_at_recall_0.00": "iprec@0",
    "iprec_at_recall_0.50": "iprec@0.5",
    "iprec_at_recall_1.00": "iprec@1",
    "iprec_at_recall.0.10": "iprec@0.1",  # trec_eval's -m form
    "nDCG@10": "ndcg@10",
    "nDCG": "ndcg",
    "AP": "map",
    "AP@100": "map@100",
    "P@10": "precision@10",
    "R@100": "recall@100",
    "RR": "mrr",
    "RR@10": "mrr@10",
    "Success@10": "hit@10",
    "Judged@10": "judged@10",
    "P(rel=2)@10": "precision(rel=2)@10",
    "AP(rel=2)": "map(rel=2)",
    "ERR@20": "err@20",
    "RBP(p=0.8)": "rbp(p=0.8)",
    "RBP(p=0.8,rel=1)": "rbp(p=0.8,rel=1)",
    "NumRet(rel=1)": "num_rel_ret(rel=1)",
    "nDCG(dcg=exp-log2)@10": "ndcg_exp@10",
    "IPrec@0.5": "iprec@0.5",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "SetP": "precision",
}


@pytest.mark.parametrize(("name", "canonical"), OTHER_TOOLS.items())
def test_other_tools_names_map_to_one_canonical_metric(name: str, canonical: str) -> None:
    assert parse_metric(name).name == canonical
    assert parse_metric(canonical).name == canonical  # the canonical name reads back as itself
    assert parse_metric(name.upper()).name == canonical  # any case


def test_two_names_for_one_metric_are_a_duplicate() -> None:
    with pytest.raises(RankscopeError, match=r"'precision@10' is listed twice \(as 'P_10' and 'P@10'\)"):
        parse_metrics(["P_10", "map", "P@10"])
