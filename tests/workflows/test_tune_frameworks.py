"""tune over a framework retriever's own parameters (rankscope/workflows/tune/framework_params.py), with the
real libraries: every grid point's per-query values equal those of a run written by hand from a retriever
built with that point's parameters, cross-validated by tune's own functions; the object given is unchanged."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.needs import needs

sys.path.insert(0, str(Path(__file__).parent))
from tiny_collection import small_dataset  # noqa: E402

import rankscope as rs  # noqa: E402
from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.evaluation import evaluate  # noqa: E402
from rankscope.workflows.options import Execution  # noqa: E402
from rankscope.workflows.tune.crossval import fold_seeds, repeated_cross_validate  # noqa: E402
from rankscope.workflows.tune.framework_params import applied  # noqa: E402
from rankscope.workflows.tune.gain import gain_test  # noqa: E402

pytestmark = needs("langchain_community", "llama_index.core", "haystack")


DATA = small_dataset()


def _documents() -> list[Any]:
    from langchain_core.documents import Document

    return [
        Document(page_content=t, metadata={"doc_id": d}) for d, t in zip(DATA.corpus["doc_id"], DATA.corpus["text"])
    ]


def _bm25(k: int, **bm25_params: float) -> Any:
    from langchain_community.retrievers import BM25Retriever

    return BM25Retriever.from_documents(_documents(), k=k, bm25_params=bm25_params or None)


def _handwritten_per_query(retriever: Any, metric: str) -> pd.Series:
    """The retriever asked each judged query by hand, its order scored 1/rank, evaluated."""
    rows = []
    for query_id, text in zip(DATA.queries["query_id"], DATA.queries["text"]):
        if query_id in set(DATA.qrels["query_id"]):
            docs = retriever.invoke(text)
            rows += [(query_id, doc.metadata["doc_id"], 1.0 / rank) for rank, doc in enumerate(docs, start=1)]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return evaluate(DATA.qrels, run, [metric]).wide()[metric]


def test_a_grid_over_langchain_bm25s_k1_and_b_equals_tuning_runs_written_by_hand() -> None:
    retriever = _bm25(20)
    vectorizer = retriever.vectorizer
    grid = {"vectorizer.k1": [0.5, 1.2, 2.0], "vectorizer.b": [0.3, 0.9]}
    result = rs.tune(
        DATA,
        rs.adapt(retriever, id_field="doc_id"),
        params=grid,
        metric="ndcg@10",
        folds=3,
        execution=Execution(seed=2),
    )
    assert result.grid[list(grid)].values.tolist() == [
        [k1, b] for k1 in grid["vectorizer.k1"] for b in grid["vectorizer.b"]
    ]
    by_hand = pd.DataFrame(
        {
            point: _handwritten_per_query(_bm25(20, k1=k1, b=b), "ndcg@10")
            for point, k1, b, _ in result.grid.itertuples()
        }
    )
    pd.testing.assert_frame_equal(result.per_query, by_hand, check_names=False, check_index_type=False)
    assert len(set(by_hand.mean().round(12))) > 1  # the parameters change the ranking
    at_defaults = _handwritten_per_query(_bm25(20), "ndcg@10")  # rank_bm25's own k1=1.5, b=0.75
    assert result.default == {"vectorizer.k1": 1.5, "vectorizer.b": 0.75, "score": pytest.approx(at_defaults.mean())}
    repeated = repeated_cross_validate(by_hand, 3, fold_seeds(2, 5))
    assert result.repeated.means.tolist() == repeated.means.tolist()
    gain = gain_test(repeated.held_out, at_defaults, 2, seed_gains=[m - at_defaults.mean() for m in repeated.means])
    assert result.gain == gain
    assert retriever.vectorizer is vectorizer and (vectorizer.k1, vectorizer.b) == (1.5, 0.75)  # put back


def test_the_best_k_of_a_langchain_retriever_is_the_deepest_for_recall() -> None:
    retriever = _bm25(4)
    result = rs.tune(DATA, rs.adapt(retriever, id_field="doc_id"), params={"k": "1,4,20"}, metric="recall@20", folds=3)
    assert result.best["k"] == 20 and result.default["k"] == 4
    assert result.grid.set_index("k")["mean"].is_monotonic_increasing
    assert retriever.k == 4
    assert not any("change nothing" in note for note in result.notes())


def test_a_parameter_read_only_when_the_index_is_built_is_said_to_change_nothing() -> None:
    """rank_bm25 uses epsilon for the idf it computes when built: setting it later changes no ranking."""
    result = rs.tune(DATA, rs.adapt(_bm25(10), id_field="doc_id"), params={"vectorizer.epsilon": [0.1, 0.5]}, folds=3)
    assert result.grid["mean"].nunique() == 1
    assert "same ndcg@10: the tuned parameters (vectorizer.epsilon) change nothing" in result.to_text()


@pytest.mark.slow
def test_llamaindex_similarity_top_k_and_a_haystack_stores_bm25_parameters() -> None:
    """A property with a setter (LlamaIndex), and a key its dictionary lacks (Haystack's store: its default)."""
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.schema import TextNode

    nodes = [TextNode(text=t, id_=d) for d, t in zip(DATA.corpus["doc_id"], DATA.corpus["text"])]
    llama = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8)).as_retriever(similarity_top_k=2)
    found = rs.tune(DATA, rs.adapt(llama, id_field="node_id"), params={"similarity_top_k": [2, 40]}, metric="recall@40")
    assert found.best["similarity_top_k"] == 40 and found.best["score"] == 1.0  # every document: all relevant found
    assert llama.similarity_top_k == 2

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=d, content=t) for d, t in zip(DATA.corpus["doc_id"], DATA.corpus["text"])])
    haystack = InMemoryBM25Retriever(store)
    tuned = rs.tune(DATA, haystack, params={"document_store.bm25_parameters.k1": [0.3, 3.0]}, folds=3)
    assert tuned.default["document_store.bm25_parameters.k1"] is None  # the store's own default (1.5)
    at_k1 = []
    for k1 in (0.3, 3.0):
        other = InMemoryDocumentStore(bm25_parameters={"k1": k1})
        other.write_documents(store.filter_documents())
        at_k1.append(rs.compare(DATA, {"bm25": "bm25", "hs": InMemoryBM25Retriever(other)}, ["ndcg@10"], depth=10))
    means = [r.summary.loc["hs", "ndcg@10"] for r in at_k1]
    np.testing.assert_allclose(tuned.grid["mean"].to_numpy(), means, atol=1e-12)
    assert store.bm25_parameters == {}


def test_parameters_are_put_back_after_an_error_and_bad_names_fail_in_one_line() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    vectors = InMemoryVectorStore(DeterministicFakeEmbedding(size=8)).as_retriever(search_kwargs={"k": 4})
    search_kwargs = vectors.search_kwargs
    with applied(vectors, {"search_kwargs.k": 7}):  # a dictionary on the path: replaced by a changed copy
        assert vectors.search_kwargs == {"k": 7} and search_kwargs == {"k": 4}
    assert vectors.search_kwargs is search_kwargs
    retriever = _bm25(4)
    with pytest.raises(ZeroDivisionError), applied(retriever, {"k": 9, "vectorizer.k1": 0.1}):
        assert (retriever.k, retriever.vectorizer.k1) == (9, 0.1)
        _ = 1 / 0
    assert (retriever.k, retriever.vectorizer.k1) == (4, 1.5)
    adapted = rs.adapt(retriever, id_field="doc_id")
    with pytest.raises(RankscopeError) as excinfo:
        rs.tune(DATA, adapted, params={"vectorizer.k3": [1.0]})
    message = str(excinfo.value)
    assert "\n" not in message and "BM25Retriever has no parameter 'vectorizer.k3'" in message and "k1" in message
    with pytest.raises(RankscopeError, match="needs params naming its own parameters"):
        rs.tune(DATA, adapted)
    with pytest.raises(RankscopeError, match="asked in this process"):
        rs.tune(DATA, adapted, params={"k": [2]}, execution=Execution(scheduler="local:1"))
