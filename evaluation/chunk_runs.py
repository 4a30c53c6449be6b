"""Chunk (passage) runs against document judgments.

A retriever that indexes chunks returns a chunk run; judgments are usually about
documents. Two ways to score it, both here:

- :func:`aggregate_run` collapses the chunk run to a document run, one score per
  (query, parent document) from the scores of the document's *retrieved* chunks:

  ========== ==========================================================================
  ``maxp``   the best chunk's score (Anserini's MaxP; Dai & Callan's BERT-MaxP)
  ``firstp`` the score of the document's earliest retrieved chunk (lowest position):
             the first passage's score when it was retrieved, as BERT-FirstP
  ``sump``   the sum of the retrieved chunks' scores
  ``meanp``  their mean
  ``kmaxavgp:K`` the mean of the K best retrieved chunks' scores (all of them when fewer
             than K were retrieved)
  ========== ==========================================================================

  The document run is ordered by the tie rule (score descending, then doc_id descending).
- :func:`chunk_qrels` gives every chunk its parent's judgment, so the chunk run can be
  scored directly; then several chunks of one document can fill the top k, which
  :func:`distinct_documents` counts.

The parent of a chunk is looked up in the chunk table (``chunk_id``, ``doc_id``,
``position``: :func:`rankscope.corpora.chunking.chunk_corpus`); a run naming a chunk the
table lacks is an error.
"""

from __future__ import annotations

import pandas as pd

from rankscope.core.errors import SchemaError
from rankscope.corpora.schema import sort_run, validate

METHODS = ("maxp", "firstp", "sump", "meanp", "kmaxavgp")


def parse_aggregation(spec: str) -> tuple[str, int]:
    """(method, k) of ``maxp``, ``firstp``, ``sump``, ``meanp`` or ``kmaxavgp:K`` (k is 0 unless kmaxavgp)."""
    method, _, k = spec.partition(":")
    if method not in METHODS:
        raise SchemaError(f"unknown aggregation {spec!r}; expected one of maxp, firstp, sump, meanp, kmaxavgp:K")
    if method == "kmaxavgp":
        if not (k.isdigit() and k.isascii() and int(k) >= 1):
            raise SchemaError(f"aggregation {spec!r}: kmaxavgp needs K >= 1, e.g. kmaxavgp:3")
        return method, int(k)
    if k:
        raise SchemaError(f"aggregation {spec!r}: only kmaxavgp takes a number")
    return method, 0


def chunks_of_ids(chunk_ids: pd.Series) -> pd.DataFrame | None:
    """A chunk table (``chunk_id, doc_id, position``) read from the ids themselves when every id is
    a chunk id ``DOC#N`` (:func:`rankscope.corpora.chunking.chunk_id`), else None: how a chunk run
    made elsewhere (``rag``'s ``run.*.trec``) finds its documents without the chunk table."""
    ids = pd.Series(pd.unique(chunk_ids.astype(str)))
    parts = ids.str.extract(r"^(?P<doc_id>.+)#(?P<position>0|[1-9][0-9]*)$")
    if ids.empty or parts["doc_id"].isna().any():
        return None
    return pd.DataFrame({"chunk_id": ids, "doc_id": parts["doc_id"], "position": parts["position"].astype("int64")})


def with_parents(run: pd.DataFrame, chunks: pd.DataFrame) -> pd.DataFrame:
    """The run (tie-rule order) with each chunk's ``parent`` doc_id and ``position`` attached."""
    run = sort_run(validate(run, "run", "chunk run"))
    table = chunks.set_index("chunk_id")[["doc_id", "position"]]
    known = run["doc_id"].isin(table.index)
    if not known.all():
        missing = run.loc[~known, "doc_id"].iloc[0]
        raise SchemaError(f"chunk run: {int((~known).sum())} rows name chunks not in the chunk table, e.g. {missing!r}")
    found = table.loc[run["doc_id"]]
    return run.assign(parent=found["doc_id"].to_numpy(), position=found["position"].to_numpy())


def aggregate_run(run: pd.DataFrame, chunks: pd.DataFrame, method: str = "maxp") -> pd.DataFrame:
    """A document run from a chunk run (see the module doc for the methods)."""
    return aggregate_rows(with_parents(run, chunks), method)


def aggregate_rows(rows: pd.DataFrame, method: str = "maxp") -> pd.DataFrame:
    """:func:`aggregate_run` of the run :func:`with_parents` gave (``rag`` attaches the parents once)."""
    name, k = parse_aggregation(method)
    keys = ["query_id", "parent"]
    groups = rows.groupby(keys, sort=False)["score"]
    if name == "maxp":
        scores = groups.max()
    elif name == "sump":
        scores = groups.sum()
    elif name == "meanp":
        scores = groups.mean()
    elif name == "firstp":
        first = rows.loc[rows.groupby(keys, sort=False)["position"].idxmin()]
        scores = first.set_index(keys)["score"]
    else:  # kmaxavgp: rows are in score order within each query, so head(k) are the k best
        scores = rows.groupby(keys, sort=False).head(k).groupby(keys, sort=False)["score"].mean()
    doc_run = scores.rename("score").reset_index().rename(columns={"parent": "doc_id"})
    return sort_run(doc_run[["query_id", "doc_id", "score"]])


def chunk_qrels(qrels: pd.DataFrame, chunks: pd.DataFrame) -> pd.DataFrame:
    """Judgments of chunks: every chunk of a judged document gets the document's label."""
    qrels = validate(qrels, "qrels", "qrels")
    table = chunks[["chunk_id", "doc_id"]]
    merged = qrels.merge(table, on="doc_id", how="inner")
    return merged[["query_id", "chunk_id", "relevance"]].rename(columns={"chunk_id": "doc_id"})


def distinct_documents(run: pd.DataFrame, chunks: pd.DataFrame, k: int) -> pd.Series:
    """Per query, how many distinct parent documents the top ``k`` chunks come from (index query_id)."""
    return distinct_in(with_parents(run, chunks), k)


def distinct_in(rows: pd.DataFrame, k: int) -> pd.Series:
    """:func:`distinct_documents` of the run :func:`with_parents` gave (``rag`` attaches the parents once)."""
    top = rows[rows["rank"] <= k]
    return top.groupby("query_id", sort=False)["parent"].nunique().rename(f"distinct_docs@{k}")
