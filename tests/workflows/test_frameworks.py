"""Framework retrievers as systems (rankscope/workflows/common/frameworks.py), with the real libraries, offline.

On CISI, one ``compare`` holds rankscope's bm25 and six framework retrievers; each one's numbers equal
those of a TREC run the test writes by hand from the same framework's answers (its own API called here,
ids and scores read by hand, chunks of one document by their best score, ranks by the tie rule)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import frameworks_cisi as built  # noqa: E402
from tiny_collection import DATA, TEXTS  # noqa: E402

import rankscope as rs  # noqa: E402
from rankscope.workflows.common.frameworks import FRAMEWORKS, FrameworkError, adapt, framework_of  # noqa: E402
from rankscope.workflows.common.systems import System  # noqa: E402
from tests.needs import needs

pytestmark = needs("langchain_core", "langchain_community", "llama_index.core", "haystack", "pyterrier")

METRICS = ["ndcg@10", "map@100", "recall@100", "p@5"]
K = 100


def _langchain_hits(field: str) -> Callable[[Any, str], list[tuple[str, float | None]]]:
    def hits(retriever: Any, text: str) -> list[tuple[str, float | None]]:
        docs = retriever.invoke(text)
        return [(doc.id if field == "id" else doc.metadata[field], None) for doc in docs]

    return hits


def _llamaindex_hits(retriever: Any, text: str) -> list[tuple[str, float | None]]:
    return [(hit.node.ref_doc_id, hit.score) for hit in retriever.retrieve(text)]


def _haystack_hits(retriever: Any, text: str) -> list[tuple[str, float | None]]:
    return [(doc.id, doc.score) for doc in retriever.run(query=text, top_k=1000)["documents"]]


def _pyterrier_hits(retriever: Any, text: str) -> list[tuple[str, float | None]]:
    frame = retriever.transform(pd.DataFrame({"qid": ["q"], "query": [text]}))
    return [(row.docno, row.score) for row in frame.itertuples()]


def handwritten_run(dataset: rs.Dataset, retriever: Any, hits: Callable[..., list], path: Path) -> Path:
    """A TREC run written by hand: per query, a document's best score among its results (1/rank when the
    framework gives none), ranked by score then doc_id descending."""
    lines = []
    judged = dataset.queries[dataset.queries["query_id"].isin(dataset.qrels["query_id"])]
    for query_id, text in zip(judged["query_id"], judged["text"]):
        best: dict[str, float] = {}
        for rank, (doc_id, score) in enumerate(hits(retriever, text), start=1):
            value = 1.0 / rank if score is None else float(score)
            best[doc_id] = max(best.get(doc_id, value), value)
        ordered = sorted(best.items(), key=lambda item: (item[1], item[0]), reverse=True)
        lines += [f"{query_id} Q0 {doc} {rank} {score!r} hand" for rank, (doc, score) in enumerate(ordered, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_six_framework_retrievers_on_cisi_score_as_their_handwritten_runs(data_dir: Path, tmp_path: Path) -> None:
    cisi = rs.load_dataset(data_dir / "cisi")
    systems = {
        "langchain-vectors": (built.langchain_vectors(cisi, K), _langchain_hits("id")),
        "langchain-bm25": (built.langchain_bm25(cisi, K), _langchain_hits("doc_id")),
        "llamaindex": (built.llamaindex_chunks(cisi, 3 * K), _llamaindex_hits),
        "haystack": (built.haystack_bm25(cisi), _haystack_hits),
        "pyterrier": (built.pyterrier_overlap(cisi, K), _pyterrier_hits),
    }
    given = {name: retriever for name, (retriever, _) in systems.items()}
    given["langchain-bm25"] = adapt(given["langchain-bm25"], id_field="doc_id")
    result = rs.compare(cisi, {"bm25": "bm25", **given}, METRICS, depth=K)
    assert list(result.summary.index) == ["bm25", *systems]

    files = {
        name: Path(handwritten_run(cisi, retriever, hits, tmp_path / f"{name}.trec"))
        for name, (retriever, hits) in systems.items()
    }
    by_hand = rs.compare(cisi, {"bm25": "bm25", **files}, METRICS, depth=K)
    pd.testing.assert_frame_equal(result.summary, by_hand.summary)
    pd.testing.assert_frame_equal(result.per_query, by_hand.per_query)
    assert result.summary.loc["bm25", "ndcg@10"] > 0.1  # a real ranking, not zeros
    assert result.summary.loc["haystack", "ndcg@10"] > 0.1
    notes = result.systems["notes"]
    assert "score = 1/rank" in notes["langchain-vectors"] and "score = 1/rank" not in notes["haystack"]
    assert "by maxp" in notes["llamaindex"]  # CISI's abstracts split into several chunks
    assert "by maxp" not in notes["haystack"]
    assert "ids from 'doc_id'" in result.systems.loc["langchain-bm25", "description"]


def _langchain_bm25(texts: dict[str, str], **metadata: str) -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    docs = [Document(page_content=text, metadata={"doc_id": doc, **metadata}) for doc, text in texts.items()]
    return BM25Retriever.from_documents(docs, k=3)


def _one_line(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_ids_read_from_the_wrong_field_fail_in_one_line_naming_query_and_result() -> None:
    retriever = _langchain_bm25(TEXTS, source="handbook")  # ids in metadata doc_id; Document.id is None
    with pytest.raises(FrameworkError) as excinfo:
        rs.compare(DATA, {"bm25": "bm25", "lc": retriever}, ["ndcg@10"])
    message = _one_line(excinfo)
    assert "system 'lc': query 'q1', result 1 has no 'id'" in message
    assert "metadata doc_id, source" in message and "id_field=" in message
    with pytest.raises(FrameworkError) as excinfo:
        rs.compare(DATA, {"bm25": "bm25", "lc": adapt(retriever, id_field="source")}, ["ndcg@10"])
    assert "names 'handbook' (field 'source'), which is not a document of 'tiny'" in _one_line(excinfo)
    result = rs.compare(DATA, {"bm25": "bm25", "lc": adapt(retriever, id_field="doc_id")}, ["ndcg@10"])
    assert set(result.runs["lc"]["doc_id"]) <= set(TEXTS)


def test_a_returned_id_the_collection_lacks_fails_in_one_line() -> None:
    retriever = built.haystack_bm25(rs.Dataset.from_dicts("other", {**TEXTS, "d9": "wing flow wing flow"}, {}, {}))
    with pytest.raises(FrameworkError) as excinfo:
        rs.compare(DATA, {"bm25": "bm25", "hs": retriever}, ["ndcg@10"])
    assert _one_line(excinfo) == (
        "system 'hs': query 'q1', result 1 names 'd9' (field 'id'), which is not a document of 'tiny': the "
        "retriever indexed another collection, or its ids are in another field (adapt(..., id_field=...))"
    )


def test_framework_objects_are_told_apart_by_their_classes() -> None:
    assert framework_of(_langchain_bm25(TEXTS)) == "langchain"
    assert framework_of(built.haystack_bm25(DATA)) == "haystack"
    assert framework_of(built.pyterrier_overlap(DATA, 3)) == "pyterrier"
    assert framework_of(built.llamaindex_chunks(DATA, 3)) == "llamaindex"
    assert framework_of("bm25") is None and framework_of(pd.DataFrame()) is None


def test_each_framework_is_one_row_and_a_system_says_what_it_allows() -> None:
    """A framework is described once (a row of FRAMEWORKS: recognised, asked, read): each object is recognised
    by its own row alone, which also asks it. A system of it is neither indexed here nor made in a forked
    child; a spec and a retriever object are both, a run is made in a child but not indexed."""
    objects = {
        "langchain": _langchain_bm25(TEXTS),
        "llamaindex": built.llamaindex_chunks(DATA, 3),
        "haystack": built.haystack_bm25(DATA),
        "pyterrier": built.pyterrier_overlap(DATA, 3),
    }
    assert list(FRAMEWORKS) == list(objects)
    for name, obj in objects.items():
        modules = {cls.__module__.split(".")[0] for cls in type(obj).__mro__}
        assert [key for key, row in FRAMEWORKS.items() if row.recognises(obj, modules)] == [name]
        assert FRAMEWORKS[name].ask.__name__ == f"_{name}" and callable(getattr(obj, FRAMEWORKS[name].method))
    systems = [
        System("spec", "bm25", spec="bm25"),
        System("object", "tfidf", retriever=object()),
        System("run", "a run", run=pd.DataFrame()),
        System("framework", "LangChain", framework=adapt(objects["langchain"])),
    ]
    assert [(s.indexed_here, s.may_fork) for s in systems] == [
        (True, True),
        (True, True),
        (False, True),
        (False, False),
    ]


def test_chunks_of_one_document_become_one_row_by_the_chosen_rule() -> None:
    """Two chunks of d1 for every query: MaxP keeps the better one's score, SumP adds them."""
    retriever = built.pyterrier_overlap(DATA, 6)
    import pyterrier as pt

    doubled = retriever >> pt.apply.generic(lambda frame: pd.concat([frame, frame.assign(score=frame["score"] / 4)]))
    maxp = rs.compare(DATA, {"bm25": "bm25", "pt": doubled}, ["ndcg@10"]).runs["pt"]
    sump = rs.compare(DATA, {"bm25": "bm25", "pt": adapt(doubled, aggregate="sump")}, ["ndcg@10"]).runs["pt"]
    plain = rs.compare(DATA, {"bm25": "bm25", "pt": retriever}, ["ndcg@10"]).runs["pt"]
    assert maxp["score"].tolist() == plain["score"].tolist()
    assert sump["score"].tolist() == pytest.approx((plain["score"] * 1.25).tolist())
