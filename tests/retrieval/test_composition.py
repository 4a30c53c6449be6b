"""``a >> b`` and ``a + b``: Python shortcuts for the rerank and hybrid specs, which stay the serialisation."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.retrieval.base import Retriever
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.fusion import HybridRetriever
from rankscope.retrieval.params import SpecError
from rankscope.retrieval.registry import make_retriever
from rankscope.retrieval.rerank import RerankRetriever
from rankscope.retrieval.tfidf import TfidfRetriever


def _run(retriever: Retriever, corpus: pd.DataFrame, queries: pd.DataFrame) -> pd.DataFrame:
    return retriever.index(corpus).search(queries, k=10)


def test_rshift_is_the_rerank_spec_and_searches_the_same(tiny_corpus, tiny_queries) -> None:
    composed = BM25(k1=0.9, b=0.4) >> TfidfRetriever(variant="classic")
    assert isinstance(composed, RerankRetriever)
    assert composed.first == "[" + BM25(k1=0.9, b=0.4).spec() + "]"
    assert composed.by == "[tfidf:variant=classic,analyzer=english]"
    from_spec = make_retriever("rerank:first=[bm25:k1=0.9,b=0.4],by=[tfidf:variant=classic]")
    assert make_retriever(composed.spec()).get_params() == composed.get_params()  # the spec round-trips
    assert {k: v for k, v in composed.get_params().items() if k not in ("first", "by")} == {
        k: v for k, v in from_spec.get_params().items() if k not in ("first", "by")
    }
    run = _run(composed, tiny_corpus, tiny_queries)
    pd.testing.assert_frame_equal(run, _run(from_spec, tiny_corpus, tiny_queries))
    first = _run(BM25(k1=0.9, b=0.4), tiny_corpus, tiny_queries)
    assert not run.empty and run["score"].tolist() != first["score"].tolist()  # reranked: tfidf's scores


def test_add_is_the_default_fusion_and_flattens_a_chain(tiny_corpus, tiny_queries) -> None:
    pair = BM25() + TfidfRetriever()
    assert isinstance(pair, HybridRetriever)
    from_spec = make_retriever("hybrid:retrievers=bm25+tfidf")
    assert {k: v for k, v in pair.get_params().items() if k != "retrievers"} == {
        k: v for k, v in from_spec.get_params().items() if k != "retrievers"
    }
    pd.testing.assert_frame_equal(_run(pair, tiny_corpus, tiny_queries), _run(from_spec, tiny_corpus, tiny_queries))
    assert make_retriever(pair.spec()).get_params() == pair.get_params()
    triple = BM25() + TfidfRetriever() + BM25(variant="bm25+")
    assert triple.retrievers.count("+[") == 2 and "[hybrid" not in triple.retrievers  # one fusion of three
    assert len(make_retriever(triple.spec()).retrievers.split("+[")) == 3


def test_a_tuned_fusion_is_kept_whole() -> None:
    tuned = make_retriever("hybrid:retrievers=bm25+tfidf,method=rrf")
    nested = tuned + BM25()
    assert (
        nested.retrievers.startswith("[hybrid:") and make_retriever(nested.spec()).get_params() == nested.get_params()
    )


def test_only_retrievers_compose_and_a_spec_must_hold_every_parameter() -> None:
    from rankscope.retrieval.analysis import Analyzer

    with pytest.raises(TypeError):
        BM25() >> "tfidf"  # type: ignore[operator]
    with pytest.raises(TypeError):
        BM25() + 1  # type: ignore[operator]
    with pytest.raises(SpecError, match="a spec cannot hold"):
        BM25(analyzer=Analyzer()) >> TfidfRetriever()
