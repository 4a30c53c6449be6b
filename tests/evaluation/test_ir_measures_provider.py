"""rankscope as an ir_measures provider (evaluation/ir_measures_provider.py): on CISI runs of BM25 and
TF-IDF (one with its scores rounded, so ties decide ranks), every measure it provides equals pytrec_eval's
provider through ir_measures, per query and aggregated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankscope as rs
from tests.needs import needs

ir_measures = pytest.importorskip("ir_measures")
from rankscope.evaluation.ir_measures_provider import (  # noqa: E402  (after the skips)
    RankscopeEvaluator,
    first_in_default_pipeline,
    provider,
)

pytestmark = needs("pytrec_eval")

MEASURES = (
    "AP AP@100 P@10 P(rel=2)@10 R@100 R(rel=2)@1000 RR RR(rel=2) nDCG nDCG@10 nDCG(gains={0:0,1:1,2:5})@20 "
    "Rprec Bpref infAP Success@10 SetP SetR SetF IPrec@0.5 NumRet NumRet(rel=1) NumRel"
)


@pytest.fixture(scope="module")
def cisi(data_dir: Path) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """CISI's qrels made graded (every third judgment 2) and two runs, one with ties; scores exact in float32,
    as pytrec_eval reads them (docs/metrics.md)."""
    data = rs.load_dataset(data_dir / "cisi")
    qrels = data.qrels.assign(relevance=[1 + (i % 3 == 0) for i in range(len(data.qrels))])
    bm25 = rs.make_retriever("bm25").index(data.corpus).search(data.queries, k=1000)
    bm25["score"] = bm25["score"].astype(np.float32).astype(np.float64)
    tfidf = rs.make_retriever("tfidf").index(data.corpus).search(data.queries, k=200)
    tied = tfidf.assign(score=tfidf["score"].round(2))
    assert tied.duplicated(["query_id", "score"]).sum() > 1000  # ties decide many ranks
    return qrels, {"bm25": bm25, "tfidf-tied": tied}


def test_every_provided_measure_equals_pytrec_eval_per_query(cisi: tuple[pd.DataFrame, dict]) -> None:
    qrels, runs = cisi
    measures = [ir_measures.parse_measure(name) for name in MEASURES.split()]
    assert all(provider.supports(m) for m in measures)
    for name, run in runs.items():
        ours = {(m.query_id, str(m.measure)): m.value for m in provider.iter_calc(measures, qrels, run)}
        theirs = {
            (m.query_id, str(m.measure)): m.value for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)
        }
        assert ours.keys() == theirs.keys(), name
        assert all(ours[key] == pytest.approx(theirs[key], abs=1e-12) for key in theirs), name
        aggregate = provider.calc_aggregate(measures, qrels, run)
        expected = ir_measures.pytrec_eval.calc_aggregate(measures, qrels, run)
        assert aggregate == pytest.approx(expected, abs=1e-12), name


def test_rr_and_judged_at_k_equal_the_providers_ir_measures_picks_for_them(cisi: tuple[pd.DataFrame, dict]) -> None:
    """pytrec_eval has neither: ir_measures' msmarco and judged providers compute them. They do not break
    ties by trec_eval's rule, so they agree on the run without ties and not on the tied one."""
    qrels, runs = cisi
    measures = [ir_measures.parse_measure(name) for name in ("RR@10", "RR(rel=2)@10", "Judged@10", "Judged@100")]
    for name, run in runs.items():
        ours = {(m.query_id, str(m.measure)): m.value for m in provider.iter_calc(measures, qrels, run)}
        theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
        assert (ours == pytest.approx(theirs, abs=1e-12)) == (name == "bm25"), name


def test_it_is_registered_and_refuses_what_it_would_compute_otherwise() -> None:
    assert ir_measures.providers.registry["rankscope"] is provider
    for name in ("ERR@10", "nDCG(dcg='exp-log2')@10", "NumQ", "SetP(relative=True)", "P(judged_only=True)@10"):
        assert not provider.supports(ir_measures.parse_measure(name)), name


def test_first_in_the_default_pipeline_inside_the_block_only(cisi: tuple[pd.DataFrame, dict]) -> None:
    qrels, runs = cisi
    measures = [ir_measures.parse_measure(name) for name in ("AP", "nDCG@10", "ERR@10")]
    before = list(ir_measures.DefaultPipeline.providers)
    outside = ir_measures.calc_aggregate(measures[:2], qrels, runs["bm25"])
    with first_in_default_pipeline():
        assert isinstance(ir_measures.evaluator(measures[:2], qrels), RankscopeEvaluator)
        inside = ir_measures.calc_aggregate(measures[:2], qrels, runs["bm25"])
    assert ir_measures.DefaultPipeline.providers == before
    assert inside == pytest.approx(outside, abs=1e-12)
