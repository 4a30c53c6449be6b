"""One rule for queries whose judgments hold no relevant document (evaluation.conventions.WORKFLOW_EXCLUDE_UNJUDGED):
compare, diagnose and rag leave them out of the means and say how many; rankscope evaluate counts them as 0
(trec_eval's rule) and says why it differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation import evaluate
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from tests.workflows.tiny_collection import QRELS, QUERIES, TEXTS

NO_RELEVANT = {**QUERIES, "q4": "shock waves"}
JUDGED = {**QRELS, "q4": {"d4": 0, "d1": 0}}  # judged, but nothing relevant: no system can find it
DATA = Dataset.from_dicts("tiny4", TEXTS, NO_RELEVANT, JUDGED)
SENTENCE = "a query without a relevant judgment (1 of 4 judged queries here) is left out of the means"


def test_compare_and_diagnose_give_one_number_over_the_queries_with_a_relevant_document() -> None:
    run = make_retriever("bm25").index(DATA.corpus).search(DATA.queries, k=100)
    left_out = evaluate(DATA.qrels, run, ["ndcg@10"], exclude_unjudged=True).mean["ndcg@10"]
    counted = evaluate(DATA.qrels, run, ["ndcg@10"]).mean["ndcg@10"]
    assert counted == pytest.approx(left_out * 3 / 4) and left_out > counted  # q4 scores 0 when counted
    compared = compare(DATA, ["bm25", "tfidf"], ["ndcg@10"])
    diagnosed = diagnose(DATA, "bm25", metrics=["ndcg@10"])
    assert compared.summary.loc["bm25", "ndcg@10"] == pytest.approx(left_out, abs=1e-12)
    assert diagnosed.diagnoses[0].headroom.summary.loc["ndcg@10", "actual"] == pytest.approx(left_out, abs=1e-12)
    assert SENTENCE in compared.to_text().replace("\n", " ") and SENTENCE in diagnosed.to_text().replace("\n", " ")


def test_evaluate_counts_them_and_says_why_it_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_retriever("bm25").index(DATA.corpus).search(DATA.queries, k=100)
    write_trec_qrels(DATA.qrels, tmp_path / "qrels.txt")
    write_trec_run(run, tmp_path / "run.txt")
    assert main(["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "ndcg@10"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "without relevant judgments: 1" in out
    assert "scores 0 and counts in the means (trec_eval's rule, kept by rankscope evaluate" in out


def test_judge_prints_the_count_and_why_it_keeps_trec_evals_rule(tmp_path: Path) -> None:
    from rankscope.workflows.judge import judge

    result = judge(DATA, ["bm25"], "qrels", judgments=tmp_path, depth=3)
    text = " ".join(result.to_text().split())
    assert "a query without a relevant judgment (1 of 4 judged queries here) scores 0 and counts in the means" in text
    assert "kept by rankscope judge: its intervals (naive, PPI, PPI++) and ranking agreement estimate the mean" in text
