"""What a collection's numbers are made of, as ``collection export`` reports it.

- the judges' agreement with people on the pairs both labelled, overall and by rank band (the band of
  the pair's best rank in the pool, as the sample is stratified), or a warning that it was never
  measured when there are judges' labels and no pair both labelled;
- the questions left out of the qrels (and so of ``compare`` and ``diagnose``), each with why;
- per pooled system, precision@k under the merged labels beside the estimate from the human sample
  that uses ``sample.tsv``'s inclusion probabilities, with its 95% interval
  (:func:`rankscope.evaluation.pair_sample.pair_sample_evaluate`: the judge's labels corrected by the
  people's, a difference estimator; without judges' labels it is the Horvitz-Thompson mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.reporting.report import Report

NOT_MEASURED = (
    "agreement not measured: no pair was labelled by both people and a judge, so how far the judge's "
    "labels can be trusted is unknown; label a sample (rankscope collection sample, rankscope label)"
)
ESTIMATE_DEPTH = 10
"""precision@k is reported at k = this, or the pool's depth if smaller."""

KEYS = ["query_id", "doc_id"]
QRELS = ["query_id", "doc_id", "relevance"]


def judge_agreement(people: pd.DataFrame, judged: pd.DataFrame, bands: pd.DataFrame | None) -> dict[str, Any] | None:
    """Cohen's kappa between people (merged grades) and judges on the pairs both labelled, overall and per
    rank band (``bands``: query_id, doc_id, band; pairs outside the pool are band ``outside the pool``);
    None when no pair was labelled by both."""
    from rankscope.evaluation.agreement import label_agreement

    both = people[QRELS].merge(judged[QRELS], on=KEYS, suffixes=("", "_judge"))
    if both.empty:
        return None
    if bands is not None:
        both = both.merge(bands[[*KEYS, "band"]], on=KEYS, how="left")
    both["band"] = both["band"].fillna("outside the pool") if "band" in both else "outside the pool"

    def kappa(rows: pd.DataFrame) -> dict[str, Any]:
        judge = rows[KEYS].assign(relevance=rows["relevance_judge"])
        agreement = label_agreement(rows[QRELS], judge)
        value = agreement.kappa
        return {"pairs": agreement.n_pairs, "kappa": None if value != value else value}  # NaN: one grade only

    by_band = [{"band": band, **kappa(rows)} for band, rows in both.groupby("band", sort=False)]
    order = {name: i for i, name in enumerate(sorted(set(both["band"]), key=_band_order))}
    return {"between": "people and judges", **kappa(both), "bands": sorted(by_band, key=lambda r: order[r["band"]])}


def _band_order(band: str) -> tuple[int, str]:
    head = band.split("-")[0]
    return (int(head), band) if head.isdigit() else (1 << 62, band)


def left_out(questions: list[str], merged: pd.DataFrame, pooled: pd.DataFrame | None) -> dict[str, str]:
    """Each question compare and diagnose leave out, with why: without a label in ``merged`` (they read only
    labelled questions), or whose labels hold no relevant document (the workflows' rule,
    :data:`~rankscope.evaluation.conventions.WORKFLOW_EXCLUDE_UNJUDGED`)."""
    labelled = merged.groupby("query_id")["relevance"].agg(["size", "max"])
    counts = pooled.groupby("query_id").size() if pooled is not None else pd.Series(dtype="int64")
    reasons = {}
    for query_id in questions:
        if query_id in labelled.index:
            if labelled.loc[query_id, "max"] < 1:
                reasons[query_id] = (
                    f"none of its {int(labelled.loc[query_id, 'size'])} labelled documents is relevant: compare, "
                    "diagnose and rag leave it out of the means"
                )
        elif query_id not in counts.index:
            reasons[query_id] = "not in the pool (no system retrieved a document for it, or no pool yet)"
        else:
            reasons[query_id] = (
                f"none of its {int(counts[query_id])} pooled pairs was labelled by people or a judge "
                "(rankscope collection judge DIR --judge SPEC labels them all)"
            )
    return reasons


def sample_estimates(
    ranks: pd.DataFrame,
    depth: int,
    merged: pd.DataFrame,
    people: pd.DataFrame,
    judged: pd.DataFrame,
    sample: pd.DataFrame | None,
) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """Per system of the pool, precision@k's mean under the merged labels beside the human sample's estimate
    (with its 95% interval and the pairs where people and judge disagree; None without a sample people
    labelled part of), and the estimator's warnings."""
    from rankscope.evaluation.pair_sample import pair_sample_evaluate

    k = min(ESTIMATE_DEPTH, depth)
    pooled = ranks[KEYS].drop_duplicates()
    runs = {str(name): _run(part, k) for name, part in ranks.groupby("system", sort=False)}
    rows: list[dict[str, Any]] = [
        {"system": name, "metric": f"precision@{k}", "mean": _precision(run, merged, pooled, k),
         "sample_estimate": None, "low": None, "high": None, "disagreements": None}
        for name, run in runs.items()
    ]  # fmt: skip
    drawn = sample.merge(people[QRELS], on=KEYS) if sample is not None else pd.DataFrame()
    if drawn.empty:
        return rows, ()
    drawn = drawn.assign(stratum=drawn["band"] + " " + drawn["system"])
    judge_labels = pooled.merge(judged[QRELS], on=KEYS, how="left").fillna({"relevance": 0})
    try:
        result = pair_sample_evaluate(judge_labels.astype({"relevance": "int64"}), drawn, runs, f"precision@{k}")
    except RankscopeError as exc:  # a sample that no longer fits the pool (a new pool since): said, not fatal
        return rows, (f"the sample's estimates were not made: {exc}",)
    estimates = result.means.set_index("system")
    for row in rows:
        found = estimates.loc[row["system"]]
        row.update(sample_estimate=float(found["estimate"]), low=float(found["low"]), high=float(found["high"]))
        row["disagreements"] = int(found["disagreements"])
    return rows, result.warnings


def pairs_in(frame: pd.DataFrame, other: pd.DataFrame) -> pd.Series:
    """Which rows of ``frame`` name a (query_id, doc_id) pair of ``other``."""
    keys = set(zip(other["query_id"], other["doc_id"]))
    return pd.Series([pair in keys for pair in zip(frame["query_id"], frame["doc_id"])], index=frame.index, dtype=bool)


def _run(ranks: pd.DataFrame, k: int) -> pd.DataFrame:
    """A system's run as the pool kept it (its top ``depth``), scored so that rank 1 is highest."""
    top = ranks[ranks["rank"] <= k]
    return pd.DataFrame({"query_id": top["query_id"], "doc_id": top["doc_id"], "score": -top["rank"].astype(float)})


def _precision(run: pd.DataFrame, merged: pd.DataFrame, pooled: pd.DataFrame, k: int) -> float:
    """Mean precision@k over the pool's questions under the merged labels (unlabelled: not relevant)."""
    hits = run.merge(merged[merged["relevance"] >= 1][KEYS], on=KEYS).groupby("query_id").size()
    questions = pd.unique(pooled["query_id"])
    return float(hits.reindex(questions, fill_value=0).sum() / (k * len(questions))) if len(questions) else 0.0


def report(folder: str, provenance: Mapping[str, Any]) -> Report:
    """The collection's report: labels by source and share, warnings, agreement, left-out questions, estimates."""
    out = Report(f"rankscope collection: {folder}")
    counts = provenance["labels"]
    total = sum(counts.values())
    out.heading("Labels").table(
        pd.DataFrame([{"source": s, "labels": n, "share": f"{n / total:.0%}"} for s, n in counts.items()]).set_index(
            "source"
        ),
        caption="labels by source; a pair people labelled has their grade, any other a judge's",
    )
    if provenance["warnings"]:
        out.heading("Warnings").bullets(list(provenance["warnings"]))
    if provenance["agreement"]:
        rows = [{"between": r["between"], "band": "all", "pairs": r["pairs"], "kappa": r["kappa"]} for r in
                provenance["agreement"]]  # fmt: skip
        rows += [
            {"between": "people and judges", **band} for r in provenance["agreement"] for band in r.get("bands", [])
        ]
        out.heading("Agreement").table(
            pd.DataFrame(rows), index=False, caption="Cohen's kappa on the pairs both labelled, by best-rank band"
        )
    left = provenance["left_out"]
    out.heading("Questions left out").paragraph(
        f"{len(left)} of {provenance['queries']['count']} questions" + (": none" if not left else "")
    )
    if left:
        out.bullets([f"{q}: {why}" for q, why in left.items()])
    if provenance["estimates"]:
        out.heading("Means and the sample's estimates").table(
            pd.DataFrame(provenance["estimates"]).set_index("system"),
            caption="mean under the merged labels; the estimate from the people's sample using its inclusion "
            "probabilities (judge's labels corrected by people's), with a 95% interval",
        )
    return out
