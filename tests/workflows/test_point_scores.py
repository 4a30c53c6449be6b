"""tune's per-point scoring: BM25 and TF-IDF hand their runs to evaluation as integer codes, and the
queries are analysed once for every point; the numbers are those of the run table, exactly."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.corpora.trec import CodedTable
from rankscope.evaluation import evaluate
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.common.fanout import coded_qrels, per_query_score
from tests.workflows.tiny_collection import small_dataset


def table_scores(retriever, data, metric: str, depth: int) -> pd.Series:
    return evaluate(data.qrels, retriever.search(data.queries, k=depth), [metric]).wide()[metric]


@pytest.mark.parametrize("spec", ["bm25", "tfidf", "bm25:prf=rm3,fb_docs=3,fb_terms=5", "bm25:k1=0.4,b=0.2"])
@pytest.mark.parametrize(("metric", "depth"), [("ndcg@10", 10), ("map", 1000), ("recall@5", 5)])
def test_coded_scores_equal_the_run_tables(spec: str, metric: str, depth: int) -> None:
    data = small_dataset()
    retriever = make_retriever(spec).index(data.corpus)
    expected = table_scores(retriever, data, metric, depth)
    assert expected.std() > 0  # the queries differ: a mix-up of rows would show
    for qrels in (data.qrels, coded_qrels(data.qrels)):
        got = per_query_score(retriever, data.queries, qrels, metric, depth)
        pd.testing.assert_series_equal(got, expected, check_exact=True)


def test_the_coded_run_holds_the_run_tables_rows() -> None:
    data = small_dataset()
    queries = pd.concat([data.queries, pd.DataFrame({"query_id": ["none"], "text": ["zzzz"]})], ignore_index=True)
    retriever = make_retriever("bm25").index(data.corpus)
    coded = retriever.search_coded(queries, k=7)
    assert isinstance(coded, CodedTable)
    run = retriever.search(queries, k=7)
    assert "none" not in set(coded.query_names)  # a query matching nothing has no rows in either
    pd.testing.assert_frame_equal(coded.frame(), run[["query_id", "doc_id", "score"]], check_dtype=False)


def test_queries_analysed_once_are_never_mixed_up() -> None:
    data = small_dataset()
    retriever = make_retriever("bm25").index(data.corpus)
    first, second = data.queries.iloc[:6], data.queries.iloc[6:]
    runs = [retriever.search(q, k=5) for q in (first, second, first)]
    fresh = make_retriever("bm25").index(data.corpus)
    pd.testing.assert_frame_equal(runs[0], runs[2])
    pd.testing.assert_frame_equal(runs[1], fresh.search(second, k=5))
    retriever.set_params(k1=0.3)  # re-weighted: the kept query counts still serve, the scores change
    assert not retriever.search(first, k=5)["score"].equals(runs[0]["score"])
    pd.testing.assert_frame_equal(
        retriever.search(first, k=5), make_retriever("bm25:k1=0.3").index(data.corpus).search(first, k=5)
    )
    other = data.corpus.assign(text=data.corpus["text"].str.split().str[::-1].str.join(" ") + " vortex vortex")
    retriever.index(other)  # a new index: new vocabulary, the kept counts are not reused
    pd.testing.assert_frame_equal(
        retriever.search(first, k=5), make_retriever("bm25:k1=0.3").index(other).search(first, k=5)
    )
