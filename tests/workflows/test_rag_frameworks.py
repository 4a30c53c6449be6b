"""Framework retrievers in rag (rankscope/workflows/common/framework_chunks.py), with the real libraries: a
LangChain BM25 retriever over chunks cut by LangChain's splitter and a LlamaIndex vector retriever over
chunk nodes, scored at rag's budgets beside rankscope's chunkings, equal to the budgets walked by hand over
their answers; their MaxP document numbers equal compare's of the same retrievers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import frameworks_cisi as built  # noqa: E402
from tiny_collection import small_dataset  # noqa: E402

import rankscope as rs  # noqa: E402
from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.corpora.schema import string_dtype  # noqa: E402
from rankscope.workflows.common.frameworks import FrameworkError, adapt  # noqa: E402
from tests.needs import needs

pytestmark = needs("langchain_community", "langchain_text_splitters", "llama_index.core", "pyterrier")

DATA = small_dataset()
BUDGETS = [5, 10, 20, 50]


def _langchain_chunks() -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    documents = [Document(page_content=t, metadata={"doc_id": d}) for d, t in built.documents(DATA)]
    chunks = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0).split_documents(documents)
    return BM25Retriever.from_documents(chunks, k=30, preprocess_func=lambda t: t.lower().split())


def _langchain_hits(retriever: Any, text: str) -> list[tuple[str, str, float | None]]:
    return [(doc.metadata["doc_id"], doc.page_content, None) for doc in retriever.invoke(text)]


def _llamaindex_hits(retriever: Any, text: str) -> list[tuple[str, str, float | None]]:
    return [(hit.node.ref_doc_id, hit.node.text, hit.score) for hit in retriever.retrieve(text)]


def budgets_by_hand(retriever: Any, hits: Any) -> pd.DataFrame:
    """hit@B and recall@B per judged query: the answers' chunks (a chunk: a distinct document and text,
    numbered DOC#n as first met) ranked by score (1/rank without one), then id descending; the context of
    B tokens the leading chunks whose whitespace words add up to at most B."""
    relevant = DATA.qrels[DATA.qrels["relevance"] > 0].groupby("query_id")["doc_id"].apply(set)
    numbers: dict[tuple[str, str], str] = {}
    rows = {}
    for query_id in relevant.index:
        text = DATA.queries.set_index("query_id").loc[query_id, "text"]
        ranked: dict[str, tuple[float, str, int]] = {}
        for rank, (doc_id, chunk, score) in enumerate(hits(retriever, text), start=1):
            key = (doc_id, chunk)
            if key not in numbers:
                numbers[key] = f"{doc_id}#{sum(d == doc_id for d, _ in numbers)}"
            if numbers[key] not in ranked:
                ranked[numbers[key]] = (1.0 / rank if score is None else score, doc_id, len(chunk.split()))
        order = sorted(ranked.items(), key=lambda item: (item[1][0], item[0]), reverse=True)
        values = {}
        for budget in BUDGETS:
            used, found = 0, set()
            for _, (_, doc_id, tokens) in order:
                used += tokens
                if used > budget:
                    break
                found |= {doc_id} & relevant[query_id]
            values[f"hit@{budget}tok"] = float(bool(found))
            values[f"recall@{budget}tok"] = len(found) / len(relevant[query_id])
        rows[query_id] = values
    by_hand = pd.DataFrame(rows).T.rename_axis("query_id")
    by_hand = by_hand.set_axis(by_hand.index.astype(string_dtype()), axis=0)  # labels in rankscope's one string dtype
    return by_hand.set_axis(by_hand.columns.astype(string_dtype()), axis=1)


@pytest.mark.slow
def test_framework_retrievers_over_their_own_chunks_score_at_the_budgets_as_by_hand() -> None:
    lc = _langchain_chunks()
    llama = built.llamaindex_chunks(DATA, 30, words=5)
    result = rs.rag(
        DATA, ["words:5:0"], {"bm25": "bm25", "lc": adapt(lc, id_field="doc_id"), "llama": llama}, budgets=BUDGETS
    )
    assert list(result.summary.index) == ["whole / bm25", "words:5:0 / bm25", "own chunks / lc", "own chunks / llama"]
    for row, retriever, hits in [
        ("own chunks / lc", lc, _langchain_hits),
        ("own chunks / llama", llama, _llamaindex_hits),
    ]:
        found = result.per_query[result.per_query["system"] == row].pivot(
            index="query_id", columns="metric", values="value"
        )
        expected = budgets_by_hand(retriever, hits)
        pd.testing.assert_frame_equal(
            found[expected.columns], expected, check_names=False, check_exact=False, atol=1e-12
        )
        assert found["hit@50tok"].mean() > 0  # the retriever finds evidence
    compared = rs.compare(DATA, {"bm25": "bm25", "lc": adapt(lc, id_field="doc_id"), "llama": llama}, ["ndcg@10"])
    for name in ("lc", "llama"):  # MaxP over the chunk run is compare's one row per document
        assert result.summary.loc[f"own chunks / {name}", "maxp ndcg@10"] == pytest.approx(
            compared.summary.loc[name, "ndcg@10"], abs=1e-12
        )
    assert any(f.startswith("own chunks / lc: its own chunks:") for f in result.findings)
    assert "LangChain BM25Retriever" in str(result.provenance.to_dict())


def test_a_framework_result_without_text_or_a_rag_without_a_spec_fails_in_one_line() -> None:
    overlap = built.pyterrier_overlap(DATA, 5)  # a frame of qid, query, docno, score: no text column
    with pytest.raises(FrameworkError) as excinfo:
        rs.rag(DATA, ["words:5:0"], {"bm25": "bm25", "pt": overlap}, budgets=BUDGETS)
    message = str(excinfo.value)
    assert "\n" not in message and "result 1 has no text in 'text'" in message and "text_field=" in message
    with pytest.raises(RankscopeError, match="needs a rankscope retriever"):
        rs.rag(DATA, ["words:5:0"], {"pt": overlap}, budgets=BUDGETS)
    with pytest.raises(RankscopeError, match="retriever 'x': rag takes a spec"):
        rs.rag(DATA, ["words:5:0"], {"bm25": "bm25", "x": 3}, budgets=BUDGETS)


@pytest.mark.slow
def test_answers_found_in_a_framework_retrievers_own_chunks_score_as_by_hand(tmp_path: Path) -> None:
    """With answers as the evidence, every question is asked and a chunk carries an answer its text holds."""
    import json

    questions = DATA.queries.assign(answers=DATA.queries["text"].str.split().str[0].map(lambda word: [word]))
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in questions.to_dict("records")), encoding="utf-8")
    lc = _langchain_chunks()
    result = rs.rag(DATA, [], {"bm25": "bm25", "lc": adapt(lc, id_field="doc_id")}, budgets=BUDGETS, answers=path)
    found = result.per_query[result.per_query["system"] == "own chunks / lc"]
    hits = found[found["metric"] == "hit@10tok"].set_index("query_id")["value"]
    expected = {}
    for query_id, text, (answer,) in zip(questions["query_id"], questions["text"], questions["answers"]):
        used, hit = 0, 0.0
        for _, chunk in dict.fromkeys((doc.metadata["doc_id"], doc.page_content) for doc in lc.invoke(text)):
            used += len(chunk.split())  # a chunk (document, text) once, at its first place
            if used > 10:
                break
            hit = max(hit, float(answer in chunk.lower().split()))
        expected[query_id] = hit
    assert hits.to_dict() == expected and 0 < hits.mean() < 1
