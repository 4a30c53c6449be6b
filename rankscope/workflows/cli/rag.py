"""``rankscope rag``: chunkings x retrievers, is the evidence inside a token budget of context?"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rankscope.core.lazy import Late
from rankscope.corpora.cli import load_corpus_reported
from rankscope.workflows.cli.command import Command, Option, loader
from rankscope.workflows.cli.options import TEST, depth, scheduler

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished


def answers_loader(args: argparse.Namespace) -> partial:
    """The dataset's loader, or with ``--answers`` and a folder holding no judgments its corpus alone
    (the questions file gives the queries, its answers the evidence)."""
    from rankscope.corpora.load import has_judgments

    folder = Path(args.dataset)
    if args.answers is not None and folder.is_dir() and not has_judgments(folder):
        return partial(load_corpus_reported, args.dataset, args.command, args.fields)
    return loader(args)


def call(args: argparse.Namespace, rag: Callable[..., Finished]) -> Finished:
    from rankscope.retrieval.registry import with_analyzer
    from rankscope.workflows.options import Execution
    from rankscope.workflows.rag import Answers, Budgets

    return rag(
        answers_loader(args),
        args.chunking,
        [with_analyzer(spec, args.analyzer) for spec in args.retrievers],
        Budgets(tuple(args.budget), args.tokenizer),
        None if args.answers is None else Answers(args.answers, args.answer_mode),
        depth=args.depth,
        execution=Execution.from_args(args),
    )


COMMAND = Command(
    name="rag",
    help="chunkings x retrievers: is the evidence inside a token budget of context? (whole documents too)",
    workflow="rankscope.workflows.rag:rag",
    options=(
        Option(
            ("--chunking",),
            "words:SIZE[:OVERLAP], sentences:MAX, paragraphs:MAX (default: %(default)s); whole documents always",
            "chunkings",
            {"nargs": "+", "metavar": "SPEC"},
        ),
        Option(("--retrievers",), "default: %(default)s", "retrievers", {"nargs": "+", "metavar": "SPEC"}),
        Option(("--budget",), "default: %(default)s", "budgets", {"nargs": "+", "type": int, "metavar": "TOKENS"}),
        Option(
            ("--answers",),
            'questions JSONL {"query_id","text","answers":[...]}: answers are the evidence',
            "answers",
            {"metavar": "FILE"},
        ),
        Option(
            ("--answer-mode",),
            "string: DPR's has_answer; regex: DPR's regex mode; substring: FlashRAG's looser rule "
            "(default: %(default)s)",
            settings={
                "choices": Late("rankscope.corpora.answers:MODES"),
                "default": Late("rankscope.workflows.rag:Answers.mode"),
            },
        ),
        Option(
            ("--tokenizer",),
            "count tokens as whitespace words (default), 'analyzer' tokens, or with a local tokenizer.json",
            settings={"metavar": "NAME|PATH", "default": Late("rankscope.workflows.rag:Budgets.tokenizer")},
        ),
        depth("chunks retrieved per query"),
        TEST,
        scheduler(
            "each chunking x retriever is made and scored there as a task; the results are the same, bit for bit"
        ),
    ),
    call=call,
    example=("--chunking", "words:50:10", "--budget", "100", "500", "--depth", "50"),
)
register = COMMAND.register
