"""Recall misses versus ranking misses, from a run and its qrels.

A query that misses at cutoff K misses for one of two reasons, and they call
for different fixes: its first relevant document was retrieved but ranked
below K (a *ranking miss*: a reranker can fix it), or no relevant document was
retrieved within the depth at all (a *recall miss*: only a better first stage
can fix it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankscope.corpora.schema import sort_run, validate

CUTOFFS = (1, 3, 5, 10, 20, 50, 100)


def first_relevant_ranks(run: pd.DataFrame, qrels: pd.DataFrame, depth: int, relevance_level: int = 1) -> pd.Series:
    """Rank of the first relevant document of every judged query, NaN when none is within ``depth``.

    Judged queries are those with a judgment of at least ``relevance_level``;
    ranks follow the tie rule (score descending, doc_id descending), whatever
    ranks the run states, as trec_eval does.
    """
    run = sort_run(validate(run, "run", "run"))
    qrels = validate(qrels, "qrels", "qrels")
    relevant = qrels.loc[qrels["relevance"] >= relevance_level, ["query_id", "doc_id"]]
    judged = pd.Index(sorted(relevant["query_id"].unique()), name="query_id")
    hits = run.loc[run["rank"] <= depth].merge(relevant, on=["query_id", "doc_id"], how="inner")
    first = hits.groupby("query_id")["rank"].min().astype(np.float64)
    return first.reindex(judged).rename("first_relevant_rank")


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
