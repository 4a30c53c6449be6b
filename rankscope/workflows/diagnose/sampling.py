"""How much the sampled protocol flatters a retriever, measured against its full ranking.

The sampled protocol ranks each relevant document among ``n`` sampled
non-relevant ones. Its full-ranking counterpart ranks the same relevant
document among *every* non-relevant document the retriever returned (the other
relevant documents removed, as the sampled protocol removes them). Both are
per relevant document, averaged per query, then over queries, so the gap
between them is the flattery due to sampling alone; the ordinary per-query
full-ranking value is shown beside them for reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED
from rankscope.retrieval.base import Retriever, UnknownDocumentError

SAMPLED_METRICS = ("hit@10", "mrr@10", "ndcg@10")


@dataclass(frozen=True)
class Sampled:
    """The sampled-negatives protocol's settings: ``negatives`` per relevant document, ``repeats``."""

    negatives: int = 100
    repeats: int = 10

    @classmethod
    def of(cls, sampled: bool | Sampled) -> Sampled | None:
        """``sampled`` as settings (True: the defaults), or None when the protocol is not run; checked."""
        settings = (cls() if sampled else None) if isinstance(sampled, bool) else sampled
        if settings is not None:
            check_sampled(settings.negatives, settings.repeats)
        return settings


def per_document_full(
    qrels: pd.DataFrame, run: pd.DataFrame, metrics: Sequence[str], relevance_level: int = 1
) -> dict[str, float]:
    """Metrics of each relevant document ranked among all non-relevant documents of the run.

    One evaluation unit per (query, relevant document): its candidates are the
    run's documents for the query minus the query's other relevant documents.
    A relevant document not in the run scores 0 at every cutoff within the run's depth.
    """
    from rankscope.evaluation import evaluate

    run = sort_run(validate(run, "run", "run"))
    qrels = validate(qrels, "qrels", "qrels")
    relevant = qrels.loc[qrels["relevance"] >= relevance_level, ["query_id", "doc_id"]]
    relevant = relevant.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    relevant["unit"] = relevant["query_id"] + "\t" + relevant.index.astype(str)
    is_relevant = run.merge(relevant[["query_id", "doc_id"]].assign(rel=True), on=["query_id", "doc_id"], how="left")
    negatives = run.loc[is_relevant["rel"].isna().to_numpy()]
    units = relevant.merge(negatives, on="query_id", how="inner", suffixes=("_target", ""))
    targets = relevant.merge(run, on=["query_id", "doc_id"], how="inner")
    unit_run = pd.concat(
        [units[["unit", "doc_id", "score"]], targets[["unit", "doc_id", "score"]]], ignore_index=True
    ).rename(columns={"unit": "query_id"})
    unit_qrels = relevant[["unit", "doc_id"]].rename(columns={"unit": "query_id"}).assign(relevance=1)
    per_unit = evaluate(unit_qrels, unit_run, list(metrics)).per_query
    per_unit = per_unit.assign(query_id=per_unit["query_id"].str.split("\t").str[0])
    per_query = per_unit.groupby(["metric", "query_id"], sort=False)["value"].mean()
    return {m: float(per_query[m].mean()) for m in metrics}


class QueryScoreCache:
    """``f(query_id, doc_ids)`` for the sampled protocol that scores each query's documents once.

    The protocol asks for scores of a few candidates many times per query (one
    call per relevant document and repeat); scoring the whole collection once per
    query and picking the candidates is the same numbers for far fewer calls.
    Only the latest query is kept, so memory stays one vector of the collection.
    A document outside the collection (a judgment of a document the corpus lacks)
    is an error, as it is for ``retriever.score``, never another document's score.
    With ``calls`` (how many candidate lists the protocol will score) a progress bar
    of its own counts them; :meth:`close` ends it.
    """

    def __init__(self, retriever: Retriever, queries: pd.DataFrame, doc_ids: Sequence[str], calls: int = 0) -> None:
        self.retriever = retriever
        self.texts = dict(zip(queries["query_id"], queries["text"]))
        self.doc_ids = list(doc_ids)
        self.position = pd.Index(self.doc_ids)
        self.query_id: str | None = None
        self.scores = np.empty(0)
        self.ticks = progress(range(calls), desc="sampled protocol", total=calls, unit="list")

    def close(self) -> None:
        """End the progress bar (it is cleared from the terminal)."""
        self.ticks.close()

    def __call__(self, query_id: str, doc_ids: Sequence[str]) -> np.ndarray:
        next(self.ticks, None)
        if query_id != self.query_id:
            self.scores = np.asarray(self.retriever.score(self.texts[query_id], self.doc_ids), dtype=np.float64)
            self.query_id = query_id
        positions = self.position.get_indexer(doc_ids)
        if (positions < 0).any():
            missing = np.asarray(doc_ids, dtype=object)[positions < 0][0]
            raise UnknownDocumentError(
                f"query {query_id!r}: document {missing!r} is judged but not in the corpus, so it cannot be scored"
            )
        return self.scores[positions]


def sampled_table(
    retriever: Retriever,
    data: Dataset,
    run: pd.DataFrame,
    metrics: Sequence[str] = SAMPLED_METRICS,
    n_negatives: int = 100,
    repeats: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Per metric: full ranking per query, full ranking per relevant document, sampled mean and spread."""
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.sampled import sampled_evaluate

    full = evaluate(data.qrels, run, list(metrics), exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED).mean
    per_doc = per_document_full(data.qrels, run, metrics)
    doc_ids = data.corpus["doc_id"].tolist()
    calls = repeats * int((data.qrels["relevance"] >= 1).sum())
    scorer = QueryScoreCache(retriever, data.queries, doc_ids, calls)
    try:
        sampled = sampled_evaluate(
            data.qrels, scorer, doc_ids, list(metrics), n_negatives=n_negatives, repeats=repeats, seed=seed
        )
    finally:
        scorer.close()
    return pd.DataFrame(
        {
            "metric": list(metrics),
            "full": [full[m] for m in metrics],
            "full_per_document": [per_doc[m] for m in metrics],
            "sampled": [sampled.mean[m] for m in metrics],
            "sampled_std": [sampled.std[m] for m in metrics],
            "flattery": [sampled.mean[m] / per_doc[m] if per_doc[m] > 0 else np.nan for m in metrics],
        }
    )


def check_sampled(n_negatives: int, repeats: int) -> None:
    """Refuse a sampled protocol with fewer than one negative or repeat before any indexing."""
    if n_negatives < 1 or repeats < 1:
        raise RankscopeError(
            f"--sampled-negatives and --sampled-repeats must be at least 1, got {n_negatives} and {repeats}"
        )


def too_few_negatives(data: Dataset, n_negatives: int, relevance_level: int = 1) -> list[str]:
    """A note naming the option that fixes it when some judged query has fewer than ``n_negatives``
    non-relevant documents in the corpus to draw from (the protocol would refuse it); else nothing."""
    doc_ids = pd.Index(data.corpus["doc_id"].unique())
    relevant = data.qrels.loc[(data.qrels["relevance"] >= relevance_level) & data.qrels["doc_id"].isin(doc_ids)]
    judged = data.qrels.loc[data.qrels["relevance"] >= relevance_level, "query_id"].unique()
    per_query = relevant.groupby("query_id").size().reindex(judged, fill_value=0)
    if per_query.empty:
        return []
    query_id = str(per_query.idxmax())
    available = len(doc_ids) - int(per_query.max())
    if available >= n_negatives:
        return []
    fix = (
        f"run with --sampled-negatives {available} (or fewer)"
        if available >= 1
        else "the collection is too small for the sampled protocol"
    )
    return [
        f"sampled protocol skipped: {data.name} has only {available} documents not relevant to query "
        f"{query_id!r}, fewer than --sampled-negatives {n_negatives}; {fix}"
    ]
