"""Recall losses versus ranking losses, from a run and its qrels.

A first stage hands a reranker its top D (the *depth*). At a cutoff K every
relevant document of a query is then in one of three states, and they call for
different fixes:

- *found*: in the top K;
- *ranking loss*: retrieved within the top D but below K (a reranker over the
  candidates can fix it);
- *recall loss*: not within the top D (only a better first stage, query
  expansion or another retriever can).

:func:`relevant_ranks` gives each relevant document's rank, :func:`loss_table`
counts the three states per query and K, :func:`loss_summary` over all queries.
Every metric counts an unjudged document as non-relevant, so a relevant document can be pushed
below K by documents nobody judged: :func:`judgment_table` counts, per query and K, the top K's
documents judged non-relevant and those never judged (no label, or a negative one: trec_eval's
"in the pool but unjudged"), and :func:`loss_table` puts them beside the losses. A ranking loss
behind unjudged documents may be a hole in the judgments rather than an error of the ranking.

The first-relevant view (:func:`first_relevant_ranks`, :func:`miss_breakdown`)
is the special case that looks at one document per query: a query *hits*, is a
*ranking miss* (its first relevant document is below K) or a *recall miss*
(nothing relevant within D); with one relevant document per query the two views
give the same counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankscope.corpora.schema import sort_run, validate
from rankscope.workflows.common.runs import CUTOFFS

SLOTS = ["judged_nonrelevant", "unjudged"]
"""What fills a top K besides the relevant documents (:func:`judgment_table`)."""


def relevant_ranks(run: pd.DataFrame, qrels: pd.DataFrame, depth: int, relevance_level: int = 1) -> pd.DataFrame:
    """Every relevant document of every judged query with its rank in the run, NaN when not within ``depth``.

    Columns ``query_id, doc_id, relevance, rank`` (rank float64), sorted by
    query_id, then rank (NaN last), then doc_id. A document is relevant when
    its grade is at least ``relevance_level``; judged queries are those with one.
    Ranks follow the tie rule (score descending, doc_id descending), whatever
    ranks the run states, as trec_eval does.
    """
    run = sort_run(validate(run, "run", "run"))
    qrels = validate(qrels, "qrels", "qrels")
    relevant = qrels.loc[qrels["relevance"] >= relevance_level]
    within = run.loc[run["rank"] <= depth, ["query_id", "doc_id", "rank"]]
    ranks = relevant.merge(within, on=["query_id", "doc_id"], how="left")
    ranks["rank"] = ranks["rank"].astype(np.float64)
    ranks = ranks.sort_values(["query_id", "rank", "doc_id"], na_position="last", kind="stable")
    return ranks.reset_index(drop=True)


def first_relevant_ranks(run: pd.DataFrame, qrels: pd.DataFrame, depth: int, relevance_level: int = 1) -> pd.Series:
    """Rank of the first relevant document of every judged query, NaN when none is within ``depth``.

    The minimum over the query's rows of :func:`relevant_ranks`.
    """
    return first_relevant(relevant_ranks(run, qrels, depth, relevance_level))


def rank_label(rank: float, depth: int) -> str:
    """A rank as text, or ``not within D`` for a document (or query) with nothing within the depth."""
    return f"not within {depth}" if np.isnan(rank) else str(int(rank))


def first_relevant(ranks: pd.DataFrame) -> pd.Series:
    """Per judged query of :func:`relevant_ranks` output, its best rank (NaN = none within the depth)."""
    return ranks.groupby("query_id")["rank"].min().rename("first_relevant_rank")


def judgment_table(
    run: pd.DataFrame, qrels: pd.DataFrame, cutoffs: Sequence[int], relevance_level: int = 1
) -> pd.DataFrame:
    """Per query of the run and cutoff K: how many of its top K documents are judged non-relevant
    (a label from 0 to below ``relevance_level``) and how many were never judged.

    Columns ``query_id, K, judged_nonrelevant, unjudged``; ranks follow the tie rule.
    """
    run = sort_run(validate(run, "run", "run"))
    qrels = validate(qrels, "qrels", "qrels")
    top = run[["query_id", "doc_id", "rank"]].merge(qrels, how="left", on=["query_id", "doc_id"])
    grade = top["relevance"].to_numpy(dtype=np.float64)  # NaN = no label
    unjudged = np.isnan(grade) | (grade < 0)
    nonrelevant = ~unjudged & (grade < relevance_level)
    query_ids = pd.Index(sorted(top["query_id"].unique()), name="query_id")
    codes = query_ids.get_indexer(top["query_id"])
    rank = top["rank"].to_numpy()
    frames = [
        pd.DataFrame(
            {
                "query_id": query_ids,
                "K": k,
                "judged_nonrelevant": np.bincount(codes, weights=nonrelevant & (rank <= k), minlength=len(query_ids)),
                "unjudged": np.bincount(codes, weights=unjudged & (rank <= k), minlength=len(query_ids)),
            }
        )
        for k in cutoffs
    ]
    table = pd.concat(frames, ignore_index=True)
    return table.astype({"judged_nonrelevant": np.int64, "unjudged": np.int64})


def loss_table(
    ranks: pd.DataFrame, cutoffs: Sequence[int], depth: int, judgments: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per judged query and cutoff K: relevant documents found, ranking losses and recall losses.

    ``ranks`` is :func:`relevant_ranks` output for the same ``depth``. Columns
    ``query_id, K, relevant, found, ranking_loss, recall_loss`` and the matching
    ``*_share`` columns (of the query's relevant documents); found + ranking_loss
    + recall_loss = relevant, and found_share is the query's Recall@K. With ``judgments``
    (:func:`judgment_table` of the run), ``judged_nonrelevant`` and ``unjudged`` say what fills
    the top K above the ranking losses (0 for a query the run does not answer).
    """
    rank = ranks["rank"].to_numpy(dtype=np.float64)
    query_ids = pd.Index(sorted(ranks["query_id"].unique()), name="query_id")
    codes = query_ids.get_indexer(ranks["query_id"])
    relevant = np.bincount(codes, minlength=len(query_ids))
    within = np.bincount(codes, weights=rank <= depth, minlength=len(query_ids)).astype(np.int64)
    frames = []
    for k in cutoffs:
        found = np.bincount(codes, weights=rank <= k, minlength=len(query_ids)).astype(np.int64)
        frames.append(
            pd.DataFrame(
                {
                    "query_id": query_ids,
                    "K": k,
                    "relevant": relevant,
                    "found": found,
                    "ranking_loss": within - found,
                    "recall_loss": relevant - within,
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    for column in ("found", "ranking_loss", "recall_loss"):
        table[f"{column}_share"] = table[column] / table["relevant"]
    if judgments is not None:
        table = table.merge(judgments, how="left", on=["query_id", "K"])
        table[SLOTS] = table[SLOTS].fillna(0).astype(np.int64)
    return table


def loss_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Over all queries, per K: counts summed, shares averaged over queries (found_share = Recall@K).

    Shares are means of the per-query shares so every query weighs the same, as
    in Recall@K; ``pooled_*_share`` divide the summed counts instead (every
    relevant document weighs the same).
    """
    counts = ["relevant", "found", "ranking_loss", "recall_loss", *(c for c in SLOTS if c in table.columns)]
    sums = table.groupby("K", sort=True)[counts].sum()
    shares = table.groupby("K", sort=True)[["found_share", "ranking_loss_share", "recall_loss_share"]].mean()
    summary = sums.join(shares)
    summary.insert(0, "queries", table.groupby("K", sort=True)["query_id"].nunique())
    for column in ("found", "ranking_loss", "recall_loss"):
        summary[f"pooled_{column}_share"] = summary[column] / summary["relevant"]
    return summary


def miss_breakdown(first_ranks: pd.Series, cutoffs: Sequence[int] = CUTOFFS) -> pd.DataFrame:
    """Per cutoff K: hits, ranking misses and recall misses as counts and as shares of all queries.

    ``ranking_share_of_misses`` is the part of the misses a reranker could fix
    (NaN when nothing misses).
    """
    ranks = first_ranks.to_numpy(dtype=np.float64)
    n = len(ranks)
    recall_misses = int(np.isnan(ranks).sum())
    rows = []
    for k in cutoffs:
        hits = int((ranks <= k).sum())
        ranking = n - hits - recall_misses
        misses = ranking + recall_misses
        rows.append(
            {
                "K": k,
                "queries": n,
                "hits": hits,
                "ranking_misses": ranking,
                "recall_misses": recall_misses,
                "hit_share": hits / n if n else np.nan,
                "ranking_miss_share": ranking / n if n else np.nan,
                "recall_miss_share": recall_misses / n if n else np.nan,
                "ranking_share_of_misses": ranking / misses if misses else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("K")


RANK_BUCKETS = ((1, 1), (2, 3), (4, 5), (6, 10), (11, 20), (21, 50), (51, 100), (101, None))


def rank_distribution(first_ranks: pd.Series, depth: int) -> pd.Series:
    """Number of queries whose first relevant document falls in each rank bucket, plus 'none'.

    Buckets follow the diagnosis cutoffs (1, 2-3, 4-5, ..., 101-depth) so the
    histogram reads against the Hit@K table; buckets beyond ``depth`` are dropped.
    """
    ranks = first_ranks.to_numpy(dtype=np.float64)
    counts = {}
    for low, high in RANK_BUCKETS:
        if low > depth:
            break
        top = depth if high is None else min(high, depth)
        label = str(low) if low == top else f"{low}-{top}"
        counts[label] = int(((ranks >= low) & (ranks <= top)).sum())
    counts[f"none in top {depth}"] = int(np.isnan(ranks).sum())
    return pd.Series(counts, name="queries")
