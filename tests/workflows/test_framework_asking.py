"""How framework retrievers are asked (rankscope/workflows/common/frameworks.py), with the real libraries:
concurrently through their asynchronous APIs (bounded, answers in the queries' order, equal to asking one
after another), and FirstP over chunks whose place in their document the framework's splitter recorded."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import frameworks_cisi as built  # noqa: E402
from tiny_collection import small_dataset  # noqa: E402

from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.corpora.schema import string_ids
from rankscope.workflows.common.frameworks import FrameworkError, adapt, framework_run  # noqa: E402
from tests.needs import needs

pytestmark = needs("langchain_community", "langchain_text_splitters", "llama_index.core", "haystack", "pyterrier")

DATA = small_dataset()


def _run(system: Any) -> pd.DataFrame:
    run, _ = framework_run("s", system, DATA, 20)
    return run


class InFlight:
    """Counts calls running at once; each waits a time set by its query, so later queries can finish first."""

    def __init__(self) -> None:
        self.now = self.most = self.calls = 0

    async def wait(self, text: str) -> None:
        self.now += 1
        self.calls += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.001 * (hash(text) % 7))
        self.now -= 1


def test_langchain_abatch_is_bounded_keeps_the_queries_order_and_equals_invoking_one_by_one() -> None:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    bm25 = built.langchain_bm25(DATA, 20)
    seen = InFlight()

    class Slow(BaseRetriever):  # a retriever with its own async path, as a network client has
        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return bm25.invoke(query)

        async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
        ) -> list[Document]:
            await seen.wait(query)
            return bm25.invoke(query)

    one_by_one = _run(adapt(Slow(), id_field="doc_id", concurrency=1))
    assert seen.calls == 0  # invoke, not the async path
    at_once = _run(adapt(Slow(), id_field="doc_id", concurrency=3))
    assert seen.calls == DATA.qrels["query_id"].nunique() and seen.most == 3
    pd.testing.assert_frame_equal(at_once, one_by_one)
    pd.testing.assert_frame_equal(_run(adapt(bm25, id_field="doc_id", concurrency=5)), one_by_one)


def test_llamaindex_aretrieve_and_haystack_run_async_equal_the_sequential_path() -> None:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle

    llama = built.llamaindex_chunks(DATA, 30, words=5)
    seen = InFlight()

    class Slow(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return llama.retrieve(query_bundle.query_str)

        async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            await seen.wait(query_bundle.query_str)
            return await llama.aretrieve(query_bundle.query_str)

    sequential = _run(adapt(Slow(), concurrency=1))
    assert seen.calls == 0
    concurrent = _run(adapt(Slow(), concurrency=4))
    assert seen.most == 4
    pd.testing.assert_frame_equal(concurrent, sequential)
    pd.testing.assert_frame_equal(_run(adapt(llama, concurrency=6)), sequential)

    haystack = built.haystack_bm25(DATA)
    pd.testing.assert_frame_equal(_run(adapt(haystack, concurrency=6)), _run(adapt(haystack, concurrency=1)))


def test_concurrent_asking_works_inside_a_running_event_loop() -> None:
    """A notebook runs an event loop: the queries are then asked on a loop of a thread of their own."""
    haystack = built.haystack_bm25(DATA)
    expected = _run(adapt(haystack, concurrency=1))

    async def in_a_notebook() -> pd.DataFrame:
        return _run(adapt(haystack, concurrency=4))

    pd.testing.assert_frame_equal(asyncio.run(in_a_notebook()), expected)


def _chunked_bm25(add_start_index: bool) -> tuple[Any, list[Any]]:
    """LangChain's BM25 over chunks of 40 characters cut by its own splitter (their start in metadata)."""
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    documents = [Document(page_content=t, metadata={"doc_id": d}) for d, t in built.documents(DATA)]
    splitter = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0, add_start_index=add_start_index)
    chunks = splitter.split_documents(documents)
    return BM25Retriever.from_documents(chunks, k=60, preprocess_func=lambda t: t.lower().split()), chunks


def test_firstp_scores_a_document_by_its_chunk_first_in_the_document() -> None:
    retriever, chunks = _chunked_bm25(add_start_index=True)
    assert len(chunks) > len(DATA.corpus)
    rows = []
    judged = DATA.queries[DATA.queries["query_id"].isin(DATA.qrels["query_id"])]
    for query_id, text in zip(judged["query_id"], judged["text"]):
        first: dict[str, tuple[int, float]] = {}  # document -> (start of its earliest chunk found, that chunk's score)
        for rank, doc in enumerate(retriever.invoke(text), start=1):
            start, doc_id = doc.metadata["start_index"], doc.metadata["doc_id"]
            if doc_id not in first or start < first[doc_id][0]:
                first[doc_id] = (start, 1.0 / rank)
        rows += [(query_id, doc_id, score) for doc_id, (_, score) in first.items()]
    expected = string_ids(
        pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    )  # ids as rankscope's tables hold them
    firstp = _run(adapt(retriever, id_field="doc_id", aggregate="firstp"))
    key = ["query_id", "doc_id"]
    pd.testing.assert_frame_equal(
        firstp.sort_values(key).reset_index(drop=True), expected.sort_values(key).reset_index(drop=True)
    )
    maxp = _run(adapt(retriever, id_field="doc_id"))
    assert (
        not maxp.sort_values(key)["score"]
        .reset_index(drop=True)
        .equals(firstp.sort_values(key)["score"].reset_index(drop=True))
    )  # the two rules differ on these chunks
    run, notes = framework_run("lc", adapt(retriever, id_field="doc_id", aggregate="firstp"), DATA, 20)
    assert any("by firstp (the score of its chunk first in the document, by 'start_index')" in n for n in notes)


def test_firstp_without_positions_fails_in_one_line() -> None:
    retriever, _ = _chunked_bm25(add_start_index=False)
    with pytest.raises(FrameworkError) as excinfo:
        _run(adapt(retriever, id_field="doc_id", aggregate="firstp"))
    message = str(excinfo.value)
    assert "\n" not in message
    assert message.startswith("system 's': query ") and "has no position in 'start_index' (" in message
    assert "position_field=" in message
    with pytest.raises(RankscopeError, match="firstp' needs each chunk's position"):
        adapt(built.pyterrier_overlap(DATA, 3), aggregate="firstp")
    with pytest.raises(RankscopeError, match="unknown aggregation 'lastp'"):
        adapt(retriever, aggregate="lastp")


LIST = "not a list of Documents"
WRONG_ANSWERS = {  # what a retriever gives -> how the error ends, per framework
    "None": (None, {"langchain": f"gave None, {LIST}", "haystack": "gave None without 'documents'"}),
    "a string": (
        "d01",
        {"langchain": f"gave a str ('d01'), {LIST}", "haystack": "gave a str ('d01') without 'documents'"},
    ),
    "a dict": ({"documents": "d01"}, {"langchain": f"gave a dict, {LIST}", "haystack": f"gave a str ('d01'), {LIST}"}),
    "a list of strings": (
        ["d01"],
        {"langchain": "gave a str ('d01') as result 1, not a Document", "haystack": "gave a list without 'documents'"},
    ),
    "a raise": (ConnectionError("backend down\nretry later"), {}),
}
METHODS = {
    "langchain": ("invoke", "ainvoke"),
    "llamaindex": ("retrieve", "aretrieve"),
    "haystack": ("run", "run_async"),
}


@pytest.mark.parametrize("concurrency", [1, 3])
@pytest.mark.parametrize("framework", list(METHODS))
@pytest.mark.parametrize("wrong", list(WRONG_ANSWERS))
def test_a_retriever_that_raises_or_gives_no_results_fails_in_one_line_naming_system_and_query(
    wrong: str, framework: str, concurrency: int
) -> None:
    """Before: TypeError/AttributeError tracebacks for None, a string or a dict; a raised error came out
    as it was, naming neither the system nor the query."""
    import rankscope as rs

    answer, endings = WRONG_ANSWERS[wrong]
    retriever = built.misbehaving(framework, answer)
    with pytest.raises(FrameworkError) as excinfo:
        rs.compare(DATA, {"bm25": "bm25", "mine": adapt(retriever, concurrency=concurrency)}, ["ndcg@10"])
    message = str(excinfo.value)
    method = METHODS[framework][concurrency > 1]
    label = {"langchain": "LangChain", "llamaindex": "LlamaIndex", "haystack": "Haystack"}[framework]
    assert message.startswith(f"system 'mine': query 'q0': {label} {type(retriever).__name__}.{method}(query")
    assert "\n" not in message
    if wrong == "a raise":
        assert message.endswith(" raised ConnectionError: backend down retry later")
    elif framework in endings:
        assert message.endswith(endings[framework])
    else:  # LlamaIndex's retrieve reads what _retrieve gave itself: its error, named
        assert " raised TypeError: " in message or " raised AttributeError: " in message


def test_a_failing_concurrent_retriever_stops_the_run_and_leaves_no_coroutine_unawaited() -> None:
    """Before: LangChain's abatch left the other queries' coroutines never awaited (a RuntimeWarning when
    collected) and every query was asked."""
    import gc
    import warnings

    calls: list[str] = []
    retriever = built.misbehaving("langchain", ConnectionError("backend down"), calls)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(FrameworkError, match="query 'q0': LangChain"):
            _run(adapt(retriever, concurrency=2))
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
    assert calls[0] == DATA.queries["text"].iloc[0]  # q0
    assert len(calls) <= 4 < len(DATA.queries)  # the queries waiting their turn: not asked
