"""How well recall beyond the pool is estimated on a collection judged in full: a simulation with known truth.

The full judgments are hidden; only those inside the pool of the runs' top ``depth`` are kept (every
pooled pair judged, an unjudged one non-relevant), a share of the unjudged documents is drawn outside
it (:mod:`rankscope.evaluation.outside_pool`, strata by the first run's ranks) and labelled by the
hidden judgments, and :func:`rankscope.evaluation.recall_estimate.estimate_recall` estimates R and
each run's Recall@K. Over many repetitions (seeds 0, 1, ...), the share of intervals that hold the
full-judgment value is their coverage: near the stated confidence when the method is honest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.outside_pool import DEFAULT_CUTS, draw_outside, outside_strata
from rankscope.evaluation.recall_estimate import estimate_recall

COLUMNS = ("share", "figure", "intervals", "covered", "coverage", "mean_width", "labels_per_query")


@dataclass(frozen=True)
class Simulation:
    """``table``: one row per share and figure (``R`` per query, ``SYSTEM recall@K`` per query and its
    ``mean``): :data:`COLUMNS`; ``coverage`` is ``covered / intervals``."""

    table: pd.DataFrame
    repetitions: int
    depth: int


def labelled_by(qrels: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with the ``relevance`` the qrels give them (0 where they give none)."""
    truth = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    truth = truth.drop_duplicates(["query_id", "doc_id"]).set_index(["query_id", "doc_id"])["relevance"]
    keys = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    return pairs.assign(relevance=truth.reindex(keys).fillna(0).astype(int).to_numpy())


def simulate(
    qrels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    doc_ids: Sequence[str] | np.ndarray,
    shares: Sequence[float] = (0.05, 0.1),
    *,
    depth: int = 10,
    cutoff: int = 100,
    repetitions: int = 200,
    cuts: Sequence[int] = DEFAULT_CUTS,
    draws: int = 1000,
    relevance_level: int = 1,
) -> Simulation:
    """Coverage of the 95% intervals of R and of each run's Recall@``cutoff`` (module doc)."""
    qrels = validate(qrels, "qrels", "qrels")
    ranked = {name: sort_run(validate(run, "run", name)) for name, run in runs.items()}
    judged_queries = qrels["query_id"].astype(str).unique()
    ranked = {name: run[run["query_id"].astype(str).isin(judged_queries)] for name, run in ranked.items()}
    pool = pd.concat([run.loc[run["rank"] <= depth, ["query_id", "doc_id"]] for run in ranked.values()])
    judged = labelled_by(qrels, pool.drop_duplicates().reset_index(drop=True))
    strata = outside_strata(judged, next(iter(ranked.values())), doc_ids, cuts)
    queries = pd.Index(strata.queries)
    relevant = qrels[qrels["relevance"] >= relevance_level]
    r_true = relevant.groupby(relevant["query_id"].astype(str)).size().reindex(queries, fill_value=0).to_numpy()
    found = {
        name: labelled_by(qrels, run.loc[run["rank"] <= cutoff, ["query_id", "doc_id"]]) for name, run in ranked.items()
    }
    found_true = {
        name: (rows["relevance"] >= relevance_level).groupby(rows["query_id"].astype(str)).sum()
        for name, rows in found.items()
    }
    found_true = {name: value.reindex(queries, fill_value=0).to_numpy() for name, value in found_true.items()}
    recall_true = {name: value / np.maximum(r_true, 1) for name, value in found_true.items()}
    tops = {name: run[run["rank"] <= cutoff] for name, run in ranked.items()}  # all Recall@cutoff reads
    metric = f"recall@{cutoff}"
    rows = []
    for share in shares:
        tally: dict[str, list[float]] = {}
        labels = 0
        for seed in range(repetitions):
            sample = draw_outside(strata, share=share, seed=seed)
            labels += len(sample.pairs)
            estimate = estimate_recall(
                sample, judged, labelled_by(qrels, sample.pairs), runs=tops, cutoffs=(cutoff,),
                r_precision=False, relevance_level=relevance_level, draws=draws, seed=seed,
            )  # fmt: skip
            table = estimate.queries
            add(tally, "R", table["r_low"].to_numpy(), table["r_high"].to_numpy(), r_true)
            for name in ranked:
                mine = estimate.per_query[
                    (estimate.per_query["system"] == name) & (estimate.per_query["metric"] == metric)
                ]
                defined = mine["estimate"].notna().to_numpy()
                low, high = mine["low"].to_numpy()[defined], mine["high"].to_numpy()[defined]
                add(tally, f"{name} {metric}", low, high, recall_true[name][defined])
                mean = estimate.summary[
                    (estimate.summary["system"] == name) & (estimate.summary["metric"] == metric)
                ].iloc[0]
                truth = np.array([recall_true[name][defined].mean()])
                add(tally, f"{name} mean {metric}", np.array([mean["low"]]), np.array([mean["high"]]), truth)
                pooled = np.array([found_true[name][defined].sum() / r_true[defined].sum()])
                add(
                    tally,
                    f"{name} pooled {metric}",
                    np.array([mean["pooled_low"]]),
                    np.array([mean["pooled_high"]]),
                    pooled,
                )
        for figure, (count, covered, width) in tally.items():
            rows.append(
                (
                    share,
                    figure,
                    int(count),
                    int(covered),
                    covered / count,
                    width / count,
                    labels / repetitions / len(queries),
                )
            )
    return Simulation(pd.DataFrame(rows, columns=list(COLUMNS)), repetitions, depth)


def add(tally: dict[str, list[float]], figure: str, low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> None:
    """Count the intervals, those holding the truth, and their total width."""
    entry = tally.setdefault(figure, [0.0, 0.0, 0.0])
    entry[0] += len(truth)
    entry[1] += float(np.sum((low <= truth + 1e-12) & (truth <= high + 1e-12)))
    entry[2] += float(np.sum(high - low))
