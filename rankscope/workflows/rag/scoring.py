"""One chunking x retriever of :func:`~rankscope.workflows.rag.workflow.rag`: the corpus chunked so, indexed,
searched, and the chunk run scored against the token budgets (and, with document judgments, as a MaxP
document run), with its tokens to the first evidence and its chunk statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core.phases import phase
from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED

if TYPE_CHECKING:
    from rankscope.corpora.chunking import TokenCounter
    from rankscope.corpora.dataset import Dataset
    from rankscope.evaluation.results import EvaluationResult

WHOLE = "whole"
OWN = "own chunks"
"""The chunking of a framework retriever's row: the chunks it cut and indexed itself."""
DOCUMENT_METRICS = ("ndcg@10", "recall@100")
"""Scored on the MaxP document run (document judgments only)."""
DISTINCT_AT = 10


def chunked_name(chunking: str, retriever: str) -> str:
    """``words:100:25 / bm25``: one row of the results."""
    return f"{chunking} / {retriever}"


@dataclass(frozen=True)
class SystemOutcome:
    """One chunking x retriever: its chunk run, scores, and its rows of ``RagResult.tokens`` and ``chunks``."""

    run: pd.DataFrame
    result: EvaluationResult
    tokens: pd.DataFrame
    stats: dict[str, object]


def rag_system(
    chunking: str,
    spec: str,
    data: Dataset,
    queries: pd.DataFrame,
    questions: pd.DataFrame | None,
    answer_mode: str,
    counter: TokenCounter,
    budgets: tuple[int, ...],
    depth: int,
    chunks: pd.DataFrame | None = None,
    label: str | None = None,
) -> SystemOutcome:
    """Chunk, index, search and score one system (a task with a scheduler: everything it needs is an
    argument; ``chunks``: the corpus already chunked so, as :func:`.workflow.rag` gives it; ``label``: the
    retriever's name in the row, its spec by default)."""
    from rankscope.corpora.chunking import chunk_corpus, chunks_as_corpus
    from rankscope.retrieval.registry import make_retriever

    with phase("index"):
        if chunks is None:
            chunks = chunk_corpus(data.corpus, chunking, counter)
        retriever = make_retriever(spec).index(chunks_as_corpus(chunks))
    with phase("search"):
        run = retriever.search(queries, k=depth)
    return scored_outcome(chunked_name(chunking, label or spec), run, chunks, data, questions, answer_mode, budgets)


def scored_outcome(
    name: str,
    run: pd.DataFrame,
    chunks: pd.DataFrame,
    data: Dataset,
    questions: pd.DataFrame | None,
    answer_mode: str,
    budgets: tuple[int, ...],
) -> SystemOutcome:
    """One system's chunk run scored at the budgets (and, with judgments, as a MaxP document run)."""
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.budget import budget_scores, first_tokens, unit_tokens
    from rankscope.evaluation.chunk_runs import aggregate_rows, distinct_in, with_parents

    lengths = chunks.set_index("chunk_id")["tokens"]
    evidence = _evidence(run, chunks, data, questions, answer_mode)
    needed = unit_tokens(run, lengths, evidence)  # once for the budgets' scores and the tokens to the first
    rows = with_parents(run, chunks)  # once for MaxP and the distinct documents
    result = budget_scores(needed, evidence, budgets)
    if questions is None:
        scored = evaluate(
            data.qrels, aggregate_rows(rows, "maxp"), DOCUMENT_METRICS, exclude_unjudged=WORKFLOW_EXCLUDE_UNJUDGED
        )
        result = _joined(result, _renamed(scored, "maxp "))
    first = first_tokens(needed, evidence)
    distinct = distinct_in(rows, DISTINCT_AT).reindex(first.index, fill_value=0)
    stats = {
        "system": name,
        "chunks": len(chunks),
        "tokens_per_chunk": float(chunks["tokens"].mean()),
        "median_tokens_to_first": float(first.median()),
        "p75_tokens_to_first": float(first.quantile(0.75)),
        "no_evidence_share": float(first.isna().mean()),
        f"distinct_docs@{DISTINCT_AT}": float(distinct.mean()),
    }
    tokens = pd.DataFrame({"system": name, "query_id": first.index, "tokens_to_first": first.to_numpy()})
    return SystemOutcome(run, result, tokens, stats)


def _renamed(result, prefix: str):
    """The same result with every metric name prefixed (``maxp ndcg@10``)."""
    from rankscope.evaluation.results import EvaluationResult

    per_query = result.per_query.assign(metric=prefix + result.per_query["metric"])
    return EvaluationResult(per_query, {prefix + k: v for k, v in result.mean.items()}, result.n_unjudged)


def _evidence(run: pd.DataFrame, chunks: pd.DataFrame, data: Dataset, answers: pd.DataFrame | None, mode: str):
    """Evidence for one system's run: relevant documents through their chunks, or answers found in chunks."""
    from rankscope.corpora.answers import answer_matches
    from rankscope.evaluation.budget import Evidence, evidence_from_qrels

    if answers is None:
        return evidence_from_qrels(data.qrels, chunks)
    pairs = run.merge(chunks[["chunk_id", "text"]], left_on="doc_id", right_on="chunk_id")
    matches = answer_matches(pairs, dict(zip(answers["query_id"], answers["answers"])), mode)
    totals = pd.Series(answers["answers"].map(len).to_numpy(), index=answers["query_id"].to_numpy())
    return Evidence.from_pairs(matches.rename(columns={"answer": "unit"}), totals)


def _joined(first, second):
    """One EvaluationResult holding the metrics of two (same queries, different metrics)."""
    from rankscope.evaluation.results import EvaluationResult

    per_query = pd.concat([first.per_query, second.per_query], ignore_index=True)
    return EvaluationResult(per_query, {**first.mean, **second.mean}, first.n_unjudged)
