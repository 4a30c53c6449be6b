"""precision@k from human labels on a sample of (query, document) pairs, corrected from a judge's labels on every pooled pair.

A judge labels every pooled pair; people label a sample of the pairs, each drawn with a known
inclusion probability ``pi`` (``rankscope collection sample``: by rank band and system, simple random
sampling without replacement within each stratum). The number of relevant documents in a system's
top k of a query has the difference estimator (Särndal, Swensson, Wretman 1992, 6.3)

    R^ = sum over its top k of relevant(judge_d) + sum over its sampled pairs of (relevant(human_d) - relevant(judge_d)) / pi_d

unbiased whatever the judge (the Horvitz-Thompson estimate of the judge's error, added to the
judge's count), so ``precision@k = R^ / k`` per query, and its mean over the queries, are unbiased;
a budget of 300 labels reaches every query instead of 10 of them. The mean and each paired
difference with a baseline get the stratified variance ``sum_h N_h^2 (1 - n_h/N_h) s_h^2 / n_h`` of
the pairs' values (``N_h = n_h / pi``; pairs without a stratum, and strata of one sampled pair, count
as independently drawn: ``(1 - pi) / pi^2 z^2``) and Student's t on Satterthwaite's degrees of freedom
over the strata, with a warning when fewer
than :data:`FEW_DISAGREEMENTS` sampled pairs that count for it have the people disagreeing with the
judge (the interval then rests on a handful of events; docs/intervals.md gives the simulated coverage).

Metrics whose normaliser depends on the labels (recall, nDCG, AP) are refused: estimated per query
from the one to six labels a query gets at these budgets, a ratio of estimated totals was off by up to
-0.45 nDCG@10 at 50 labels and -0.11 at 300 in simulation (docs/intervals.md), so they are not offered.
Unjudged documents are non-relevant, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError

#: fewer sampled pairs than this where people and judge disagree: the normal interval is warned about
FEW_DISAGREEMENTS = 10


@dataclass(frozen=True)
class Pairs:
    """The pooled pairs as arrays: query index, the judge's label, the human label (NaN outside the
    sample), the inclusion probability (NaN outside) and the stratum code (-1: none)."""

    query: np.ndarray
    judge: np.ndarray
    human: np.ndarray
    probability: np.ndarray
    stratum: np.ndarray
    queries: int


@dataclass(frozen=True)
class Estimated:
    """One system's (or one difference's) per-query estimates, and its pairs' values for the mean's variance
    (0 outside the sample and where the people agree with the judge)."""

    per_query: np.ndarray
    influence: np.ndarray


def parse_metric(metric: str) -> int:
    """The k of ``precision@k``; any other metric is one clear error saying why."""
    name, _, cut = metric.partition("@")
    if name != "precision" or not cut.isdigit() or int(cut) < 1:
        raise RankscopeError(
            f"metric {metric!r}: a pair sample estimates precision@k (k a positive integer); metrics whose "
            "normaliser depends on the labels (recall, nDCG, AP) are too biased from a few labels a query "
            "(docs/intervals.md)"
        )
    return int(cut)


def estimate_system(pairs: Pairs, ranks: np.ndarray, k: int, relevance_level: int = 1) -> Estimated:
    """Per-query precision@k of one system whose rank of each pooled pair is ``ranks`` (0 outside its
    top k), and each pair's value for the mean over the queries."""
    sampled = ~np.isnan(pairs.probability)
    in_top = ((ranks >= 1) & (ranks <= k)).astype(float)
    judged = (pairs.judge >= relevance_level).astype(float)
    error = np.where(sampled, in_top * ((pairs.human >= relevance_level) - judged), 0.0)
    expanded = np.divide(error, pairs.probability, out=np.zeros_like(error), where=sampled)
    found = np.bincount(pairs.query, in_top * judged + expanded, minlength=pairs.queries)
    return Estimated(found / k, error / k / pairs.queries)


def disagreements(pairs: Pairs, influence: np.ndarray) -> int:
    """How many pairs drawn with a probability under 1 count for an estimate with people and judge
    disagreeing there: the events its interval rests on (pairs everyone labels are known, not drawn)."""
    return int(np.count_nonzero(influence[pairs.probability < 1]))


def variance(pairs: Pairs, influence: np.ndarray) -> tuple[float, float]:
    """The variance estimate of ``sum over the sample of influence / pi`` (see the module doc) and its
    degrees of freedom (Satterthwaite's, over the strata; each independently drawn pair counts as a
    stratum of its own with one degree of freedom); at least 1."""
    sampled = ~np.isnan(pairs.probability)
    z, pi, stratum = influence[sampled], pairs.probability[sampled], pairs.stratum[sampled]
    alone = stratum < 0
    parts, freedoms = [], []
    for code in np.unique(stratum[~alone]):
        members = stratum == code
        if members.sum() < 2:
            alone |= members
            continue
        drawn, probability = int(members.sum()), float(pi[members][0])
        parts.append((drawn / probability) ** 2 * (1 - probability) * float(np.var(z[members], ddof=1)) / drawn)
        freedoms.append(drawn - 1)
    parts += list((1 - pi[alone]) / pi[alone] ** 2 * z[alone] ** 2)
    freedoms += [1] * int(alone.sum())
    terms, df = np.array(parts), np.array(freedoms, dtype=float)
    total = float(terms.sum())
    spread = float(np.sum(terms**2 / df)) if len(terms) else 0.0
    return total, max(1.0, total**2 / spread) if spread > 0 else 1.0


@dataclass(frozen=True)
class PairResult:
    """``per_query``: system, query_id, estimate. ``means``: system, estimate, se, low, high,
    disagreements (the mean over the queries). ``differences``: system, baseline and the same columns
    for each system minus the baseline (empty without one). ``warnings``: one line per row with fewer
    than :data:`FEW_DISAGREEMENTS` disagreements."""

    metric: str
    confidence: float
    per_query: pd.DataFrame
    means: pd.DataFrame
    differences: pd.DataFrame
    warnings: tuple[str, ...] = ()


def pair_sample_evaluate(
    judge_qrels: pd.DataFrame,
    sample: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    metric: str,
    *,
    baseline: str | None = None,
    confidence: float = 0.95,
    relevance_level: int = 1,
) -> PairResult:
    """Each run's ``metric`` (precision@k) per query and mean, from the judge's labels on every pooled pair
    (``judge_qrels``: query_id, doc_id, relevance) corrected by people's labels on ``sample``
    (query_id, doc_id, relevance, inclusion_probability, and optionally stratum).

    The pool (and the queries the mean is over) is ``judge_qrels``'s pairs; every sampled pair must be
    one of them. A run's documents outside the pool are non-relevant.
    """
    from scipy.stats import t

    from rankscope.corpora.schema import sort_run, validate

    if not 0 < confidence < 1:
        raise RankscopeError(f"confidence must be between 0 and 1, got {confidence}")
    if not runs:
        raise RankscopeError("no runs to estimate")
    if baseline is not None and baseline not in runs:
        raise SchemaError(f"baseline {baseline!r} is not among the systems {list(runs)}")
    k = parse_metric(metric)
    pool = validate(judge_qrels, "qrels", "judge qrels")
    pairs, keys = _pairs(pool, sample)
    found = {}
    for system, run in runs.items():
        ranked = sort_run(validate(run, "run", f"run {system!r}"))
        ranked = ranked.assign(rank=ranked.groupby("query_id", sort=False).cumcount() + 1)
        top = ranked[ranked["rank"] <= k].set_index(["query_id", "doc_id"])["rank"]
        ranks = top.reindex(keys).fillna(0).to_numpy(dtype=np.int64)
        found[system] = estimate_system(pairs, ranks, k, relevance_level)
    queries = pd.unique(pool["query_id"].astype(str))
    warnings = []
    known = bool(np.all(pairs.probability == 1))  # every pooled pair labelled: exact, nothing to warn of

    def row(name: str, estimate: float, influence: np.ndarray) -> dict[str, float]:
        var, df = variance(pairs, influence)
        se, z = float(np.sqrt(var)), float(t.ppf(0.5 + confidence / 2, df))
        events = disagreements(pairs, influence)
        if events < FEW_DISAGREEMENTS and not known:
            warnings.append(
                f"{metric} of {name}: only {events} sampled pairs where people and judge disagree; the "
                f"interval needs about {FEW_DISAGREEMENTS} (docs/intervals.md): label more pairs"
            )
        return {"estimate": estimate, "se": se, "low": estimate - z * se, "high": estimate + z * se,
                "disagreements": events}  # fmt: skip

    per_query = pd.concat(
        [pd.DataFrame({"system": s, "query_id": queries, "estimate": e.per_query}) for s, e in found.items()],
        ignore_index=True,
    )
    means = pd.DataFrame([{"system": s, **row(s, float(e.per_query.mean()), e.influence)} for s, e in found.items()])
    rows = []
    if baseline is not None:
        base = found[baseline]
        for s, e in found.items():
            if s != baseline:
                delta = float((e.per_query - base.per_query).mean())
                influence = e.influence - base.influence
                rows.append({"system": s, "baseline": baseline, **row(f"{s} - {baseline}", delta, influence)})
    columns = ["system", "baseline", "estimate", "se", "low", "high", "disagreements"]
    return PairResult(metric, confidence, per_query, means, pd.DataFrame(rows, columns=columns), tuple(warnings))


def _pairs(pool: pd.DataFrame, sample: pd.DataFrame) -> tuple[Pairs, pd.MultiIndex]:
    """The pool and the sample as :class:`Pairs`, the sample checked: known pairs, each once, 0 < pi <= 1."""
    missing = {"query_id", "doc_id", "relevance", "inclusion_probability"} - set(sample.columns)
    if missing:
        raise SchemaError(
            f"pair sample: no column {sorted(missing)[0]!r} (query_id, doc_id, relevance, inclusion_probability)"
        )
    pool = pool.assign(query_id=pool["query_id"].astype(str), doc_id=pool["doc_id"].astype(str))
    keys = pd.MultiIndex.from_frame(pool[["query_id", "doc_id"]])
    if keys.has_duplicates:
        query, doc = keys[keys.duplicated()][0]
        raise SchemaError(f"judge qrels: pair ({query}, {doc}) appears more than once")
    drawn = sample.assign(query_id=sample["query_id"].astype(str), doc_id=sample["doc_id"].astype(str))
    drawn_keys = pd.MultiIndex.from_frame(drawn[["query_id", "doc_id"]])
    if drawn_keys.has_duplicates:
        query, doc = drawn_keys[drawn_keys.duplicated()][0]
        raise SchemaError(f"pair sample: pair ({query}, {doc}) appears more than once")
    outside = ~drawn_keys.isin(keys)
    if outside.any():
        query, doc = drawn_keys[outside][0]
        raise SchemaError(f"pair sample: pair ({query}, {doc}) is not in the pool the judge labelled")
    probability = pd.to_numeric(drawn["inclusion_probability"], errors="coerce").to_numpy(dtype=float)
    label = pd.to_numeric(drawn["relevance"], errors="coerce").to_numpy(dtype=float)
    bad = ~((probability > 0) & (probability <= 1)) | ~np.isfinite(label)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        query, doc = drawn_keys[i]
        given = drawn["inclusion_probability"].tolist()[i], drawn["relevance"].tolist()[i]
        raise SchemaError(
            f"pair sample: pair ({query}, {doc}) has inclusion probability {given[0]!r} and label {given[1]!r}; "
            "a probability in (0, 1] and a numeric label are needed"
        )
    position = keys.get_indexer(drawn_keys)
    human = np.full(len(keys), np.nan)
    pi = np.full(len(keys), np.nan)
    human[position], pi[position] = label, probability
    stratum = np.full(len(keys), -1, dtype=np.int64)
    if "stratum" in drawn.columns:
        names = drawn["stratum"].astype(str)
        mixed = pd.Series(probability).groupby(names.to_numpy()).nunique()
        if (mixed > 1).any():
            raise SchemaError(
                f"pair sample: stratum {mixed.index[mixed > 1][0]!r} has pairs with different inclusion "
                "probabilities; a stratum's pairs are drawn alike (drawn / size), so one probability each"
            )
        stratum[position] = pd.factorize(names)[0]
    query_codes = pd.factorize(pool["query_id"])[0]
    judge = pool["relevance"].to_numpy(dtype=float)
    return Pairs(query_codes, judge, human, pi, stratum, int(query_codes.max()) + 1 if len(pool) else 0), keys
