"""Which chunking and which retriever put the evidence into a language model's context?

For every chunking (plus whole documents, the baseline) and every retriever, the corpus
is chunked, indexed and searched; the chunk run is scored against token budgets
(:mod:`rankscope.evaluation.budget`: hit@B and recall@B tokens, tokens needed to reach
the first evidence) and, with document judgments, collapsed to documents with MaxP and
scored as a document run (:mod:`.scoring`). Evidence is either the dataset's relevant documents
(every chunk of a relevant document carries it) or, with ``answers``, the answer strings
found in a chunk by DPR's ``has_answer``. Every system is tested against whole documents
with the first retriever, per metric, as ``compare`` does (paired test, Holm-corrected).
What the result shows, and how: :mod:`.result`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.evaluation.marks import ALPHA
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.workflows.common.fanout import run_tasks
from rankscope.workflows.common.runs import (
    check_depth,
    check_names,
    check_specs,
    resolve_corpus,
    resolve_dataset,
)
from rankscope.workflows.common.systems import sha256_of
from rankscope.workflows.options import Execution, Output
from rankscope.workflows.rag.findings import rag_findings
from rankscope.workflows.rag.result import RagResult
from rankscope.workflows.rag.scoring import OWN, WHOLE, SystemOutcome, chunked_name, rag_system, scored_outcome

if TYPE_CHECKING:
    from rankscope.corpora.chunking import TokenCounter
    from rankscope.workflows.common.frameworks import Adapted

DEFAULT_CHUNKINGS = ("words:200:50", "words:100:25", "sentences:300")
DEFAULT_BUDGETS = (500, 1000, 2000, 4000)
CHUNK_TABLE = ("chunk_id", "doc_id", "position", "start", "end", "tokens")
"""The columns of ``chunk_table.<chunking>.csv``: each chunk id's document, position and span (characters, tokens)."""


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
    task there (:func:`~rankscope.workflows.rag.scoring.rag_system` through
    :func:`rankscope.workflows.common.fanout.run_tasks`); the result is the same, bit for bit.
    """
    out_path, figures = Output.of(out).checked()  # before any computing
    plan = _plan(chunkings, retrievers, Budgets.of(budgets), answers, depth)
    setting = _setting(dataset, plan)
    tables, outcomes = _chunked_systems(setting, execution.scheduler)
    asked, notes = _asked_systems(setting)
    result = _result(setting, {**outcomes, **asked}, notes, tables, execution)
    return finish(result, out_path, figures)


@dataclass(frozen=True)
class _Plan:
    """What a rag run was asked, checked before any loading: the chunkings (whole documents first), the
    retrievers by name (rankscope's specs; framework retrievers asked here), the budgets and the answers."""

    chunkings: list[str]
    specs_of: dict[str, str]
    asked: dict[str, Adapted]
    budgets: tuple[int, ...]
    counter: TokenCounter
    answers: Answers | None
    depth: int


def _plan(
    chunkings: Sequence[str],
    retrievers: Sequence[str] | Mapping[str, object],
    budgets: Budgets,
    answers: str | Path | Answers | None,
    depth: int,
) -> _Plan:
    """Every setting checked (specs, depth, budgets, the answer mode, chunkings repeating none), the token
    counter made."""
    from rankscope.corpora.answers import MODES
    from rankscope.corpora.chunking import parse_chunking
    from rankscope.evaluation.budget import check_budgets

    given_answers = Answers(answers) if isinstance(answers, (str, Path)) else answers
    answer_mode = "string" if given_answers is None else given_answers.mode
    specs_of, asked = _retrievers(retrievers)
    check_specs(list(specs_of.values()))
    check_depth(depth)
    tokens = tuple(check_budgets(budgets.tokens))
    if answer_mode not in MODES:
        raise RankscopeError(f"unknown answer matching mode {answer_mode!r}; expected one of {list(MODES)}")
    specs = [WHOLE, *[parse_chunking(c).spec for c in chunkings if c != WHOLE]]
    if len(set(specs)) != len(specs):
        raise RankscopeError(f"chunkings {list(chunkings)} repeat one (whole documents are always included)")
    return _Plan(specs, specs_of, asked, tokens, _counter(budgets.tokenizer), given_answers, depth)


@dataclass(frozen=True)
class _Setting:
    """The plan with its data: the dataset (or corpus alone, with answers), the queries asked and the
    questions whose answers are the evidence (None: the qrels' relevant documents are)."""

    plan: _Plan
    data: Dataset
    queries: pd.DataFrame
    questions: pd.DataFrame | None

    @property
    def answer_mode(self) -> str:
        return "string" if self.plan.answers is None else self.plan.answers.mode

    @property
    def evidence(self) -> str:
        """What counts as evidence, in words (the result's ``evidence``)."""
        if self.plan.answers is None:
            return f"relevant documents of {self.data.name}'s qrels (every chunk of a relevant document)"
        return f"answers of {self.plan.answers.file} found in the chunk ({self.answer_mode} matching)"

    def scored(self, name: str, run: pd.DataFrame, chunks: pd.DataFrame) -> SystemOutcome:
        """A chunk run made here (a framework retriever's) scored as every system is."""
        plan = self.plan
        return scored_outcome(name, run, chunks, self.data, self.questions, self.answer_mode, plan.budgets)


def _setting(dataset: str | Dataset, plan: _Plan) -> _Setting:
    """The dataset (with answers, its corpus and queries alone: no qrels needed) and the questions."""
    from rankscope.corpora.qa_files import read_questions

    if plan.answers is None:
        data = resolve_dataset(dataset)
        return _Setting(plan, data, data.queries, None)
    data = resolve_corpus(dataset)
    questions = read_questions(plan.answers.file)
    return _Setting(plan, data, questions[["query_id", "text"]], questions)


def _chunked_systems(
    setting: _Setting, scheduler: str | None
) -> tuple[dict[str, pd.DataFrame], dict[str, SystemOutcome]]:
    """The corpus chunked each way (each document's tokens counted once), then every chunking x rankscope
    retriever indexed, searched and scored, here or as tasks on ``scheduler``, by row name."""
    from rankscope.corpora.chunking import chunk_corpus_many

    plan, data = setting.plan, setting.data
    systems = [(c, r) for c in plan.chunkings for r in plan.specs_of]
    with phase("index"):
        tables = dict(zip(plan.chunkings, chunk_corpus_many(data.corpus, plan.chunkings, plan.counter)))
    calls = [
        (
            chunking,
            plan.specs_of[name],
            data,
            setting.queries,
            setting.questions,
            setting.answer_mode,
            plan.counter,
            plan.budgets,
            plan.depth,
            tables[chunking],
            name,
        )
        for chunking, name in systems
    ]
    made = run_tasks(rag_system, calls, scheduler)
    names = [chunked_name(c, r) for c, r in systems]
    return tables, dict(zip(names, progress(made, desc="chunking x retriever", total=len(systems), steps=names)))


def _asked_systems(setting: _Setting) -> tuple[dict[str, SystemOutcome], list[str]]:
    """Each framework retriever's row, ``own chunks / NAME``: asked in this process (its object is sent
    nowhere) the queries with evidence, its own chunks scored; and the notes its answers gave."""
    from rankscope.workflows.common.framework_chunks import framework_chunk_run

    data, queries, plan = setting.data, setting.queries, setting.plan
    known = set(data.corpus["doc_id"].astype(str))
    asking = queries if setting.questions is not None else queries[queries["query_id"].isin(data.qrels["query_id"])]
    outcomes: dict[str, SystemOutcome] = {}
    notes: list[str] = []
    for name, adapted in plan.asked.items():
        row = chunked_name(OWN, name)
        run, chunks, said = framework_chunk_run(row, adapted, asking, known, data.name, plan.depth, plan.counter)
        outcomes[row] = setting.scored(row, run, chunks)
        notes += [f"{row}: {note}." for note in said]
    return outcomes, notes


def _result(
    setting: _Setting,
    outcomes: dict[str, SystemOutcome],
    notes: list[str],
    tables: dict[str, pd.DataFrame],
    execution: Execution,
) -> RagResult:
    """Every system tested against whole documents with the first retriever, the tables and findings."""
    from rankscope.evaluation.significance import compare_results

    plan, test = setting.plan, execution.test
    results = {name: outcome.result for name, outcome in outcomes.items()}
    baseline = chunked_name(WHOLE, next(iter(plan.specs_of)))
    metrics = list(results[baseline].mean)
    significance = compare_results(
        results, baseline, metrics, test=test, correction="holm", seed=execution.seed, alpha=ALPHA
    )
    summary = pd.DataFrame({name: r.mean for name, r in results.items()}).T[metrics].rename_axis("system")
    per_query = pd.concat([r.per_query.assign(system=n) for n, r in results.items()], ignore_index=True)
    chunk_stats = pd.DataFrame([outcome.stats for outcome in outcomes.values()]).set_index("system")
    return RagResult(
        dataset=setting.data.name,
        baseline=baseline,
        budgets=plan.budgets,
        evidence=setting.evidence,
        counter=plan.counter.name,
        test=test,
        depth=plan.depth,
        summary=summary,
        per_query=per_query[["system", "query_id", "metric", "value"]],
        significance=significance,
        tokens=pd.concat([outcome.tokens for outcome in outcomes.values()], ignore_index=True),
        chunks=chunk_stats,
        findings=tuple(rag_findings(summary, significance, chunk_stats, baseline, plan.budgets) + notes),
        provenance=_provenance(setting, metrics, execution),
        runs={name: outcome.run for name, outcome in outcomes.items()},
        chunk_tables={spec: tables[spec][list(CHUNK_TABLE)] for spec in plan.chunkings if spec != WHOLE},
    )


def _provenance(setting: _Setting, metrics: list[str], execution: Execution) -> Provenance:
    """What was run, on what, with which settings; with answers as the evidence, the dataset's judgments
    (if any) went unused and are not recorded."""
    from rankscope.retrieval.registry import make_retriever

    plan, answers = setting.plan, setting.plan.answers
    record = provenance.record(
        "rag",
        setting.data,
        {
            **{name: make_retriever(spec).spec() for name, spec in plan.specs_of.items()},
            **{name: adapted.describe() for name, adapted in plan.asked.items()},
        },
        chunkings=list(plan.chunkings),
        budgets=list(plan.budgets),
        evidence=setting.evidence,
        answers=None if answers is None else f"{answers.file} (sha256 {sha256_of(Path(answers.file))})",
        answer_mode=setting.answer_mode,
        token_counts=plan.counter.name,
        metrics=metrics,
        test=execution.test,
        correction="holm",
        alpha=ALPHA,
        seed=execution.seed,
        depth=plan.depth,
    )
    return record if answers is None else replace(record, judgments={})


def _counter(tokenizer: str | None) -> TokenCounter:
    """The token counter for ``tokenizer`` (whitespace, analyzer or a tokenizer.json path)."""
    from rankscope.corpora.chunking import token_counter
    from rankscope.retrieval.analysis import get_analyzer

    return token_counter(tokenizer, get_analyzer("english").token_pattern if tokenizer == "analyzer" else None)


def _retrievers(retrievers: Sequence[str] | Mapping[str, object]) -> tuple[dict[str, str], dict[str, Adapted]]:
    """Name -> spec of rankscope's retrievers (the first makes the baseline) and name -> framework retriever."""
    from rankscope.workflows.common.frameworks import Adapted, adapt, framework_of

    if isinstance(retrievers, str) or not isinstance(retrievers, (Sequence, Mapping)):
        raise RankscopeError(f"retrievers: expected specs or a mapping name -> system, got {type(retrievers).__name__}")
    pairs = list(retrievers.items()) if isinstance(retrievers, Mapping) else [(spec, spec) for spec in retrievers]
    check_names([name for name, _ in pairs], "retriever")
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
