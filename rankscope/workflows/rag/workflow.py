"""Which chunking and which retriever put the evidence into a language model's context?

For every chunking (plus whole documents, the baseline) and every retriever, the corpus
is chunked, indexed and searched; the chunk run is scored against token budgets
(:mod:`rankscope.evaluation.budget`: hit@B and recall@B tokens, tokens needed to reach
the first evidence) and, with document judgments, collapsed to documents with MaxP and
scored as a document run. Evidence is either the dataset's relevant documents (every
chunk of a relevant document carries it) or, with ``answers``, the answer strings
found in a chunk by DPR's ``has_answer``. Every system is tested against whole documents
with the first retriever, per metric, as ``compare`` does (paired test, Holm-corrected).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.evaluation.marks import ALPHA, GRID_CAPTION, TIE_TOLERANCE, legend, mark_summary, significance_grid
from rankscope.reporting import plots, provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, file_stem, write_csv, write_runs
from rankscope.reporting.tables import records, text_table, wrap_paragraph
from rankscope.workflows.common.fanout import run_tasks
from rankscope.workflows.common.runs import check_depth, check_specs, resolve_corpus, resolve_dataset
from rankscope.workflows.common.systems import sha256_of
from rankscope.workflows.options import Execution, Output, accepts_old_calls, moved, moved_figures

if TYPE_CHECKING:
    from rankscope.corpora.chunking import TokenCounter
    from rankscope.evaluation.results import EvaluationResult
    from rankscope.workflows.common.frameworks import Adapted

DEFAULT_CHUNKINGS = ("words:200:50", "words:100:25", "sentences:300")
DEFAULT_BUDGETS = (500, 1000, 2000, 4000)
WHOLE = "whole"
DOCUMENT_METRICS = ("ndcg@10", "recall@100")
"""Scored on the MaxP document run (document judgments only)."""
DISTINCT_AT = 10
CHUNK_TABLE = ("chunk_id", "doc_id", "position", "start", "end", "tokens")
"""The columns of ``chunk_table.<chunking>.csv``: each chunk id's document, position and span (characters, tokens)."""


OWN = "own chunks"
"""The chunking of a framework retriever's row: the chunks it cut and indexed itself."""


def chunked_name(chunking: str, retriever: str) -> str:
    """``words:100:25 / bm25``: one row of the results."""
    return f"{chunking} / {retriever}"


@dataclass(frozen=True)
class RagResult:
    """Everything ``rag`` produced, as DataFrames.

    ``summary``: index system, one column per metric (means; higher is better).
    ``per_query``: long ``system, query_id, metric, value``. ``significance``: the columns of
    :func:`evaluation.significance.compare_results`, against ``baseline``. ``tokens``: long
    ``system, query_id, tokens_to_first`` (NaN: no evidence within the depth). ``chunks``:
    per system the number of chunks, their mean length, the median/75th-percentile tokens
    to the first evidence, the share of queries reaching none, and the mean number of
    distinct documents among the top 10 chunks. ``runs``: each system's chunk run.
    """

    dataset: str
    baseline: str
    budgets: tuple[int, ...]
    evidence: str
    counter: str
    test: str
    depth: int
    summary: pd.DataFrame
    per_query: pd.DataFrame
    significance: pd.DataFrame
    tokens: pd.DataFrame
    chunks: pd.DataFrame
    findings: tuple[str, ...]
    provenance: Provenance
    runs: Mapping[str, pd.DataFrame] = field(repr=False)
    files: tuple[Path, ...] = ()
    chunk_tables: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """Counts, not the tables (a notebook cell shows one line)."""
        return f"RagResult({self.dataset!r}: {len(self.summary)} systems, budgets {list(self.budgets)})"

    def marked(self) -> pd.DataFrame:
        """The summary as text with the best and significance marks (see :data:`rankscope.evaluation.marks.LEGEND`)."""
        marked = mark_summary(self.summary, self.significance, self.baseline)
        marked.index.name = "system"
        return marked

    def legend(self) -> str:
        return legend(self.test, "systems")

    def to_text(self) -> str:
        lines = [
            wrap_paragraph(f"token counts: {self.counter}; evidence: {self.evidence}"),
            "",
            text_table(self.marked()),
            "",
            wrap_paragraph(self.legend()),
            *provenance.caption_lines(self.provenance),
            "",
            text_table(self.shown_chunks(), digits=2),
            "",
            *(wrap_paragraph(f"- {finding}") for finding in self.findings),
        ]
        return "\n".join(lines)

    def shown_chunks(self) -> pd.DataFrame:
        """The chunk statistics as people read them: token counts in whole tokens (716, not 715.5)."""
        whole = ["median_tokens_to_first", "p75_tokens_to_first"]
        return self.chunks.assign(**{c: self.chunks[c].round().astype("Int64") for c in whole})

    def report(self) -> Report:
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """summary.csv, per_query.csv, significance.csv, tokens.csv, chunks.csv (statistics), a TREC run
        per system and the chunk table of each chunking, ``chunk_table.<chunking>.csv`` (chunk_id,
        doc_id, position, start, end, tokens: what the runs' ``DOC#N`` ids mean, for other tools)
        (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        return [
            write_csv(self.summary, out / "summary.csv"),
            write_csv(self.per_query, out / "per_query.csv", index=False),
            write_csv(self.significance, out / "significance.csv", index=False),
            write_csv(self.tokens, out / "tokens.csv", index=False),
            write_csv(self.chunks, out / "chunks.csv"),
            *write_runs(self.runs, out),
            *(
                write_csv(table, out / f"chunk_table.{file_stem(spec)}.csv", index=False)
                for spec, table in self.chunk_tables.items()
            ),
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "baseline": self.baseline,
            "budgets": list(self.budgets),
            "evidence": self.evidence,
            "token_counts": self.counter,
            "test": self.test,
            "correction": "holm",
            "alpha": ALPHA,
            "depth": self.depth,
            "mean": {name: row.to_dict() for name, row in self.summary.iterrows()},
            "chunks": {name: row.to_dict() for name, row in self.chunks.iterrows()},
            "significance": records(self.significance, index=False),
            "findings": list(self.findings),
            "provenance": self.provenance.to_dict(),
        }


def _counter(tokenizer: str | None):
    """The token counter for ``tokenizer`` (whitespace, analyzer or a tokenizer.json path)."""
    from rankscope.corpora.chunking import token_counter
    from rankscope.retrieval.analysis import get_analyzer

    return token_counter(tokenizer, get_analyzer("english").token_pattern if tokenizer == "analyzer" else None)


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


@dataclass(frozen=True)
class Budgets:
    """Budgets of context, in ``tokens`` counted by ``tokenizer`` (None: whitespace words; ``analyzer``:
    the analyzer's tokens; or a local tokenizer.json)."""

    tokens: tuple[int, ...] = DEFAULT_BUDGETS
    tokenizer: str | None = None

    @classmethod
    def of(cls, budgets: Sequence[int] | Budgets) -> Budgets:
        return budgets if isinstance(budgets, Budgets) else cls(tuple(budgets))


@dataclass(frozen=True)
class Answers:
    """Answers as the evidence: a questions JSONL ``file`` and how an answer is found in a chunk
    (``mode``: string, DPR's has_answer; regex; substring, FlashRAG's looser rule)."""

    file: str | Path
    mode: str = "string"


def _old_rag(kwargs: dict[str, object]) -> dict[str, object]:
    """The earlier keywords: ``tokenizer`` (into ``budgets``), ``answer_mode`` (into ``answers``),
    ``test``/``seed``/``scheduler`` (into ``execution``), ``figures`` (into ``out``)."""
    if "tokenizer" in kwargs:
        given = Budgets.of(kwargs.get("budgets", DEFAULT_BUDGETS))  # type: ignore[arg-type]
        kwargs["budgets"] = replace(given, tokenizer=cast("str | None", kwargs.pop("tokenizer")))
    mode = kwargs.pop("answer_mode", None)
    answers = kwargs.get("answers")
    if mode is not None and answers is not None:
        kwargs["answers"] = replace(answers, mode=mode) if isinstance(answers, Answers) else Answers(answers, mode)  # type: ignore[arg-type]
    return moved(
        moved_figures(kwargs), {"seed": "seed", "test": "test", "scheduler": "scheduler"}, "execution", Execution
    )


@accepts_old_calls(("dataset", "chunkings", "retrievers", "budgets", "answers", "out"), _old_rag)
def rag(
    dataset: str | Dataset = "cisi",
    chunkings: Sequence[str] = DEFAULT_CHUNKINGS,
    retrievers: Sequence[str] | Mapping[str, object] = ("bm25",),
    budgets: Sequence[int] | Budgets = DEFAULT_BUDGETS,
    answers: str | Path | Answers | None = None,
    out: str | Path | Output | None = None,
    *,
    depth: int = 1000,
    execution: Execution = Execution(),
) -> RagResult:
    """Chunk, index, search and score every (chunking or whole documents) x retriever; write files to
    ``out`` (a folder, or an :class:`~rankscope.workflows.options.Output` with the figures' formats).

    ``retrievers``: specs, or a mapping name -> spec or framework retriever; a framework retriever is
    asked with its own chunks, one row ``own chunks / NAME`` (:mod:`rankscope.workflows.common.framework_chunks`).
    ``budgets`` are token counts (or :class:`Budgets` with the tokenizer that counts them);
    ``answers`` a questions JSONL file whose answers are the evidence (or :class:`Answers` with the
    matching mode; without answers, the qrels' relevant documents are). ``execution`` gives the seed,
    the paired test and a scheduler (``local:N`` or a Dask scheduler's address) that makes each system a
    task there (:func:`rag_system` through :func:`rankscope.workflows.common.fanout.run_tasks`); the
    result is the same, bit for bit. The earlier keywords ``tokenizer``, ``answer_mode``, ``test``,
    ``seed``, ``scheduler`` and ``figures`` still work, with a DeprecationWarning.
    """
    given_budgets = Budgets.of(budgets)
    given_answers = Answers(answers) if isinstance(answers, (str, Path)) else answers
    tokenizer, test, seed = given_budgets.tokenizer, execution.test, execution.seed
    answer_mode = "string" if given_answers is None else given_answers.mode
    answers = None if given_answers is None else given_answers.file
    from rankscope.corpora.answers import MODES
    from rankscope.corpora.chunking import chunk_corpus_many, parse_chunking
    from rankscope.corpora.qa_files import read_questions
    from rankscope.evaluation.budget import check_budgets
    from rankscope.evaluation.significance import compare_results
    from rankscope.retrieval.registry import make_retriever
    from rankscope.workflows.common.framework_chunks import framework_chunk_run

    out_path, figures = Output.of(out).checked()  # before any computing
    specs_of, asked = _retrievers(retrievers)
    check_specs(list(specs_of.values()))
    check_depth(depth)
    budgets = tuple(check_budgets(given_budgets.tokens))
    if answer_mode not in MODES:
        raise RankscopeError(f"unknown answer matching mode {answer_mode!r}; expected one of {list(MODES)}")
    specs = [WHOLE, *[parse_chunking(c).spec for c in chunkings if c != WHOLE]]
    if len(set(specs)) != len(specs):
        raise RankscopeError(f"chunkings {list(chunkings)} repeat one (whole documents are always included)")
    counter = _counter(tokenizer)
    data = resolve_dataset(dataset) if answers is None else resolve_corpus(dataset)  # answers: no qrels needed
    questions = None if answers is None else read_questions(answers)
    queries = data.queries if questions is None else questions[["query_id", "text"]]
    evidence_kind = (
        f"relevant documents of {data.name}'s qrels (every chunk of a relevant document)"
        if questions is None
        else f"answers of {answers} found in the chunk ({answer_mode} matching)"
    )
    systems = [(c, r) for c in specs for r in specs_of]
    with phase("index"):  # every chunking of the corpus, each document's tokens counted once
        tables = dict(zip(specs, chunk_corpus_many(data.corpus, specs, counter)))
    calls = [
        (
            chunking,
            specs_of[name],
            data,
            queries,
            questions,
            answer_mode,
            counter,
            budgets,
            depth,
            tables[chunking],
            name,
        )
        for chunking, name in systems
    ]
    results, tokens, stats, runs = {}, [], [], {}
    made = run_tasks(rag_system, calls, execution.scheduler)
    for (chunking, spec), outcome in zip(
        systems,
        progress(made, desc="chunking x retriever", total=len(systems), steps=[chunked_name(c, r) for c, r in systems]),
    ):
        name = chunked_name(chunking, spec)
        runs[name], results[name] = outcome.run, outcome.result
        tokens.append(outcome.tokens)
        stats.append(outcome.stats)
    notes = []
    known = set(data.corpus["doc_id"].astype(str))
    asking = queries if questions is not None else queries[queries["query_id"].isin(data.qrels["query_id"])]
    for name, adapted in asked.items():  # in this process: the framework's object is not sent anywhere
        row = chunked_name(OWN, name)  # its own chunks, asked the queries with evidence
        run, chunks, said = framework_chunk_run(row, adapted, asking, known, data.name, depth, counter)
        outcome = _scored(row, run, chunks, data, questions, answer_mode, budgets)
        runs[row], results[row] = outcome.run, outcome.result
        tokens.append(outcome.tokens)
        stats.append(outcome.stats)
        notes += [f"{row}: {note}." for note in said]
    baseline = chunked_name(WHOLE, next(iter(specs_of)))
    metrics = list(results[baseline].mean)
    significance = compare_results(results, baseline, metrics, test=test, correction="holm", seed=seed, alpha=ALPHA)
    summary = pd.DataFrame({name: r.mean for name, r in results.items()}).T[metrics].rename_axis("system")
    per_query = pd.concat([r.per_query.assign(system=n) for n, r in results.items()], ignore_index=True)
    chunk_stats = pd.DataFrame(stats).set_index("system")
    tokens_frame = pd.concat(tokens, ignore_index=True)
    result = RagResult(
        dataset=data.name,
        baseline=baseline,
        budgets=budgets,
        evidence=evidence_kind,
        counter=counter.name,
        test=test,
        depth=depth,
        summary=summary,
        per_query=per_query[["system", "query_id", "metric", "value"]],
        significance=significance,
        tokens=tokens_frame,
        chunks=chunk_stats,
        findings=tuple(rag_findings(summary, significance, chunk_stats, baseline, budgets) + notes),
        provenance=provenance.record(
            "rag",
            data,
            {
                **{name: make_retriever(spec).spec() for name, spec in specs_of.items()},
                **{name: adapted.describe() for name, adapted in asked.items()},
            },
            chunkings=list(specs),
            budgets=list(budgets),
            evidence=evidence_kind,
            answers=None if answers is None else f"{answers} (sha256 {sha256_of(Path(answers))})",
            answer_mode=answer_mode,
            token_counts=counter.name,
            metrics=metrics,
            test=test,
            correction="holm",
            alpha=ALPHA,
            seed=seed,
            depth=depth,
        ),
        runs=runs,
        chunk_tables={spec: tables[spec][list(CHUNK_TABLE)] for spec in specs if spec != WHOLE},
    )
    if answers is not None:  # the answers were the evidence: the dataset's judgments, if any, went unused
        result = replace(result, provenance=replace(result.provenance, judgments={}))
    return finish(result, out_path, figures)


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
    argument; ``chunks``: the corpus already chunked so, as :func:`rag` gives it; ``label``: the
    retriever's name in the row, its spec by default)."""
    from rankscope.corpora.chunking import chunk_corpus, chunks_as_corpus
    from rankscope.retrieval.registry import make_retriever

    with phase("index"):
        if chunks is None:
            chunks = chunk_corpus(data.corpus, chunking, counter)
        retriever = make_retriever(spec).index(chunks_as_corpus(chunks))
    with phase("search"):
        run = retriever.search(queries, k=depth)
    return _scored(chunked_name(chunking, label or spec), run, chunks, data, questions, answer_mode, budgets)


def _retrievers(retrievers: Sequence[str] | Mapping[str, object]) -> tuple[dict[str, str], dict[str, Adapted]]:
    """Name -> spec of rankscope's retrievers (the first makes the baseline) and name -> framework retriever."""
    from rankscope.workflows.common.frameworks import Adapted, adapt, framework_of

    if isinstance(retrievers, str) or not isinstance(retrievers, (Sequence, Mapping)):
        raise RankscopeError(f"retrievers: expected specs or a mapping name -> system, got {type(retrievers).__name__}")
    pairs = list(retrievers.items()) if isinstance(retrievers, Mapping) else [(spec, spec) for spec in retrievers]
    specs: dict[str, str] = {}
    asked: dict[str, Adapted] = {}
    for name, system in pairs:
        if isinstance(system, str):
            specs[name] = system
        elif framework_of(system) is not None:
            asked[name] = system if isinstance(system, Adapted) else adapt(system)
        else:
            raise RankscopeError(
                f"retriever {name!r}: rag takes a spec or a LangChain, LlamaIndex, Haystack or PyTerrier retriever, "
                f"got {type(system).__name__}"
            )
    if not specs:
        raise RankscopeError(
            "rag needs a rankscope retriever (a spec, e.g. 'bm25') for its baseline, whole documents: "
            "add one beside the framework retrievers"
        )
    return specs, asked


def _scored(
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
        scored = evaluate(data.qrels, aggregate_rows(rows, "maxp"), DOCUMENT_METRICS, exclude_unjudged=True)
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


def rag_findings(
    summary: pd.DataFrame, significance: pd.DataFrame, chunks: pd.DataFrame, baseline: str, budgets: Sequence[int]
) -> list[str]:
    """Plain-language findings; each quotes the numbers behind it."""
    out = []
    flags = {(r.metric, r.system): r for r in significance.itertuples(index=False)}
    for budget in budgets:
        metric = f"hit@{budget}tok"
        base = summary.at[baseline, metric]
        if summary[metric].max() - base <= TIE_TOLERANCE:
            out.append(
                f"Within {budget:,} tokens no chunking beats whole documents ({baseline}): "
                f"{base:.0%} of queries get evidence into the context."
            )
            continue
        top = summary[metric].max()
        best = [name for name, value in summary[metric].items() if top - value <= TIE_TOLERANCE]
        rows = [flags[(metric, name)] for name in best]
        significant = [row.significant for row in rows]
        verdict = "significant" if all(significant) else "not significant" if not any(significant) else "mixed"
        smallest = "p" if len(rows) == 1 else "smallest p"
        out.append(
            f"Within {budget:,} tokens, {_names(best)} put{'s' if len(best) == 1 else ''} evidence in the context "
            f"for {top:.0%} of queries against {base:.0%} for whole documents ({baseline}; {verdict}, "
            f"{smallest} = {min(row.p_adjusted for row in rows):.3g} after Holm)."
        )
    return out + token_findings(chunks)


def token_findings(chunks: pd.DataFrame) -> list[str]:
    """The chunk statistics in a few grouped findings (one per kind, not one per system; every
    system's numbers are in the chunks table): tokens to the first evidence, queries reaching none,
    chunked systems whose top chunks repeat documents."""
    median, p75 = chunks["median_tokens_to_first"], chunks["p75_tokens_to_first"]
    fewest, most = median.idxmin(), median.idxmax()

    def needs(name: str) -> str:
        return f"{name} (median {median[name]:,.0f}, 75th percentile {p75[name]:,.0f})"

    out = [
        f"Tokens of context the median query needs to reach its first evidence: fewest {needs(fewest)}"
        + ("" if fewest == most else f", most {needs(most)}")
        + ("" if len(chunks) <= 2 else f" (all {len(chunks)} systems in the chunks table)")
        + "."
    ]
    never = chunks["no_evidence_share"][chunks["no_evidence_share"] > 0]
    if len(never):
        worst = never.idxmax()
        out.append(
            f"{_count(len(never), 'system')} leave{'s' if len(never) == 1 else ''} some queries without evidence "
            f"within the depth (most: {worst}, {never[worst]:.0%} of queries)."
        )
    chunked = chunks.drop(index=[n for n in chunks.index if n.startswith(f"{WHOLE} / ")])
    distinct = chunked[f"distinct_docs@{DISTINCT_AT}"]
    repeating = distinct[distinct < DISTINCT_AT - 0.5]
    if len(repeating):
        span = (
            f"{repeating.iloc[0]:.1f}"
            if len(repeating) == 1
            else f"{repeating.min():.1f} ({repeating.idxmin()}) to {repeating.max():.1f}"
        )
        who = repeating.index[0] if len(repeating) == 1 else f"{len(repeating)} chunked systems"
        out.append(
            f"The top {DISTINCT_AT} chunks of {who} come from {span} distinct documents on average: several "
            "chunks of one document take context space, so Hit@k over chunks overstates the variety."
        )
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def build_report(result: RagResult) -> Report:
    """Summary with marks, significance, chunk statistics, budget curves and the tokens-to-evidence curves."""
    report = Report(f"rankscope rag: {result.dataset}")
    report.paragraph(
        f"{len(result.summary)} systems (chunking / retriever) on {result.dataset}, searched to depth "
        f"{result.depth} chunks; token counts: {result.counter}; evidence: {result.evidence}. "
        "The context for a budget of B tokens holds the top chunks in rank order while their running total "
        "stays within B; the first chunk that would cross B ends it (never truncated, nothing later slipped in)."
    )
    report.heading("Findings").bullets(list(result.findings))
    report.heading("Summary").table(result.marked(), caption=result.legend())
    report.heading("Chunks and tokens to the first evidence").table(result.shown_chunks())
    curves = {
        name: pd.DataFrame(
            {
                "hit": [row[f"hit@{b}tok"] for b in result.budgets],
                "recall": [row[f"recall@{b}tok"] for b in result.budgets],
            },
            index=pd.Index(result.budgets, name="B"),
        )
        for name, row in result.summary.iterrows()
    }
    report.heading("Hit and recall within a token budget")
    report.image(
        "budget_curves",
        plots.cutoff_curves(curves, axis="B", xlabel="context budget B (tokens)", dataset=result.dataset),
        "Hit@B tokens and Recall@B tokens against the budget, one line per chunking / retriever",
    )
    distributions = {
        name: frame["tokens_to_first"].to_numpy(dtype=np.float64)
        for name, frame in result.tokens.groupby("system", sort=False)
    }
    report.image(
        "tokens_to_first",
        plots.tokens_to_first(distributions, result.budgets, dataset=result.dataset),
        "Share of queries whose first evidence is within T tokens of context (budgets dashed)",
    )
    report.heading(f"Significance against {result.baseline}").table(
        significance_grid(result.significance, list(result.summary.columns)),
        caption=GRID_CAPTION,
    )
    return provenance.add_section(report, result.provenance)
