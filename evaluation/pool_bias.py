"""The pool-bias test (Zobel 1998): how much of each run's score rests on judgments only it brought to the pool.

Qrels made by pooling judge what the pooled runs found. A run that found relevant documents no
other run ranked that high is rewarded for it; a new run that finds such documents after the
pool was judged is not. Leave-one-run-out measures the size of that effect on the runs at hand:
the pool is every run's top ``depth`` per query; for each run, the relevant judgments of the
documents only it put there are removed and it is scored again. The drop of its score (and of
its rank among the runs scored with all judgments) is what it would lose had it not been pooled;
a run that drops in rank, or loses more than :data:`FLAG_DROP` of its score, depends on its
unique judgments and is flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run, validate

FLAG_DROP = 0.05
"""A run is flagged when, without its unique relevant judgments, it falls in rank on a metric or loses
more than this share of its score there (5%: about the smallest difference taken as meaningful
between two systems on a TREC collection, Voorhees & Buckley 2002)."""

COLUMNS = (
    "system", "metric", "unique_relevant", "score", "score_without", "drop", "relative_drop",
    "rank", "rank_without", "flagged",
)  # fmt: skip


def pooled_top(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The run's top ``depth`` per query in trec_eval's order (the tie rule), as ``query_id, doc_id``."""
    ranked = sort_run(validate(run, "run", "run"))
    return ranked.loc[ranked["rank"] <= depth, ["query_id", "doc_id"]]


def unique_contributions(runs: Mapping[str, pd.DataFrame], depth: int) -> dict[str, pd.DataFrame]:
    """Per run, the (query, document) pairs of its top ``depth`` that no other run has in its top ``depth``."""
    tops = {name: pooled_top(run, depth).assign(system=name) for name, run in runs.items()}
    pool = pd.concat(tops.values(), ignore_index=True)
    owners = pool.groupby(["query_id", "doc_id"], sort=False)["system"].transform("size")
    alone = pool[owners.to_numpy() == 1]
    return {name: alone.loc[alone["system"] == name, ["query_id", "doc_id"]] for name in runs}


def without_pairs(qrels: pd.DataFrame, pairs: pd.DataFrame, relevance_level: int) -> pd.DataFrame:
    """The qrels less their relevant judgments of ``pairs`` (a new frame; non-relevant ones are kept)."""
    keys = pd.MultiIndex.from_frame(qrels[["query_id", "doc_id"]])
    drop = keys.isin(pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]])) & (
        qrels["relevance"].to_numpy() >= relevance_level
    )
    return qrels.loc[~drop].reset_index(drop=True)


def pool_bias(
    qrels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    metrics: Sequence[str] = ("map", "ndcg@10", "precision@10"),
    depth: int = 100,
    *,
    relevance_level: int = 1,
) -> pd.DataFrame:
    """Leave-one-run-out over the pool of the runs' top ``depth``: one row per run and metric (:data:`COLUMNS`).

    ``unique_relevant``: relevant judgments only this run pooled (removed for its re-scoring);
    ``score``/``rank``: with every judgment (rank 1 = best, ties share the better rank);
    ``score_without``: scored without them; ``rank_without``: where that score ranks among the other
    runs' full scores; ``drop = score - score_without``, ``relative_drop = drop / score`` (0 when the
    score is 0); ``flagged``: see :data:`FLAG_DROP`. Metrics are scored by
    :func:`rankscope.evaluation.evaluate` (trec_eval semantics).
    """
    from rankscope.evaluation.engine import evaluate
    from rankscope.evaluation.metrics import parse_metrics

    if len(runs) < 2:
        raise RankscopeError(f"the pool-bias test needs at least two runs (one pool of several), got {list(runs)}")
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
        raise RankscopeError(f"pool depth must be a positive integer, got {depth!r}")
    names = tuple(m.name for m in parse_metrics(metrics))
    qrels = validate(qrels, "qrels", "qrels")
    full = {name: evaluate(qrels, run, names, relevance_level=relevance_level).mean for name, run in runs.items()}
    unique = unique_contributions(runs, int(depth))
    rows = []
    for name, run in runs.items():
        reduced = without_pairs(qrels, unique[name], relevance_level)
        removed = len(qrels) - len(reduced)
        alone = evaluate(reduced, run, names, relevance_level=relevance_level).mean
        for metric in names:
            others = np.array([full[other][metric] for other in runs if other != name])
            score, without = full[name][metric], alone[metric]
            drop = score - without
            rank, rank_without = 1 + int((others > score).sum()), 1 + int((others > without).sum())
            relative = drop / score if score else 0.0
            flagged = rank_without > rank or relative > FLAG_DROP
            rows.append((name, metric, removed, score, without, drop, relative, rank, rank_without, flagged))
    return pd.DataFrame(rows, columns=list(COLUMNS))
