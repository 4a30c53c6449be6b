"""Token-budget metrics: is the evidence inside the context a language model is given?

The context for a budget of B tokens is built from a run, per query: items (chunks or
whole documents) are taken in rank order (score descending, ties by doc_id descending)
and each adds its length in tokens. An item is *in the context* when the running total
*including it* is at most B. The first item that would cross the budget is left out
entirely (not truncated) and the context ends there: no later, shorter item is slipped
into the space left. So a context never holds a partial item, and an item longer than B
never enters it, whatever its rank.

What counts as evidence is an :class:`Evidence` table: for each query, which run items
carry which evidence *units* (a relevant document, a gold answer string, a gold span),
and how many units the query has in all. Then, per query:

- ``tokens_to_first``: the running total through the first item that carries evidence,
  i.e. the smallest budget whose context holds evidence (NaN when no retrieved item does);
- ``hit@Btok``: 1 when the context of budget B holds at least one unit, i.e.
  ``tokens_to_first <= B``;
- ``recall@Btok``: the share of the query's units held by the context of budget B.

Only queries with at least one unit are evaluated; one missing from the run scores 0.
Because budgets are counted in tokens, chunkings of different sizes (and whole
documents) are compared on the same footing, which Hit@k and Recall@k over items are not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.core.phases import phase
from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.results import EvaluationResult


@dataclass(frozen=True)
class Evidence:
    """``pairs``: rows ``query_id, doc_id, unit`` (run item ``doc_id`` carries evidence unit
    ``unit`` for the query); ``totals``: units per query (index query_id), recall's denominator."""

    pairs: pd.DataFrame
    totals: pd.Series

    @classmethod
    def from_pairs(cls, pairs: pd.DataFrame, totals: pd.Series | None = None) -> Evidence:
        """Evidence from ``query_id, doc_id, unit`` rows; ``totals`` defaults to the distinct units found."""
        pairs = pairs[["query_id", "doc_id", "unit"]].astype(str).drop_duplicates().reset_index(drop=True)
        if totals is None:
            totals = pairs.groupby("query_id", sort=False)["unit"].nunique()
        return cls(pairs, totals.rename("units").rename_axis("query_id"))


def evidence_from_qrels(qrels: pd.DataFrame, chunks: pd.DataFrame | None = None, relevance_level: int = 1) -> Evidence:
    """Relevant documents as units. With a chunk table (``chunk_id, doc_id``) every chunk of a
    relevant document carries it; without one the run items are the documents themselves."""
    qrels = validate(qrels, "qrels", "qrels")
    relevant = qrels[qrels["relevance"] >= relevance_level]
    totals = relevant.groupby("query_id", sort=False).size()
    if chunks is None:
        pairs = relevant.assign(unit=relevant["doc_id"])
    else:
        pairs = relevant.merge(chunks[["chunk_id", "doc_id"]], on="doc_id")
        pairs = pairs.rename(columns={"doc_id": "unit", "chunk_id": "doc_id"})
    return Evidence.from_pairs(pairs, totals)


def check_budgets(budgets: Iterable[int]) -> list[int]:
    """The budgets as ints; empty, non-positive or repeated budgets are refused."""
    budgets = list(budgets)
    if not budgets or any(isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1 for b in budgets):
        raise RankscopeError(f"budgets must be positive whole numbers of tokens, got {budgets}")
    if len(set(budgets)) != len(budgets):
        raise RankscopeError(f"budgets {budgets} repeat a value")
    return [int(b) for b in budgets]


def unit_tokens(run: pd.DataFrame, lengths: pd.Series, evidence: Evidence) -> pd.Series:
    """Per (query_id, unit): the running token total through the first item carrying the unit
    (the smallest budget whose context holds it). Units never retrieved are absent."""
    rows = sort_run(validate(run, "run", "run"))
    # looked up by position: Series.map of a string column cast its integer result back through the
    # string dtype, most of rag's scoring time (docs/speed.md)
    at = lengths.index.get_indexer(rows["doc_id"])
    if (at < 0).any():
        missing = rows["doc_id"].to_numpy()[at < 0]
        raise SchemaError(f"run: no token length for {len(missing)} row(s), e.g. item {missing[0]!r}")
    tokens = pd.Series(lengths.to_numpy()[at].astype(np.int64), index=rows.index)
    rows = rows.assign(cumulative=tokens.groupby(rows["query_id"], sort=False).cumsum())
    covered = rows.merge(evidence.pairs, on=["query_id", "doc_id"])
    return covered.groupby(["query_id", "unit"], sort=False)["cumulative"].min()


def tokens_to_first(run: pd.DataFrame, lengths: pd.Series, evidence: Evidence) -> pd.Series:
    """Per evaluated query, the tokens of context needed to reach the first evidence (NaN: never)."""
    return first_tokens(unit_tokens(run, lengths, evidence), evidence)


def first_tokens(needed: pd.Series, evidence: Evidence) -> pd.Series:
    """:func:`tokens_to_first` from the run's :func:`unit_tokens` (``rag`` makes them once for both)."""
    first = needed.groupby(level="query_id", sort=False).min()
    return first.reindex(evidence.totals.index).astype(np.float64).rename("tokens_to_first")


@phase("evaluate")
def budget_evaluate(
    run: pd.DataFrame, lengths: pd.Series, evidence: Evidence, budgets: Sequence[int]
) -> EvaluationResult:
    """``hit@Btok`` and ``recall@Btok`` for every budget B, per evaluated query (see the module doc).

    ``lengths`` maps every run item (index) to its length in tokens.
    """
    budgets = check_budgets(budgets)
    return budget_scores(unit_tokens(run, lengths, evidence), evidence, budgets)


@phase("evaluate")
def budget_scores(needed: pd.Series, evidence: Evidence, budgets: Sequence[int]) -> EvaluationResult:
    """:func:`budget_evaluate` from the run's :func:`unit_tokens` (``rag`` makes them once for both)."""
    budgets = check_budgets(budgets)
    totals = evidence.totals[evidence.totals > 0]
    queries = totals.index
    first = needed.groupby(level="query_id", sort=False).min().reindex(queries).to_numpy(dtype=np.float64)
    names, columns = budget_names(budgets), []
    for budget in budgets:  # in budget_names' order: hit, then recall, per budget
        inside = (needed <= budget).groupby(level="query_id", sort=False).sum().reindex(queries, fill_value=0)
        columns += [(first <= budget).astype(np.float64), inside.to_numpy(dtype=np.float64) / totals.to_numpy()]
    values = np.column_stack(columns) if len(queries) else np.empty((0, len(names)))
    return EvaluationResult.from_matrix(queries.to_numpy(dtype=object), tuple(names), values, 0)


def budget_names(budgets: Sequence[int]) -> list[str]:
    """The metric names :func:`budget_evaluate` gives, in its order."""
    return [f"{m}@{b}tok" for b in budgets for m in ("hit", "recall")]
