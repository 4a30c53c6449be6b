"""Recall beyond the pool: R, Recall@K and R-precision from the judged pool plus a labelled sample outside it.

Per query, with the judged pool's relevant documents ``J`` and, in each stratum h of the unjudged
documents (:mod:`rankscope.evaluation.outside_pool`), ``N_h`` documents of which ``n_h`` were labelled
and ``x_h`` found relevant (inclusion probability ``n_h / N_h``):

- point estimates are Horvitz-Thompson: ``R^ = J + sum_h x_h N_h / n_h``; a system's relevant
  documents in its top K are its judged relevant ones there plus ``N_h / n_h`` for each sampled
  relevant one; Recall@K is their ratio to R^ and R-precision the same at rank ``round(R^)``
  (ratio estimators: consistent, not exactly unbiased);
- intervals come from draws of what was not labelled (``draws``, seeded): in each stratum the share
  of relevant documents is drawn from Beta(x_h + 1/2, n_h - x_h + 1/2) (Jeffreys' prior) and the
  relevant count among the ``N_h - n_h`` unlabelled documents from the binomial of that share (the
  beta-binomial, so the finite stratum is exact: what was labelled is known, only the rest varies);
  a system's share of them in its top K (or top R) is hypergeometric. Every figure is computed on
  every draw, the per-query ones and their means over queries alike, and the interval is the draws'
  equal-tailed quantiles. Jeffreys' interval is the one of a binomial share whose coverage stays
  closest to the nominal level on average without the zero width of the normal interval at
  ``x_h = 0`` (Brown, Cai & DasGupta 2001); a stratum with no labelled pair keeps the prior's
  whole width. Coverage on Cranfield and CISI, by simulation with the full judgments as truth, is in
  docs/recall.md.

A pair drawn but not labelled is taken as not drawn (``n_h`` counts labelled pairs only), which is
right when whether a pair was labelled has nothing to do with its relevance. Queries with no known
relevant document (neither judged nor sampled) have no recall (trec_eval skips them too) and are left
out of the means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.outside_pool import OutsideSample

JEFFREYS = 0.5
"""Jeffreys' prior Beta(1/2, 1/2) for the pooled share of relevant documents of a stratum over the queries."""

QUERY_COLUMNS = (
    "query_id", "judged_relevant", "labelled", "labelled_relevant", "r_hat", "r_low", "r_high",
    "outside_pool_share", "unjudged_share", "unjudged_low", "unjudged_high",
)  # fmt: skip


SUMMARY_COLUMNS = ("system", "metric", "queries", "mean", "low", "high", "pooled", "pooled_low", "pooled_high")


@dataclass(frozen=True)
class RecallEstimate:
    """``queries`` (:data:`QUERY_COLUMNS`: R and the share of R outside everything judged, per query);
    ``per_query`` (``system, metric, query_id, estimate, low, high``) and ``summary``
    (:data:`SUMMARY_COLUMNS`: over the queries with a known relevant document, the mean of the
    per-query values, and ``pooled``, their relevant documents found over their relevant documents)."""

    queries: pd.DataFrame
    per_query: pd.DataFrame
    summary: pd.DataFrame
    confidence: float
    draws: int


@dataclass(frozen=True)
class Counts:
    """What the labels say per query (``q``) and cell (``c``: a stratum, or a stratum's part inside or
    outside a run's top ranks), and draws of what they do not."""

    judged: np.ndarray  # (q,) judged relevant documents in the pool
    sizes: np.ndarray  # (q, c) unjudged documents
    labelled: np.ndarray  # (q, c) labelled ones
    relevant: np.ndarray  # (q, c) labelled relevant ones
    unlabelled_relevant: np.ndarray  # (draws, q, c)

    @classmethod
    def drawn(
        cls,
        judged: np.ndarray,
        sizes: np.ndarray,
        labelled: np.ndarray,
        relevant: np.ndarray,
        draws: int,
        rng: np.random.Generator,
    ) -> Counts:
        """Each cell's share of relevant documents drawn from its posterior (prior: :func:`cell_priors`),
        then the relevant count among its unlabelled documents from the binomial of that share (a cell no
        query has an unlabelled document in is 0 in every draw, and not drawn)."""
        free = sizes - labelled
        unlabelled_relevant = np.zeros((draws, *sizes.shape), dtype=np.int64)
        for c in np.flatnonzero(free.any(axis=0)):
            a, b = cell_priors(relevant[:, c], labelled[:, c], draws, rng).T
            share = rng.beta(relevant[:, c] + a[:, None], labelled[:, c] - relevant[:, c] + b[:, None])
            unlabelled_relevant[:, :, c] = rng.binomial(free[:, c], share)
        return cls(judged, sizes, labelled, relevant, unlabelled_relevant)

    @property
    def known(self) -> np.ndarray:
        return self.judged + self.relevant.sum(axis=1)

    @property
    def weights(self) -> np.ndarray:
        """``N / n`` (0 where nothing was labelled: HT leaves the cell out)."""
        return np.where(self.labelled > 0, self.sizes / np.maximum(self.labelled, 1), 0.0)

    @property
    def r_hat(self) -> np.ndarray:
        return self.judged + (self.relevant * self.weights).sum(axis=1)

    @property
    def r_draws(self) -> np.ndarray:
        return self.known[None, :] + self.unlabelled_relevant.sum(axis=2)


def estimate_recall(
    sample: OutsideSample,
    judged: pd.DataFrame,
    labels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    cutoffs: Sequence[int] = (100,),
    *,
    r_precision: bool = True,
    relevance_level: int = 1,
    confidence: float = 0.95,
    draws: int = 2000,
    seed: int = 0,
) -> RecallEstimate:
    """R per query and each run's Recall@K (``cutoffs``) and R-precision, with intervals (module doc).

    ``judged``: the judgments the strata left out (``query_id, doc_id, relevance``); ``labels``: the
    labels of the sample's pairs (same columns; a label of a pair not drawn is refused).
    """
    if not 0 < confidence < 1:
        raise RankscopeError(f"confidence must be between 0 and 1, got {confidence!r}")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 100:
        raise RankscopeError(f"at least 100 draws give an interval, got {draws!r}")
    rng = np.random.default_rng(seed)
    judged = as_labels(judged, "the judged pairs")
    strata = sample.strata
    queries = pd.Index(strata.queries)
    judged_relevant = relevant_by_query(judged, relevance_level).reindex(queries, fill_value=0).to_numpy()
    labelled_pairs = labelled_sample(sample, labels, relevance_level)
    q_at = queries.get_indexer(labelled_pairs["query_id"])
    h_at = pd.Index(strata.names).get_indexer(labelled_pairs["stratum"])
    shape = strata.sizes.shape
    labelled = np.zeros(shape, dtype=np.int64)
    relevant = np.zeros(shape, dtype=np.int64)
    np.add.at(labelled, (q_at, h_at), 1)
    np.add.at(relevant, (q_at, h_at), labelled_pairs["relevant"].to_numpy().astype(np.int64))
    counts = Counts.drawn(judged_relevant, strata.sizes, labelled, relevant, draws, rng)
    alpha = 1 - confidence
    r_draws = counts.r_draws
    known = counts.known
    r_hat = counts.r_hat
    unjudged = counts.unlabelled_relevant.sum(axis=2) / np.maximum(r_draws, 1)
    unjudged_point = np.divide(r_hat - known, r_hat, out=np.zeros(len(queries)), where=r_hat > 0)
    table = pd.DataFrame(
        {
            "query_id": queries,
            "judged_relevant": judged_relevant,
            "labelled": labelled.sum(axis=1),
            "labelled_relevant": relevant.sum(axis=1),
            "r_hat": r_hat,
            "r_low": quantile(r_draws, alpha / 2),
            "r_high": quantile(r_draws, 1 - alpha / 2),
            "outside_pool_share": np.divide(
                r_hat - judged_relevant, r_hat, out=np.zeros(len(queries)), where=r_hat > 0
            ),
            "unjudged_share": unjudged_point,
            "unjudged_low": quantile(unjudged, alpha / 2),
            "unjudged_high": quantile(unjudged, 1 - alpha / 2),
        },
        columns=list(QUERY_COLUMNS),
    )
    judged_labels = judged.assign(relevant=judged["relevance"].to_numpy() >= relevance_level, weight=1.0)
    judged_labels = judged_labels.assign(stratum=-1)
    sampled_labels = labelled_pairs.assign(weight=counts.weights[q_at, h_at], stratum=h_at)
    columns = ["query_id", "doc_id", "relevant", "weight", "stratum"]
    known_labels = pd.concat([judged_labels[columns], sampled_labels[columns]], ignore_index=True)
    has_relevant = known > 0
    tails = np.array([alpha / 2, 1 - alpha / 2])
    rows, summary = [], []
    for name, run in runs.items():
        ranking = Ranking.of(run, sample, known_labels)
        figures = {f"recall@{k}": ranking.recall(k, counts, rng) for k in cutoffs}
        if r_precision:
            figures["rprec"] = ranking.r_precision(counts, rng)
        for metric, ratio in figures.items():
            point, values = ratio.point(has_relevant), ratio.draws(has_relevant)
            rows.append(
                pd.DataFrame(
                    {
                        "system": name,
                        "metric": metric,
                        "query_id": queries,
                        "estimate": point,
                        "low": quantile(values, alpha / 2),
                        "high": quantile(values, 1 - alpha / 2),
                    }
                )
            )
            if has_relevant.any():
                pooled, pooled_draws = ratio.pooled(has_relevant)
                limits = quantile(np.column_stack([values[:, has_relevant].mean(axis=1), pooled_draws]), tails)
                mean = float(point[has_relevant].mean())
            else:
                pooled, limits, mean = np.nan, np.full((2, 2), np.nan), np.nan
            summary.append((name, metric, int(has_relevant.sum()), mean, *limits[:, 0], pooled, *limits[:, 1]))
    per_query = (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=["system", "metric", "query_id", "estimate", "low", "high"])
    )
    return RecallEstimate(
        table,
        per_query,
        pd.DataFrame(summary, columns=list(SUMMARY_COLUMNS)),
        confidence,
        draws,
    )


def cell_priors(relevant: np.ndarray, labelled: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws (draws, 2) of the Beta prior ``(a, b)`` of one cell's share of relevant documents, from
    every query's labels in that cell (empirical Bayes): its strength ``a + b`` the one under which the
    queries' counts are likeliest (beta-binomial; at most the cell's labels in all), its mean drawn
    from the pooled share's Jeffreys posterior with the labels discounted by the design effect
    ``1 + (mean labels - 1) / (strength + 1)`` (labels of one query resemble each other), so what all
    queries share is uncertain in every draw and a mean over queries is not over-confident."""
    from scipy.optimize import minimize_scalar
    from scipy.special import betaln

    seen = labelled > 0
    if not seen.any():
        return np.full((draws, 2), JEFFREYS)
    x, n = relevant[seen].astype(float), labelled[seen].astype(float)
    mean = (x.sum() + JEFFREYS) / (n.sum() + 2 * JEFFREYS)

    def unlikely(log_strength: float) -> float:
        a, b = mean * np.exp(log_strength), (1 - mean) * np.exp(log_strength)
        return -float(np.sum(betaln(x + a, n - x + b) - betaln(a, b)))

    low, high = np.log(2 * JEFFREYS), np.log(max(n.mean(), 2 * JEFFREYS))
    strength = float(np.exp(minimize_scalar(unlikely, bounds=(low, high), method="bounded").x)) if high > low else 1.0
    effect = 1 + (n.mean() - 1) / (strength + 1)
    means = rng.beta(x.sum() / effect + JEFFREYS, (n.sum() - x.sum()) / effect + JEFFREYS, size=draws)
    return np.column_stack([means * strength, (1 - means) * strength])


def quantile(values: np.ndarray, at: float | np.ndarray) -> np.ndarray:
    """Equal-tailed limits over the draws (axis 0), as values the draws took (``inverted_cdf``)."""
    return np.quantile(values, at, axis=0, method="inverted_cdf")


def as_labels(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """``query_id, doc_id, relevance`` checked as qrels are (whole-number labels, no missing value), ids as str."""
    checked = validate(frame, "qrels", what)
    return pd.DataFrame(
        {
            "query_id": checked["query_id"].astype(object).astype(str),
            "doc_id": checked["doc_id"].astype(object).astype(str),
            "relevance": checked["relevance"].to_numpy(),
        }
    )


def relevant_by_query(judged: pd.DataFrame, relevance_level: int) -> pd.Series:
    """Relevant judgments per query id (str)."""
    relevant = judged[judged["relevance"].to_numpy() >= relevance_level]
    return relevant.groupby(relevant["query_id"].astype(str)).size()


def labelled_sample(sample: OutsideSample, labels: pd.DataFrame, relevance_level: int) -> pd.DataFrame:
    """The sample's pairs that have a label, with ``relevant``; a label of a pair not drawn is refused."""
    given = as_labels(labels, "the sample's labels")
    if given.duplicated(["query_id", "doc_id"]).any():
        row = given[given.duplicated(["query_id", "doc_id"])].iloc[0]
        raise RankscopeError(f"the sample's labels give query {row['query_id']!r}, document {row['doc_id']!r} twice")
    merged = given.merge(sample.pairs, on=["query_id", "doc_id"], how="left", indicator=True)
    stray = merged["_merge"] == "left_only"
    if stray.any():
        row = merged[stray].iloc[0]
        raise RankscopeError(
            f"a label of query {row['query_id']!r}, document {row['doc_id']!r} is not of a drawn pair: "
            "labels outside the sample would bias the estimate; add them to the judged pairs and draw again"
        )
    return merged.assign(relevant=merged["relevance"].to_numpy() >= relevance_level).drop(columns="_merge")


@dataclass(frozen=True)
class Ranking:
    """One run over the sample's queries, as running counts down its ranks (the last column is its
    depth; a deeper rank reads it): known relevant documents (``known``, shape (q, ranks + 1)), their
    HT weights (``weighted``), and per stratum the unlabelled unjudged documents (``unknown``, shape
    (q, h, ranks + 1)), the labelled sample's documents (``labelled``) and its relevant ones (``relevant``)."""

    known: np.ndarray
    weighted: np.ndarray
    unknown: np.ndarray
    labelled: np.ndarray
    relevant: np.ndarray

    @classmethod
    def of(cls, run: pd.DataFrame, sample: OutsideSample, labels: pd.DataFrame) -> Ranking:
        """``labels``: every known pair's ``relevant``, HT ``weight`` (1 for judged pairs) and ``stratum``
        code (-1 for judged pairs)."""
        strata = sample.strata
        queries = pd.Index(strata.queries)
        ranked = sort_run(validate(run, "run", "run"))
        ranked = ranked[ranked["query_id"].isin(queries)]
        ranked = ranked.merge(labels, on=["query_id", "doc_id"], how="left")
        depth = int(ranked["rank"].max()) if len(ranked) else 0
        q_at = queries.get_indexer(ranked["query_id"])
        rank = ranked["rank"].to_numpy().astype(np.int64)
        position = pd.Index(strata.doc_ids).get_indexer(ranked["doc_id"])
        if (position < 0).any():
            row = ranked[position < 0].iloc[0]
            raise RankscopeError(
                f"the run ranks {row['doc_id']!r} for query {row['query_id']!r}, not a document of the corpus"
            )
        unknown_rows = ranked["relevant"].isna().to_numpy()
        stratum = ranked["stratum"].fillna(-1).to_numpy().astype(np.int64)
        for q in np.unique(q_at[unknown_rows]):
            at = np.flatnonzero(unknown_rows & (q_at == q))
            stratum[at] = strata.stratum_of(int(q), position[at])
        relevant = ranked["relevant"].fillna(False).to_numpy().astype(bool)
        weight = ranked["weight"].to_numpy()
        tables = [np.zeros((len(queries), depth + 1)) for _ in range(2)]
        np.add.at(tables[0], (q_at[relevant], rank[relevant]), 1)
        np.add.at(tables[1], (q_at[relevant], rank[relevant]), weight[relevant])
        by_stratum = [np.zeros((len(queries), strata.sizes.shape[1], depth + 1), dtype=np.int64) for _ in range(3)]
        for table, rows in zip(by_stratum, (unknown_rows, ~unknown_rows, ~unknown_rows & relevant)):
            rows = rows & (stratum >= 0)
            np.add.at(table, (q_at[rows], stratum[rows], rank[rows]), 1)
        return cls(*(np.cumsum(table, axis=-1) for table in (*tables, *by_stratum)))

    def at(self, table: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """``table``'s running counts at rank ``ranks`` (per query, or (draws, q)): (.., q) or (.., q, h)."""
        clipped = np.minimum(ranks, table.shape[-1] - 1)
        if table.ndim == 2:
            return table[np.arange(table.shape[0]), clipped]
        q = np.arange(table.shape[0])[:, None]
        h = np.arange(table.shape[1])[None, :]
        return table[q, h, clipped[..., None]]

    def cells(self, counts: Counts, split: np.ndarray, draws: int, rng: np.random.Generator) -> Counts:
        """The strata cut at rank ``split`` of each query: cells ``h`` inside the top ``split``, then ``h``
        outside it, each with its own labels and posterior (a run's top documents of a stratum are more
        often relevant than the stratum's others)."""
        inside = [self.at(table, split) for table in (self.unknown, self.labelled, self.relevant)]
        sizes = inside[0] + inside[1]
        return Counts.drawn(
            counts.judged,
            np.hstack([sizes, counts.sizes - sizes]),
            np.hstack([inside[1], counts.labelled - inside[1]]),
            np.hstack([inside[2], counts.relevant - inside[2]]),
            draws,
            rng,
        )

    def found(self, cells: Counts, split: np.ndarray, ranks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Drawn relevant documents in each query's top ``ranks`` (draws, q), with ``cells`` cut at ``split``:
        known ones, and of the unlabelled ones inside and outside the split, a hypergeometric share."""
        strata = self.unknown.shape[1]
        drawn = cells.unlabelled_relevant
        free = cells.sizes - cells.labelled
        above = self.at(self.unknown, np.minimum(ranks, split[None, :]))
        below = self.at(self.unknown, np.maximum(ranks, split[None, :])) - self.at(self.unknown, split)[None]
        hits = rng.hypergeometric(drawn[..., :strata], free[None, :, :strata] - drawn[..., :strata], above)
        hits += rng.hypergeometric(drawn[..., strata:], free[None, :, strata:] - drawn[..., strata:], below)
        return self.at(self.known, ranks) + hits.sum(axis=2)

    def recall(self, k: int, counts: Counts, rng: np.random.Generator) -> Ratio:
        """Recall@k: relevant documents in the top k over R."""
        draws = counts.unlabelled_relevant.shape[0]
        split = np.full(len(counts.judged), k)
        cells = self.cells(counts, split, draws, rng)
        found = self.found(cells, split, np.broadcast_to(split, (draws, len(split))), rng)
        return Ratio(self.at(self.weighted, split), counts.r_hat, found, cells.r_draws)

    def r_precision(self, counts: Counts, rng: np.random.Generator) -> Ratio:
        """R-precision: relevant documents in the top R over R; the HT point at R^ rounded, and the
        draws with the cells cut there."""
        draws = counts.unlabelled_relevant.shape[0]
        split = np.maximum(np.rint(counts.r_hat), 1).astype(np.int64)
        cells = self.cells(counts, split, draws, rng)
        r_draws = cells.r_draws
        return Ratio(self.at(self.weighted, split), counts.r_hat, self.found(cells, split, r_draws, rng), r_draws)


@dataclass(frozen=True)
class Ratio:
    """A per-query ratio: its HT numerator and denominator (q,) and their draws (draws, q)."""

    top: np.ndarray
    bottom: np.ndarray
    top_draws: np.ndarray
    bottom_draws: np.ndarray

    def point(self, kept: np.ndarray) -> np.ndarray:
        """Per query (NaN where not ``kept``)."""
        return np.where(kept, self.top / np.where(kept & (self.bottom > 0), self.bottom, 1), np.nan)

    def draws(self, kept: np.ndarray) -> np.ndarray:
        return np.where(kept[None, :], self.top_draws / np.maximum(self.bottom_draws, 1), np.nan)

    def pooled(self, kept: np.ndarray) -> tuple[float, np.ndarray]:
        """Over the ``kept`` queries, relevant documents found over relevant documents (micro-average):
        the point and its draws."""
        return (
            float(self.top[kept].sum() / max(self.bottom[kept].sum(), 1e-12)),
            self.top_draws[:, kept].sum(axis=1) / np.maximum(self.bottom_draws[:, kept].sum(axis=1), 1),
        )
