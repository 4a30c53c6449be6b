"""Framework retrievers over a collection, built offline (no model, no network), for the adapter tests and
docs/frameworks.md: LangChain (in-memory vector store with a deterministic embedding; BM25), LlamaIndex
(a vector index over chunks with a hashing embedding), Haystack (in-memory BM25), PyTerrier (a transformer).

Each builder imports its framework inside, so a test module skips cleanly without it."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

from rankscope.corpora.dataset import Dataset

DIMENSIONS = 64


def hashed_vector(text: str) -> list[float]:
    """A bag of words hashed into 64 dimensions, unit length: an embedding with no model."""
    vector = np.zeros(DIMENSIONS)
    for word in text.lower().split():
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    norm = np.linalg.norm(vector)
    return list(vector / norm) if norm else list(vector)


def documents(dataset: Dataset) -> list[tuple[str, str]]:
    return list(zip(dataset.corpus["doc_id"].astype(str), dataset.corpus["text"].astype(str)))


def langchain_vectors(dataset: Dataset, k: int) -> Any:
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=DIMENSIONS))
    store.add_documents([Document(page_content=text, id=doc_id) for doc_id, text in documents(dataset)])
    return store.as_retriever(search_kwargs={"k": k})


def langchain_bm25(dataset: Dataset, k: int) -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    docs = [Document(page_content=text, metadata={"doc_id": doc_id}) for doc_id, text in documents(dataset)]
    return BM25Retriever.from_documents(docs, k=k, preprocess_func=lambda text: text.lower().split())


def llamaindex_chunks(dataset: Dataset, k: int, words: int = 80) -> Any:
    """A vector index over chunks of ``words`` words, each a node whose source is its document (ref_doc_id)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    class HashedEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return hashed_vector(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return hashed_vector(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return hashed_vector(query)

    nodes = []
    for doc_id, text in documents(dataset):
        split = text.split()
        for start in range(0, max(len(split), 1), words):  # several chunks per long document: MaxP at work
            source = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc_id)}
            nodes.append(TextNode(text=" ".join(split[start : start + words]), relationships=source))
    index = VectorStoreIndex(nodes, embed_model=HashedEmbedding())
    return index.as_retriever(similarity_top_k=k)


def haystack_bm25(dataset: Dataset) -> Any:
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=doc_id, content=text) for doc_id, text in documents(dataset)])
    return InMemoryBM25Retriever(store)


def pyterrier_overlap(dataset: Dataset, k: int) -> Any:
    """A PyTerrier transformer (no Java): documents scored by how many distinct query words they hold."""
    import pyterrier as pt

    words = {doc_id: set(text.lower().split()) for doc_id, text in documents(dataset)}

    def rank(topics: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for qid, query in zip(topics["qid"], topics["query"]):
            asked = set(query.lower().split())
            scored = sorted(((len(asked & held), doc) for doc, held in words.items()), reverse=True)[:k]
            rows += [(qid, query, doc, float(score)) for score, doc in scored if score]
        return pd.DataFrame(rows, columns=["qid", "query", "docno", "score"])

    return pt.apply.generic(rank)


def misbehaving(framework: str, answer: Any, calls: list[str] | None = None) -> Any:
    """A retriever of ``framework`` (langchain, llamaindex, haystack) that answers every query with
    ``answer``, or raises it when it is an exception, on its own path and its asynchronous one; each
    query asked is appended to ``calls``. The asynchronous path waits 10 ms first, except for the
    first query, so a failure there finds the others still asked."""
    import asyncio

    seen = [] if calls is None else calls

    def give(query: str) -> Any:
        seen.append(query)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def give_later(query: str) -> Any:
        if seen:
            await asyncio.sleep(0.01)
        return give(query)

    if framework == "langchain":
        from langchain_core.retrievers import BaseRetriever

        class LangChainRetriever(BaseRetriever):
            def _get_relevant_documents(self, query: str, *, run_manager: Any) -> Any:
                return give(query)

            async def _aget_relevant_documents(self, query: str, *, run_manager: Any) -> Any:
                return await give_later(query)

        return LangChainRetriever()
    if framework == "llamaindex":
        from llama_index.core.retrievers import BaseRetriever as LlamaBase

        class LlamaRetriever(LlamaBase):
            def _retrieve(self, query_bundle: Any) -> Any:
                return give(query_bundle.query_str)

            async def _aretrieve(self, query_bundle: Any) -> Any:
                return await give_later(query_bundle.query_str)

        return LlamaRetriever()
    from haystack import Document, component

    @component
    class HaystackRetriever:
        @component.output_types(documents=list[Document])
        def run(self, query: str) -> Any:
            return give(query)

        @component.output_types(documents=list[Document])
        async def run_async(self, query: str) -> Any:
            return await give_later(query)

    return HaystackRetriever()
