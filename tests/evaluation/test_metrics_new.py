"""judged@k, ERR, RBP, per-metric relevance levels and ignore_self against ir_measures, gdeval and ranx.

(num_ret, num_rel, num_rel_ret and the 11 iprec points are in trec_reference's
pytrec_eval comparison.) The random cases have ties, graded and negative labels and
queries on one side only.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run
from rankscope.evaluation import evaluate
from rankscope.evaluation.metrics import parse_metric
from tests.evaluation.trec_reference import TREC_NAMES, pytrec_per_query, random_case

ir_measures = pytest.importorskip("ir_measures")


def ir_per_query(measure: str, qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    """{query_id: value} from ir_measures for one measure."""
    qrels_it = [ir_measures.Qrel(q, d, int(r)) for q, d, r in qrels.itertuples(index=False)]
    run_it = [
        ir_measures.ScoredDoc(q, d, float(s))
        for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False)
    ]
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)], qrels_it, run_it)}


def reversed_ids(*frames: pd.DataFrame) -> list[pd.DataFrame]:
    """Rename doc ids so that ascending order of the new ids is descending (byte) order of the old.

    ir_measures' judged provider breaks score ties by doc_id ascending, trec_eval by doc_id
    descending; on the renamed run ir_measures sees trec_eval's order with the ties kept.
    """
    ids = sorted(set().union(*(f["doc_id"] for f in frames)), reverse=True)
    new = {old: f"d{i:05d}" for i, old in enumerate(ids)}
    return [f.assign(doc_id=f["doc_id"].map(new)) for f in frames]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 5, 10, 30])
def test_judged_at_k_matches_ir_measures(seed: int, k: int) -> None:
    qrels, run = random_case(seed)
    ours = evaluate(qrels, run, [f"judged@{k}"]).wide()[f"judged@{k}"]
    reference = ir_per_query(f"Judged@{k}", *reversed_ids(qrels, run))
    assert len(reference) > 10
    for qid, expected in reference.items():
        assert ours[qid] == pytest.approx(expected, abs=1e-12), qid
    assert (ours.drop(index=list(reference)) == 0).all()  # qrels queries the run lacks


def test_judged_counts_any_label_and_divides_by_what_was_shown() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [0, -1, 2]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "x", "b", "c"], "score": [4.0, 3.0, 2.0, 1.0]})
    means = evaluate(qrels, run, ["judged@2", "judged@3", "judged@10", "judged"]).mean
    assert means == {"judged@2": 0.5, "judged@3": pytest.approx(2 / 3), "judged@10": 0.75, "judged": 0.75}


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures' ERR runs gdeval.pl, which needs perl")
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [5, 20])
def test_err_matches_gdeval(seed: int, k: int) -> None:
    qrels, run = random_case(seed)
    # gdeval reads numeric topics only; its order is trec_eval's (score desc, docno desc)
    qrels, run = (f.assign(query_id=f["query_id"].str.slice(1)) for f in (qrels, run))
    ours = evaluate(qrels, run, [f"err@{k}"]).wide()[f"err@{k}"]
    reference = ir_per_query(f"ERR@{k}", qrels, run)
    assert len(reference) > 10 and any(v > 0 for v in reference.values())
    for qid, expected in reference.items():
        assert ours[qid] == pytest.approx(expected, abs=5.1e-6), qid  # gdeval prints 5 decimals


def definition_by_loop(qrels: pd.DataFrame, run: pd.DataFrame, value_of) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Apply ``value_of(labels in rank order)`` query by query, in the tie-rule order."""
    labels = {(q, d): r for q, d, r in qrels.itertuples(index=False)}
    ordered = sort_run(run)
    return {
        qid: value_of([labels.get((qid, d), 0) for d in group["doc_id"]])
        for qid, group in ordered.groupby("query_id", sort=False)
    }


def test_err_equals_its_definition_to_machine_precision() -> None:
    def err_at_20(labels: list[int]) -> float:
        value, go_on = 0.0, 1.0
        for i, g in enumerate(labels[:20], start=1):
            stop = (2.0 ** max(g, 0) - 1) / 16
            value += go_on * stop / i
            go_on *= 1 - stop
        return value

    qrels, run = random_case(7)
    ours = evaluate(qrels, run, ["err@20"]).wide()["err@20"]
    for qid, expected in definition_by_loop(qrels, run, err_at_20).items():
        if qid in ours.index:
            assert ours[qid] == pytest.approx(expected, abs=1e-12)


def test_err_refuses_grades_beyond_gdeval_scale() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [5]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(RankscopeError, match="labels go up to 4"):
        evaluate(qrels, run, ["err@10"])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("name", "p", "k", "level"),
    [
        ("rbp(p=0.8)", 0.8, 10**9, None),
        ("rbp(p=0.5)@10", 0.5, 10, None),
        ("RBP(p=0.95)", 0.95, 10**9, None),
        ("RBP(p=0.8,rel=1)", 0.8, 10**9, 1),
        ("rbp(p=0.5,rel=2)@10", 0.5, 10, 2),
    ],
)
def test_rbp_equals_its_definition(seed: int, name: str, p: float, k: int, level: int | None) -> None:
    """Moffat & Zobel's RBP, query by query in the tie-rule order: weighed by the label without ``rel``
    (ir_measures' RBP(p=x), computed by trectools, and ranx's), by 1 for a label >= rel with it
    (ir_measures' RBP(p=x,rel=n), computed by cwl_eval). Neither provider is installed with the tests;
    the random cases hold graded and negative labels, so the two readings differ on them."""
    qrels, run = random_case(seed)
    ours = evaluate(qrels, run, [name]).wide()[parse_metric(name).name]

    def gain(label: int) -> float:
        return float(max(label, 0)) if level is None else float(label >= level)

    reference = definition_by_loop(
        qrels, run, lambda labels: (1 - p) * sum(p**i * gain(g) for i, g in enumerate(labels[:k]))
    )
    assert sum(v > 0 for v in reference.values()) >= 3
    for qid, expected in reference.items():
        if qid in ours.index:
            assert ours[qid] == pytest.approx(expected, abs=1e-12), qid


def test_rbp_by_hand() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["x", "a", "c", "b"], "score": [4.0, 3.0, 2.0, 1.0]})
    means = evaluate(qrels, run, ["rbp(p=0.8)", "rbp(p=0.5)@2", "rbp(p=0.8,rel=2)", "rbp(p=0.8,rel=1)"]).mean
    assert means["rbp(p=0.8)"] == pytest.approx(0.2 * (1 * 0.8 + 2 * 0.8**3))  # graded: the label is the gain
    assert means["rbp(p=0.5)@2"] == pytest.approx(0.5 * 0.5)
    assert means["rbp(p=0.8,rel=2)"] == pytest.approx(0.2 * 0.8**3)
    assert means["rbp(p=0.8,rel=1)"] == pytest.approx(0.2 * (0.8 + 0.8**3))  # binary: 1 for a label >= 1


def test_ir_measures_names_give_ir_measures_numbers() -> None:
    """NumRet(rel=1) and nDCG(dcg=log2) computed by ir_measures (pytrec_eval) and by rankscope alike."""
    qrels, run = random_case(7)
    for name in ("NumRet(rel=1)", "NumRet(rel=2)", "nDCG(dcg='log2')@10"):
        ours = evaluate(qrels, run, [name]).wide()[parse_metric(name).name]
        reference = ir_per_query(name, qrels, run)
        assert len(reference) >= 3
        for qid, expected in reference.items():
            assert ours.get(qid, 0.0) == pytest.approx(expected, abs=1e-9), (name, qid)


@pytest.mark.parametrize("level", [2, 3])
def test_rel_parameter_matches_pytrec_eval_relevance_level(level: int) -> None:
    qrels, run = random_case(40 + level)
    plain = ["precision@10", "recall@100", "map", "mrr", "bpref", "rprec", "num_rel", "iprec(trec=9)@0.5"]
    with_rel = [
        f"precision(rel={level})@10",
        f"recall(rel={level})@100",
        f"map(rel={level})",
        f"mrr(rel={level})",
        f"bpref(rel={level})",
        f"rprec(rel={level})",
        f"num_rel(rel={level})",
        f"iprec(rel={level},trec=9)@0.5",
    ]
    ours = evaluate(qrels, run, with_rel).wide()
    reference = pytrec_per_query(qrels, run, plain, relevance_level=level)
    for qid, values in reference.items():
        for name, metric in zip(with_rel, plain):
            assert ours.loc[qid, parse_metric(name).name] == pytest.approx(values[metric], abs=1e-9), (qid, name)
    assert set(TREC_NAMES) >= set(plain)


def test_ignore_self_drops_the_query_itself() -> None:
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["5", "6"], "relevance": [1, 1]})
    run = pd.DataFrame(
        {"query_id": ["1", "1", "2", "2"], "doc_id": ["1", "5", "2", "6"], "score": [2.0, 1.0, 2.0, 1.0]}
    )
    assert evaluate(qrels, run, ["mrr"]).mean == {"mrr": 0.5}
    assert evaluate(qrels, run, ["mrr"], ignore_self=True).mean == {"mrr": 1.0}
    assert len(run) == 4  # not modified


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["nDCG(gains={0:0,1:1,2:3,3:7})@10", "nDCG(gains={1:5,2:1})", "nDCG(gains={3:0})@5"])
def test_ndcg_gains_match_ir_measures(seed: int, name: str) -> None:
    """ir_measures' nDCG(gains=...) (pytrec_eval on the qrels with the gains as labels), query by query;
    {1:5,2:1} reverses the ideal order of labels 1 and 2, {3:0} drops label 3 from it."""
    qrels, run = random_case(seed)
    ours = evaluate(qrels, run, [name]).wide()[parse_metric(name).name]
    reference = ir_per_query(name, qrels, run)
    assert sum(v > 0 for v in reference.values()) >= 3
    for qid, expected in reference.items():
        assert ours.get(qid, 0.0) == pytest.approx(expected, abs=1e-9), qid
