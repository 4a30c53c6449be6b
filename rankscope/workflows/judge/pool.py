"""The pool: the top ``depth`` of every system, and which of its pairs the humans left unjudged.

A pooled pair is a (query_id, doc_id) in some system's top ``depth`` whose query has a text and
whose document is in the corpus (a run may name others: they cannot be shown to a judge, and
they are counted, not dropped silently). Pairs are in (query_id, doc_id) order, so the judge is
asked in the same order whatever the order of the systems.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from rankscope.corpora.dataset import Dataset
from rankscope.judging.base import Pair


@dataclass(frozen=True)
class Pool:
    """The pooled pairs, each marked ``human`` (the qrels judge it) or not, and what could not be pooled."""

    pairs: pd.DataFrame  # query_id, doc_id, human (bool), relevance (the human label, or -1 when none)
    missing_text: int

    @property
    def unjudged(self) -> pd.DataFrame:
        return self.pairs[~self.pairs["human"]]


def pooled_ranks(runs: Mapping[str, pd.DataFrame], depth: int) -> pd.DataFrame:
    """Which system put each document at which rank: ``system, query_id, doc_id, rank`` for every
    run's top ``depth``, in the systems' order (a collection's sample is stratified by them)."""
    tops = [
        run.loc[run["rank"] <= depth, ["query_id", "doc_id", "rank"]].assign(system=name) for name, run in runs.items()
    ]
    return pd.concat(tops, ignore_index=True)[["system", "query_id", "doc_id", "rank"]]


def make_pool(runs: Mapping[str, pd.DataFrame], dataset: Dataset, depth: int, qrels: pd.DataFrame) -> Pool:
    """The union of every run's top ``depth``, marked against ``qrels`` (the human labels visible)."""
    pooled = pooled_ranks(runs, depth)[["query_id", "doc_id"]].drop_duplicates()
    shown = pooled["query_id"].isin(dataset.queries["query_id"]) & pooled["doc_id"].isin(dataset.corpus["doc_id"])
    pooled = pooled[shown].sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    merged = pooled.merge(qrels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")
    merged["human"] = merged["relevance"].notna()
    merged["relevance"] = merged["relevance"].fillna(-1).astype("int64")
    return Pool(merged[["query_id", "doc_id", "human", "relevance"]], int((~shown).sum()))


def document_texts(dataset: Dataset) -> dict[str, str]:
    """Each document's text as a judge reads it: the title, a blank line, the body (either may be empty)."""
    corpus = dataset.corpus
    return {
        doc_id: "\n\n".join(part for part in (str(title).strip(), str(text).strip()) if part)
        for doc_id, title, text in zip(corpus["doc_id"], corpus["title"], corpus["text"])
    }


def pairs_to_judge(frame: pd.DataFrame, dataset: Dataset) -> list[Pair]:
    """The pairs of ``frame`` (query_id, doc_id) with their texts, in its order."""
    queries = dict(zip(dataset.queries["query_id"], dataset.queries["text"]))
    documents = document_texts(dataset)
    return [Pair(q, d, queries[q], documents[d]) for q, d in zip(frame["query_id"], frame["doc_id"])]
