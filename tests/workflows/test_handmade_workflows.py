"""compare and diagnose end to end on a five-document collection whose numbers are worked out by hand
(the collection and the two fixed runs: tests/workflows/handmade.py).

Two fixed "retrievers" return those runs; ``retrieval.registry.make_retriever``
is patched to build them, so these tests do not depend on any real retriever.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankscope.evaluation import evaluate
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from rankscope.workflows.diagnose.sampling import per_document_full
from tests.workflows.handmade import DATA, Fixed


@pytest.fixture(autouse=True)
def fixed_retrievers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rankscope.retrieval.registry.make_retriever", lambda spec: Fixed(system=spec))


def test_diagnose_by_hand() -> None:
    result = diagnose(DATA, "A", vs="B", depth=5)
    a, b = result.diagnoses
    assert a.first_ranks.to_dict() == {"q1": 2, "q2": 1, "q3": pytest.approx(math.nan, nan_ok=True), "q4": 4}
    assert list(a.misses.index) == [1, 3, 5]
    assert a.misses["hits"].tolist() == [1, 2, 3]
    assert a.misses["ranking_misses"].tolist() == [2, 1, 0]
    assert a.misses["recall_misses"].tolist() == [1, 1, 1]
    assert b.misses["hits"].tolist() == [3, 4, 4] and b.misses["recall_misses"].tolist() == [0, 0, 0]
    # the miss counts agree with evaluate's Hit@K, and MRR is as computed by hand
    assert a.cutoffs["hit"].tolist() == [0.25, 0.5, 0.75]
    assert a.cutoffs.loc[5, "mrr"] == pytest.approx((1 / 2 + 1 + 0 + 1 / 4) / 4)
    assert b.cutoffs.loc[5, "mrr"] == pytest.approx((1 + 1 / 3 + 1 + 1) / 4)
    # Judged@1: A's first documents d2, d3, d1, d1 are judged for q2 only; B's d1, d1, d5, d5 for q1, q3, q4
    assert (a.cutoffs.loc[1, "judged"], b.cutoffs.loc[1, "judged"]) == (0.25, 0.75)
    assert (
        a.table().loc[5, "Judged@K"]
        == evaluate(DATA.qrels, Fixed(system="A").search(DATA.queries), ["judged@5"]).mean["judged@5"]
    )
    worst = result.worst(a, n=2)
    assert worst["query_id"].tolist() == ["q3", "q4"]
    assert worst["first_relevant_rank"].tolist() == ["not within 5", "4"]
    assert worst["text"].tolist() == ["three", "four"]
    # worst by ndcg@5 points lost: q3 loses all of it (1.0, to recall), q4 has d5 at rank 4: 1 - 1/log2(5)
    assert result.metrics == ("ndcg@5", "mrr@5", "recall@5", "map")
    assert worst["lost"].tolist() == pytest.approx([1.0, 1 - 1 / math.log2(5)])
    assert worst["recall_lost"].tolist() == pytest.approx([1.0, 0.0])
    # MRR@5: now (1/2 + 1 + 0 + 1/4) / 4; a perfect reranker lifts q1 and q4 to 1; q3 needs recall
    mrr = a.headroom.summary.loc["mrr@5"]
    assert mrr[["actual", "oracle", "ideal"]].tolist() == pytest.approx([0.4375, 0.75, 1.0])
    assert "would take ndcg@5 from" in " ".join(a.findings)
    text = " ".join(result.comparison)
    assert "A finds a relevant document for 0 queries where B finds none, and misses 1" in text
    assert "of 3 queries both retrieve, A ranks the first relevant document higher on 1, lower on 2" in text
    assert "4 ranking misses" not in text


def test_per_document_full_by_hand() -> None:
    # pairs (q1,d1): rank 2; (q2,d3): 1; (q2,d4): not retrieved; (q3,d5): not retrieved; (q4,d5): 4
    run = Fixed(system="A").search(DATA.queries)
    values = per_document_full(DATA.qrels, run, ["hit@1", "mrr@10"])
    assert values["hit@1"] == pytest.approx((0 + 0.5 + 0 + 0) / 4)
    assert values["mrr@10"] == pytest.approx((0.5 + 0.5 + 0 + 0.25) / 4)


@pytest.mark.slow
def test_compare_by_hand(tmp_path) -> None:
    from rankscope.corpora.trec import read_trec_run

    result = compare(DATA, ["A", "B"], ["mrr@10", "hit@1"], baseline="A", out=tmp_path, depth=5)
    assert result.summary.loc["A", "mrr@10"] == pytest.approx(0.4375)
    assert result.summary.loc["B", "hit@1"] == pytest.approx(0.75)
    assert result.marked().loc["B", "Hit@1"].startswith("0.7500*")  # headed as papers write it
    for spec in ("A", "B"):
        rerun = evaluate(DATA.qrels, read_trec_run(tmp_path / f"run.{spec}.trec"), ["mrr@10", "hit@1"])
        summary = pd.read_csv(tmp_path / "summary.csv", index_col="retriever")
        assert summary.loc[spec].to_dict() == pytest.approx(rerun.mean)
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert curves.query("retriever == 'A' and K == 3")["hit"].item() == pytest.approx(0.5)
    per_query = pd.read_csv(tmp_path / "per_query.csv", dtype={"query_id": str})
    assert len(per_query) == 2 * 4 * 2
    assert "p_adjusted" in pd.read_csv(tmp_path / "significance.csv").columns
    for name in ("report.md", "report.html", "hit_recall_at_k.svg", "per_query_difference.svg"):
        assert (tmp_path / name).stat().st_size > 0


def test_baseline_must_be_compared(tmp_path) -> None:
    from rankscope.core.errors import RankscopeError

    with pytest.raises(RankscopeError, match="baseline 'bm25' is not among the systems"):
        compare(DATA, ["A", "B"], ["mrr@10"], baseline="bm25")
    assert compare(DATA, ["A", "B"], ["mrr@10"]).baseline == "A"  # no bm25 compared: the first system
    with pytest.raises(RankscopeError, match="listed twice"):
        compare(DATA, ["A", "A"], ["mrr@10"], baseline="A")
    with pytest.raises(RankscopeError, match="unknown metric 'ndcg@x'"):
        compare(DATA, ["A", "B"], ["ndcg@x"], baseline="A")


def test_compare_needs_two_and_stops_curves_at_depth() -> None:
    from rankscope.core.errors import RankscopeError

    with pytest.raises(RankscopeError, match="at least two systems"):
        compare(DATA, ["B"], ["hit@1"], baseline="B")
    result = compare(DATA, ["A", "B"], ["hit@1"], baseline="A", depth=3)
    assert sorted(result.curves["K"].unique()) == [1, 3]  # no K beyond the depth


def test_sampled_table_cache_gives_the_protocol_numbers() -> None:
    from rankscope.evaluation.sampled import sampled_evaluate
    from rankscope.workflows.diagnose.sampling import sampled_table

    retriever = Fixed(system="A")
    run = retriever.search(DATA.queries)
    table = sampled_table(retriever, DATA, run, ["hit@1", "mrr@10"], n_negatives=2, repeats=3, seed=5)
    direct = sampled_evaluate(
        DATA.qrels,
        retriever,
        DATA.corpus["doc_id"].tolist(),
        ["hit@1", "mrr@10"],
        queries=DATA.queries,
        n_negatives=2,
        repeats=3,
        seed=5,
    )
    assert table["sampled"].tolist() == pytest.approx([direct.mean["hit@1"], direct.mean["mrr@10"]])
    assert table["sampled_std"].tolist() == pytest.approx([direct.std["hit@1"], direct.std["mrr@10"]])
    assert table["full_per_document"].tolist() == pytest.approx([0.125, 0.3125])
    assert table["full"].tolist() == pytest.approx([0.25, 0.4375])
    # flattery = sampled / full_per_document (hand values above): how much sampling alone inflates the metric
    assert table["flattery"].tolist() == pytest.approx([direct.mean["hit@1"] / 0.125, direct.mean["mrr@10"] / 0.3125])
    assert (table["flattery"] > 1).all()  # among 2 sampled negatives a relevant document ranks at least as high


def test_score_cache_refuses_a_document_outside_the_corpus() -> None:
    from rankscope.retrieval.base import UnknownDocumentError
    from rankscope.workflows.diagnose.sampling import QueryScoreCache

    class Listed:
        def score(self, query: str, doc_ids: list[str]) -> np.ndarray:
            return np.arange(len(doc_ids), dtype=np.float64) + (10.0 if query == "one" else 20.0)

    cache = QueryScoreCache(Listed(), DATA.queries, ["d1", "d2", "d3"])
    assert cache("q1", ["d3", "d1"]).tolist() == [12.0, 10.0]
    assert cache("q2", ["d2"]).tolist() == [21.0]
    with pytest.raises(UnknownDocumentError, match="document 'd9' is judged but not in the corpus"):
        cache("q2", ["d1", "d9"])  # used to return d3's score for d9 (get_indexer gives -1)
