"""Papers' labels (issue 29 item 10): tables and LaTeX show metrics as papers write them (P@10, nDCG@10,
MRR@10, MAP); files and JSON keep rankscope's names."""

from __future__ import annotations

import pytest

from rankscope.evaluation.marks import paper_label
from rankscope.workflows.compare import compare
from tests.workflows.tiny_collection import DATA


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("ndcg@10", "nDCG@10"),
        ("precision@10", "P@10"),
        ("recall@100", "Recall@100"),
        ("mrr@10", "MRR@10"),
        ("map", "MAP"),
        ("hit@10", "Hit@10"),
        ("maxp ndcg@10", "MaxP nDCG@10"),
        ("hit@500tok", "Hit@500tok"),
        ("rbp(p=0.8)", "RBP(p=0.8)"),
        ("bpref", "bpref"),  # a family papers write as rankscope does
    ],
)
def test_paper_labels(name: str, label: str) -> None:
    assert paper_label(name) == label


def test_compare_tables_and_latex_use_the_labels_and_files_keep_the_names() -> None:
    result = compare(DATA, ["bm25", "tfidf"], ["P_10", "ndcg_cut_10", "map", "recip_rank"])
    assert list(result.summary.columns) == ["precision@10", "ndcg@10", "map", "mrr"]  # the data's names
    header = result.to_text().splitlines()[0].split()
    assert header == ["retriever", "P@10", "nDCG@10", "MAP", "MRR"]
    latex = result.to_latex()
    assert r"System & P@10 & nDCG@10 & MAP & MRR \\" in latex
    assert set(result.to_dict()["mean"]["bm25"]) == {"precision@10", "ndcg@10", "map", "mrr"}
