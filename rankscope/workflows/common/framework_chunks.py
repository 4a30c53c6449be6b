"""A framework retriever's results as chunks, for ``rag`` (docs/frameworks.md, "Framework retrievers in rag").

A RAG team's retriever returns chunks it cut and indexed itself: each result is a piece of text with
the id of the document it came from. ``rag`` scores such a retriever at its token budgets beside
rankscope's chunkings, from what it returned: a chunk is a distinct (document, text) pair, its id
``DOC#N`` numbered in the order the run first meets the document's chunks (the same chunk retrieved
for two queries keeps one id), its length the tokens of its text counted by rag's counter. Ids,
scores and the checks are those of :mod:`rankscope.workflows.common.frameworks`; the framework's
chunks nobody retrieved are unknown, so the chunk statistics describe the chunks it returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.corpora.chunking import chunk_id
from rankscope.corpora.schema import sort_run
from rankscope.workflows.common.frameworks import (
    Adapted,
    FrameworkError,
    Result,
    ask_queries,
    field_of,
    result_rows,
    what_it_has,
)

if TYPE_CHECKING:
    from rankscope.corpora.chunking import TokenCounter

CHUNKS = ("chunk_id", "doc_id", "position", "tokens", "text")
"""The columns of a framework's chunk table (``position``: the chunk's number among its document's)."""


def framework_chunk_run(
    name: str,
    adapted: Adapted,
    queries: pd.DataFrame,
    known: set[str],
    dataset: str,
    depth: int,
    counter: TokenCounter,
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...]]:
    """The chunk run (``query_id, doc_id`` = chunk id, ``score``, ``rank``) of ``queries`` to ``depth``,
    the table of the chunks it names (:data:`CHUNKS`) and the notes a reader must see."""
    ids = queries["query_id"].astype(str).tolist()
    answers = ask_queries(name, adapted, ids, queries["text"].astype(str).tolist(), depth)
    rows, scored = result_rows(name, adapted, ids, answers, known, dataset)
    rows["text"] = _texts(name, adapted, ids, answers)
    first = rows.drop_duplicates(["doc_id", "text"])[["doc_id", "text"]]
    number = first.groupby("doc_id", sort=False).cumcount()
    chunks = first.assign(chunk_id=[chunk_id(d, n) for d, n in zip(first["doc_id"], number)], position=number)
    chunks["tokens"] = [len(counter.spans(text)) for text in chunks["text"]]
    named = rows.merge(chunks[["doc_id", "text", "chunk_id"]], on=["doc_id", "text"], how="left")
    repeated = named.duplicated(["query_id", "chunk_id"])
    run = sort_run(named.loc[~repeated, ["query_id", "chunk_id", "score"]].rename(columns={"chunk_id": "doc_id"}))
    deep = run["rank"] > depth
    notes = [
        f"its own chunks: {len(chunks)} distinct (document, text) pairs retrieved, tokens counted by {counter.name}"
    ]
    if not scored:
        notes.append("the framework gave no scores: score = 1/rank, its own order (no ties)")
    if repeated.any():
        notes.append(f"{int(repeated.sum())} results repeated a chunk already retrieved for the query: kept once")
    if deep.any():
        notes.append(f"{int(deep.sum())} chunks below rank {depth} were cut (depth {depth})")
    return run[~deep].reset_index(drop=True), chunks[list(CHUNKS)].reset_index(drop=True), tuple(notes)


def _texts(name: str, adapted: Adapted, ids: Sequence[str], answers: Sequence[Sequence[Result]]) -> list[str]:
    """Each result's text, in the order of :func:`result_rows`' rows; one line naming a result without any."""
    texts = []
    for query_id, results in zip(ids, answers):
        for position, result in enumerate(results, start=1):
            text = field_of(result, adapted.text_field)
            if not isinstance(text, str):
                raise FrameworkError(
                    f"system {name!r}: query {query_id!r}, result {position} has no text in {adapted.text_field!r} "
                    f"({what_it_has(result)}): pass adapt(retriever, text_field=...) naming the field that holds it"
                )
            texts.append(text)
    return texts
