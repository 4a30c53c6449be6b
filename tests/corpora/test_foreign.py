"""Runs and qrels as other tools hand them over: dict-of-dicts (pytrec_eval, BEIR, ranx to_dict), MS MARCO runs."""

from __future__ import annotations

import pytest
import pytrec_eval

from rankscope.core.errors import FormatError, SchemaError
from rankscope.corpora.foreign import qrels_from_dict, read_run, run_from_dict
from rankscope.corpora.trec import read_trec_run, write_trec_run
from rankscope.evaluation import evaluate
from tests.evaluation.trec_reference import random_case


def as_dicts(qrels, run) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    qd: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        qd.setdefault(q, {})[d] = int(r)
    rd: dict = {}
    for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False):
        rd.setdefault(q, {})[d] = float(s)
    return qd, rd


def test_dicts_score_as_pytrec_eval_scores_them() -> None:
    qrels, run = random_case(3)
    qd, rd = as_dicts(qrels, run)
    ours = evaluate(qd, rd, ["ndcg@10", "map"], judged_only=True).wide()  # pytrec_eval scores queries in both
    reference = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "map"}).evaluate(rd)
    assert sorted(ours.index) == sorted(reference)
    for qid, values in reference.items():
        assert ours.loc[qid, "ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-9)
        assert ours.loc[qid, "map"] == pytest.approx(values["map"], abs=1e-9)


class ToDict:
    """Stands for a ranx Run/Qrels: anything with to_dict() giving the nested dict."""

    def __init__(self, nested: dict) -> None:
        self.nested = nested

    def to_dict(self) -> dict:
        return self.nested


def test_objects_with_to_dict_and_bad_shapes() -> None:
    qrels, run = random_case(4)
    qd, rd = as_dicts(qrels, run)
    assert evaluate(ToDict(qd), ToDict(rd), ["map"]).mean == evaluate(qrels, run, ["map"]).mean
    frame = run_from_dict({"q1": {"a": 1.0, "b": 2.0}})
    assert frame[["doc_id", "rank"]].values.tolist() == [["b", 1], ["a", 2]]
    assert qrels_from_dict({1: {7: 2}}).values.tolist() == [["1", "7", 2]]  # ids become strings
    with pytest.raises(SchemaError, match="query 'q1' maps to list"):
        run_from_dict({"q1": ["a", "b"]})
    with pytest.raises(SchemaError, match="expected a DataFrame, a dict of dicts or ir_measures' namedtuples, got int"):
        evaluate(42, run)
    with pytest.raises(SchemaError, match=r"^qrels: no \(query, document\) entries$"):
        evaluate([], run)
    with pytest.raises(SchemaError, match="qrels: entry 0 is a str; expected namedtuples with the fields"):
        evaluate(["q1 0 d1 1"], run)


def test_msmarco_three_column_run_keeps_its_order(tmp_path) -> None:
    path = tmp_path / "run.dev.tsv"
    path.write_text("1\t7\t1\n1\t3\t2\n2\t9\t1\n1\t5\t3\n")
    run = read_run(path)
    assert run[["query_id", "doc_id", "rank"]].values.tolist() == [
        ["1", "7", 1],
        ["1", "3", 2],
        ["1", "5", 3],
        ["2", "9", 1],
    ]
    trec = tmp_path / "run.trec"
    write_trec_run(run, trec)
    assert read_run(trec)[["query_id", "doc_id", "rank"]].equals(run[["query_id", "doc_id", "rank"]])
    assert len(read_trec_run(trec)) == 4
    path.write_text("1\t7\t1\n1\t3\tx\n")
    with pytest.raises(FormatError, match="line 2: expected 3 fields 'query_id doc_id rank'"):
        read_run(path)
