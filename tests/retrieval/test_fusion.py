"""Rank fusion against fused scores computed by hand from the definitions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import NotFittedError, SchemaError
from rankscope.retrieval.fusion import HybridRetriever, combsum, fuse, rrf, split_retrievers
from rankscope.retrieval.registry import SpecError, make_retriever
from rankscope.retrieval.storage import IndexFormatError


def _run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def _scores(run: pd.DataFrame, query: str = "q1") -> dict[str, float]:
    part = run[run["query_id"] == query]
    return dict(zip(part["doc_id"], part["score"]))


RUN_A = _run([("q1", "d1", 10.0), ("q1", "d2", 5.0), ("q1", "d3", 0.0)])
RUN_B = _run([("q1", "d2", 4.0), ("q1", "d4", 2.0)])


def test_rrf_matches_the_definition() -> None:
    fused = rrf([RUN_A, RUN_B], k=60)
    expected = {"d1": 1 / 61, "d2": 1 / 62 + 1 / 61, "d3": 1 / 63, "d4": 1 / 62}
    assert _scores(fused) == pytest.approx(expected, abs=1e-15)
    assert list(fused["doc_id"]) == ["d2", "d1", "d4", "d3"]  # d4 (1/62) beats d3 (1/63)
    assert list(fused["rank"]) == [1, 2, 3, 4]


def test_rrf_ranks_come_from_scores_with_the_tie_rule_not_the_rank_column() -> None:
    # d1 and d2 tie at 1.0: the tie rule (doc_id descending) puts d2 first, whatever "rank" says
    tied = _run([("q1", "d1", 1.0), ("q1", "d2", 1.0)]).assign(rank=[1, 2])
    fused = rrf([tied, _run([("q1", "d9", 1.0)])], k=1)
    assert _scores(fused) == pytest.approx({"d2": 1 / 2, "d1": 1 / 3, "d9": 1 / 2})


def test_equal_fused_scores_are_ordered_by_doc_id_descending() -> None:
    first = _run([("q1", "dA", 2.0), ("q1", "dB", 1.0)])
    second = _run([("q1", "dB", 2.0), ("q1", "dA", 1.0)])
    fused = rrf([first, second])
    assert fused["score"].iloc[0] == fused["score"].iloc[1]
    assert list(fused["doc_id"]) == ["dB", "dA"]


def test_combsum_minmax_matches_the_definition() -> None:
    fused = combsum([RUN_A, RUN_B], norm="minmax")
    # A: (10, 5, 0) -> (1, 0.5, 0); B: (4, 2) -> (1, 0); a missing document adds 0
    assert _scores(fused) == pytest.approx({"d1": 1.0, "d2": 1.5, "d3": 0.0, "d4": 0.0}, abs=1e-15)
    assert list(fused["doc_id"]) == ["d2", "d1", "d4", "d3"]  # d3/d4 tie at 0: doc_id descending


def test_combsum_zscore_matches_the_definition() -> None:
    fused = combsum([RUN_A, RUN_B], norm="zscore")
    std_a = math.sqrt((25 + 0 + 25) / 3)  # population std of (10, 5, 0)
    expected = {"d1": 5 / std_a, "d2": 0.0 + 1.0, "d3": -5 / std_a, "d4": -1.0}
    assert _scores(fused) == pytest.approx(expected, abs=1e-12)


def test_weighted_fusion_matches_the_definition() -> None:
    # each run's contribution times its weight: minmax A (1, 0.5, 0) x 0.2, B (1, 0) x 0.8
    fused = combsum([RUN_A, RUN_B], norm="minmax", weights=[0.2, 0.8])
    assert _scores(fused) == pytest.approx({"d1": 0.2, "d2": 0.1 + 0.8, "d3": 0.0, "d4": 0.0}, abs=1e-15)
    fused = rrf([RUN_A, RUN_B], k=60, weights=[3.0, 1.0])
    expected = {"d1": 3 / 61, "d2": 3 / 62 + 1 / 61, "d3": 3 / 63, "d4": 1 / 62}
    assert _scores(fused) == pytest.approx(expected, abs=1e-15)
    assert list(fused["doc_id"]) == ["d2", "d1", "d3", "d4"]  # weight 3 lifts d3 (3/63) above d4 (1/62)
    # weights of 1 are the unweighted fusion, bit for bit
    pd.testing.assert_frame_equal(fuse([RUN_A, RUN_B], "combsum", weights=[1, 1]), combsum([RUN_A, RUN_B]))
    with pytest.raises(ValueError, match="2 given for 3 runs"):
        rrf([RUN_A, RUN_B, RUN_A], weights=[1, 1])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        combsum([RUN_A, RUN_B], weights=[1, -0.5])


def test_normalisation_is_per_query_and_constant_lists_give_zero_not_nan() -> None:
    run = _run([("q1", "a", 3.0), ("q1", "b", 1.0), ("q2", "a", 100.0), ("q2", "b", 100.0), ("q3", "c", 7.0)])
    for norm in ("minmax", "zscore"):
        fused = combsum([run, run], norm=norm)
        assert np.isfinite(fused["score"]).all()
        assert _scores(fused, "q2") == {"b": 0.0, "a": 0.0} and _scores(fused, "q3") == {"c": 0.0}
    assert _scores(combsum([run, run]), "q1") == pytest.approx({"a": 2.0, "b": 0.0})


def test_fusion_does_not_modify_its_inputs() -> None:
    before_a, before_b = RUN_A.copy(), RUN_B.copy()
    fuse([RUN_A, RUN_B], "combsum", norm="zscore")
    fuse([RUN_A, RUN_B], "rrf")
    pd.testing.assert_frame_equal(RUN_A, before_a)
    pd.testing.assert_frame_equal(RUN_B, before_b)


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(SchemaError, match=r"^runs\[1\]: duplicate query, document '.*', 'd2'$"):
        rrf([RUN_A, pd.concat([RUN_B, RUN_B])])
    with pytest.raises(SchemaError, match=r"runs\[0\].*missing column"):
        rrf([RUN_A.drop(columns="score")])
    with pytest.raises(ValueError, match="non-empty list"):
        rrf([])
    with pytest.raises(ValueError, match="norm must be one of"):
        combsum([RUN_A], norm="max")
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([RUN_A], "borda")
    with pytest.raises(ValueError, match=">= 0"):
        rrf([RUN_A], k=-1)


def test_retriever_specs_split_on_plus_outside_brackets() -> None:
    assert split_retrievers("bm25+w2v") == ["bm25", "w2v"]
    assert split_retrievers("[bm25:k1=0.9,b=0.4] + tfidf:variant=classic") == [
        "bm25:k1=0.9,b=0.4",
        "tfidf:variant=classic",
    ]
    assert split_retrievers("[hybrid:retrievers=[bm25]+tfidf]+w2v") == ["hybrid:retrievers=[bm25]+tfidf", "w2v"]
    for bad, problem in [
        ("bm25", "at least two"),
        ("bm25+", "empty"),
        ("[bm25+tfidf", "not closed"),
        ("bm25]+x", "unbalanced"),
    ]:
        with pytest.raises(SpecError, match=problem):
            split_retrievers(bad)


def test_hybrid_spec_builds_the_retriever_and_checks_names() -> None:
    hybrid = make_retriever("hybrid:retrievers=[bm25:k1=0.9,b=0.4]+tfidf,method=combsum,norm=zscore,depth=50")
    assert hybrid.get_params() == {
        "retrievers": "[bm25:k1=0.9,b=0.4]+tfidf",
        "method": "combsum",
        "k": 60.0,
        "norm": "zscore",
        "depth": 50,
        "weight": 0.7,
    }
    with pytest.raises(SpecError, match="unknown retriever 'nosuch'"):
        make_retriever("hybrid:retrievers=bm25+nosuch")
    with pytest.raises(ValueError, match="method must be one of"):
        make_retriever("hybrid:retrievers=bm25+tfidf,method=max")


@pytest.mark.parametrize("method", ["rrf", "combsum"])
def test_hybrid_search_is_the_fusion_of_its_parts(
    method: str, tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame
) -> None:
    hybrid = HybridRetriever(
        retrievers="[bm25:k1=0.9,b=0.4]+tfidf:variant=classic", method=method, k=10.0, norm="minmax", depth=3
    )
    hybrid.index(tiny_corpus)
    bm25 = make_retriever("bm25:k1=0.9,b=0.4").index(tiny_corpus)
    tfidf = make_retriever("tfidf:variant=classic").index(tiny_corpus)
    runs = [bm25.search(tiny_queries, k=3), tfidf.search(tiny_queries, k=3)]
    expected = fuse(runs, method, k=10.0, weights=[0.7, 1 - 0.7])  # the first retriever's default share
    pd.testing.assert_frame_equal(hybrid.search(tiny_queries, k=1000), expected)
    top2 = hybrid.search(tiny_queries, k=2)
    pd.testing.assert_frame_equal(top2, expected[expected["rank"] <= 2].reset_index(drop=True))
    q1 = expected[expected["query_id"] == "q1"]
    np.testing.assert_array_equal(hybrid.score("boundary layer flow", list(q1["doc_id"])), q1["score"].to_numpy())
    assert hybrid.score("boundary layer flow", ["d5"])[0] == 0.0  # in no sub-run: contributes nothing


def test_hybrid_weight_is_the_first_retrievers_share(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    hybrid = HybridRetriever(retrievers="bm25+tfidf+tfidf:variant=classic", depth=5).index(tiny_corpus)
    parts = [make_retriever(s).index(tiny_corpus).search(tiny_queries, k=5) for s in hybrid.retrievers.split("+")]
    # by default the first retriever takes 0.7, the other two 0.15 each
    assert hybrid.fusion_weights() == pytest.approx((0.7, 0.15, 0.15))
    pd.testing.assert_frame_equal(hybrid.search(tiny_queries), combsum(parts, "zscore", weights=[0.7, 0.15, 0.15]))
    hybrid.set_params(weight=None)  # every run counts 1
    assert hybrid.fusion_weights() is None and hybrid.effective_params()["weight"] == pytest.approx(1 / 3)
    pd.testing.assert_frame_equal(hybrid.search(tiny_queries), combsum(parts, "zscore"))
    hybrid.set_params(weight=0.4)  # 0.4 for bm25, the other two share 0.6
    assert hybrid.fusion_weights() == pytest.approx((0.4, 0.3, 0.3))
    pd.testing.assert_frame_equal(hybrid.search(tiny_queries), combsum(parts, "zscore", weights=[0.4, 0.3, 0.3]))
    hybrid.set_params(method="rrf", weight=1.0)  # only bm25 counts: its ranking first, the rest at score 0
    fused = hybrid.search(tiny_queries)
    bm25 = parts[0]
    for query in bm25["query_id"].unique():
        top = fused[fused["query_id"] == query].head(int((bm25["query_id"] == query).sum()))
        assert list(top["doc_id"]) == list(bm25.loc[bm25["query_id"] == query, "doc_id"])
    with pytest.raises(SpecError, match=r"weight=1.5 is not allowed; weight must be a float in \[0, 1\] or None"):
        make_retriever("hybrid:weight=1.5")


def test_hybrid_changing_its_parts_needs_a_new_index(tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame) -> None:
    hybrid = HybridRetriever(retrievers="bm25+tfidf", depth=5).index(tiny_corpus)
    hybrid.set_params(method="rrf", k=1.0)  # fusion settings apply to the fitted parts at once
    parts = [make_retriever(spec).index(tiny_corpus).search(tiny_queries, k=5) for spec in ("bm25", "tfidf")]
    pd.testing.assert_frame_equal(hybrid.search(tiny_queries), rrf(parts, k=1.0, weights=[0.7, 0.3]))
    hybrid.set_params(retrievers="bm25+tfidf:variant=classic")
    with pytest.raises(NotFittedError):
        hybrid.search(tiny_queries)


def test_hybrid_load_refuses_sub_indexes_that_do_not_match_its_spec(tiny_corpus: pd.DataFrame, tmp_path: Path) -> None:
    HybridRetriever(retrievers="bm25+tfidf").index(tiny_corpus).save(tmp_path / "index")
    meta_path = tmp_path / "index" / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["params"]["retrievers"] = "tfidf+bm25"
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=r"sub-indexes hold \['bm25', 'tfidf'\], params say \['tfidf', 'bm25'\]"):
        HybridRetriever.load(tmp_path / "index")
