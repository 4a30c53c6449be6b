"""Sampled ranking evaluation, as in the recommender literature.

For every relevant (query, document) pair, the document is ranked among
``n_negatives`` documents drawn uniformly without replacement from the
collection minus the query's relevant documents (relevance >= relevance_level)
and minus ``exclude`` (for interaction data: the user's training items). The
``n_negatives + 1`` candidates are scored, ordered by the trec_eval tie rule
(score descending, then doc_id descending) and scored with :func:`evaluate`
against that single relevant document. A query's value is the mean over its
pairs; a repeat's value is the mean over queries (queries with no relevant
document take no part). ``repeats`` draws with seeds ``(seed, repeat)`` give
the mean and the spread (sample standard deviation, ddof=1).

Ties: a target that ties with negatives is placed among them by doc_id, like
any other document; some papers instead rank the target above all tied
negatives (optimistic), which inflates scorers that give many equal scores.
``SampledResult.tied_fraction`` says how often it mattered.

Scorers: an object with ``score(query_text, doc_ids)`` (the retriever
protocol; ``queries`` must give the text) or a plain callable
``f(query_id, doc_ids)`` (recommenders: the query is the user id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import SchemaError
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.schema import validate
from rankscope.evaluation import evaluate
from rankscope.evaluation.loo import checked_scores
from rankscope.evaluation.metrics import parse_metric
from rankscope.evaluation.options import RELEVANCE_LEVEL
from rankscope.evaluation.ranking import find_sorted
from rankscope.evaluation.results import wide_table


@dataclass(frozen=True)
class SampledResult:
    """Metric values of a sampled evaluation: per repeat, per query and summarised."""

    per_repeat: pd.DataFrame  # repeat, metric, value
    per_query: pd.DataFrame  # query_id, metric, value (mean over repeats)
    summary: pd.DataFrame  # metric, mean, std, min, max over repeats
    tied_fraction: float  # share of (pair, repeat) draws where the target tied with a negative
    n_pairs: int

    @property
    def mean(self) -> dict[str, float]:
        """Mean over repeats per metric, in metric order."""
        return dict(zip(self.summary["metric"], self.summary["mean"]))

    @property
    def std(self) -> dict[str, float]:
        """Standard deviation over repeats per metric."""
        return dict(zip(self.summary["metric"], self.summary["std"]))

    def wide(self) -> pd.DataFrame:
        """Per-query means over repeats: index ``query_id``, one column per metric (for significance tests)."""
        return wide_table(self.per_query, self.summary["metric"])


@check_arguments(n_negatives=Param(int, low=1), repeats=Param(int, low=1), relevance_level=RELEVANCE_LEVEL)
def sampled_evaluate(
    qrels: pd.DataFrame,
    scorer: object,
    doc_ids: Sequence[str],
    metrics: Sequence[str] = ("hit@10", "ndcg@10"),
    *,
    queries: pd.DataFrame | Mapping[str, str] | None = None,
    exclude: pd.DataFrame | None = None,
    n_negatives: int = 100,
    repeats: int = 10,
    seed: int = 0,
    relevance_level: int = 1,
) -> SampledResult:
    """Rank each relevant document among ``n_negatives`` sampled ones, ``repeats`` times (see module doc)."""
    for name in metrics:
        parse_metric(name)  # fail before scoring thousands of candidate lists
    judged = validate(qrels, "qrels", "qrels")
    relevant = judged[judged["relevance"] >= relevance_level].sort_values(["query_id", "doc_id"], kind="stable")
    if relevant.empty:
        raise SchemaError(f"qrels: no document has relevance >= {relevance_level}; nothing to rank")
    universe = pd.Index(sorted(set(map(str, doc_ids))))
    forbidden = _forbidden_positions(relevant, exclude, universe, n_negatives)
    score = _score_function(scorer, queries)
    pair_query = relevant["query_id"].to_numpy()
    pair_doc = relevant["doc_id"].to_numpy()
    # one evaluation unit per (repeat, pair), in the order the loop below draws them
    units = [f"{repeat}:{pair}" for repeat in range(repeats) for pair in range(len(pair_query))]
    candidate_lists, score_lists, ties = [], [], 0
    for repeat in range(repeats):
        rng = np.random.default_rng([seed, repeat])
        for query_id, target in zip(pair_query, pair_doc):
            negatives = universe[_draw(rng, len(universe), forbidden[query_id], n_negatives)]
            candidates = np.concatenate(([target], negatives))
            values = checked_scores(score(query_id, candidates), query_id, len(candidates))
            ties += bool(np.any(values[1:] == values[0]))
            candidate_lists.append(candidates)
            score_lists.append(values)
    result = evaluate(
        pd.DataFrame({"query_id": units, "doc_id": np.tile(pair_doc, repeats), "relevance": 1}),
        pd.DataFrame(
            {
                "query_id": np.repeat(units, n_negatives + 1),
                "doc_id": np.concatenate(candidate_lists),
                "score": np.concatenate(score_lists),
            }
        ),
        list(metrics),
    )
    return _summarise(result.per_query, pair_query, result.metrics, repeats, ties, len(pair_query))


def _summarise(
    per_unit: pd.DataFrame, pair_query: np.ndarray, metrics: list[str], repeats: int, ties: int, n_pairs: int
) -> SampledResult:
    """Average units into queries, queries into repeats, repeats into mean and spread."""
    unit = per_unit["query_id"].str.split(":", n=1, expand=True)
    frame = pd.DataFrame(
        {
            "repeat": unit[0].astype(np.int64).to_numpy(),
            "query_id": pair_query[unit[1].astype(np.int64).to_numpy()],
            "metric": per_unit["metric"].to_numpy(),
            "value": per_unit["value"].to_numpy(dtype=np.float64),
        }
    )
    by_query = frame.groupby(["repeat", "metric", "query_id"], sort=False)["value"].mean().reset_index()
    per_repeat = by_query.groupby(["repeat", "metric"], sort=False)["value"].mean().reset_index()
    per_query = by_query.groupby(["query_id", "metric"], sort=False)["value"].mean().reset_index()
    stats = per_repeat.groupby("metric", sort=False)["value"].agg(["mean", "std", "min", "max"])
    summary = stats.reindex(metrics).rename_axis("metric").reset_index()
    if repeats == 1:
        summary["std"] = 0.0
    order = {m: i for i, m in enumerate(metrics)}

    def metrics_in_request_order(column: pd.Series) -> pd.Series:
        return column.map(order) if column.name == "metric" else column

    per_repeat = per_repeat.sort_values(["repeat", "metric"], key=metrics_in_request_order)
    per_query = per_query.sort_values(["query_id", "metric"], key=metrics_in_request_order)
    return SampledResult(
        per_repeat=per_repeat.reset_index(drop=True)[["repeat", "metric", "value"]],
        per_query=per_query.reset_index(drop=True)[["query_id", "metric", "value"]],
        summary=summary,
        tied_fraction=ties / (repeats * n_pairs),
        n_pairs=n_pairs,
    )


def _forbidden_positions(
    relevant: pd.DataFrame, exclude: pd.DataFrame | None, universe: pd.Index, n_negatives: int
) -> dict[str, np.ndarray]:
    """Per query, the universe positions that may not be drawn; refuse queries with too few left."""
    pairs = [relevant[["query_id", "doc_id"]]]
    if exclude is not None:
        missing = [c for c in ("query_id", "doc_id") if c not in exclude.columns]
        if missing:
            raise SchemaError(
                f"exclude: missing column(s) {missing}; expected query_id, doc_id, "
                f"found {list(map(str, exclude.columns))}"
            )
        pairs.append(exclude[["query_id", "doc_id"]].astype(str))
    blocked = pd.concat(pairs, ignore_index=True)
    blocked = blocked.assign(position=universe.get_indexer(blocked["doc_id"]))
    blocked = blocked[blocked["query_id"].isin(relevant["query_id"]) & (blocked["position"] >= 0)]
    forbidden = {
        query_id: np.unique(group.to_numpy(dtype=np.int64))
        for query_id, group in blocked.groupby("query_id", sort=False)["position"]
    }
    for query_id in relevant["query_id"].unique():
        available = len(universe) - len(forbidden.setdefault(query_id, np.empty(0, dtype=np.int64)))
        if available < n_negatives:
            raise SchemaError(
                f"query {query_id!r}: only {available} documents are neither relevant nor excluded; "
                f"cannot sample {n_negatives} negatives"
            )
    return forbidden


def _draw(rng: np.random.Generator, size: int, forbidden: np.ndarray, count: int) -> np.ndarray:
    """``count`` positions drawn uniformly without replacement from ``range(size)`` minus sorted ``forbidden``.

    A random ordered sample of ``count + len(forbidden)`` positions always holds
    at least ``count`` allowed ones; its first ``count`` allowed ones are a
    uniform sample of the allowed set.
    """
    drawn = rng.choice(size, size=min(size, count + len(forbidden)), replace=False)
    _, blocked = find_sorted(forbidden, drawn)
    return drawn[~blocked][:count]


def _score_function(
    scorer: object, queries: pd.DataFrame | Mapping[str, str] | None
) -> Callable[[str, np.ndarray], object]:
    """``f(query_id, doc_ids)`` for a retriever-like object (via query text) or a recommender callable."""
    method = getattr(scorer, "score", None)
    if method is None:
        if not callable(scorer):
            raise TypeError(
                f"scorer must have a score(query_text, doc_ids) method or be callable, got {type(scorer).__name__}"
            )
        return scorer
    if queries is None:
        raise SchemaError(
            "a scorer with a score(query_text, doc_ids) method needs `queries` to give each query's text; "
            "for a recommender pass a callable f(query_id, doc_ids) such as recommender.score"
        )
    if isinstance(queries, pd.DataFrame):
        table = validate(queries, "queries", "queries")
        texts = dict(zip(table["query_id"], table["text"]))
    else:
        texts = {str(k): str(v) for k, v in queries.items()}

    def by_text(query_id: str, doc_ids: np.ndarray) -> object:
        if query_id not in texts:
            raise SchemaError(f"query {query_id!r} has relevant documents but no text in `queries`")
        return method(texts[query_id], doc_ids)

    return by_text
