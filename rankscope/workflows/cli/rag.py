"""``rankscope rag``: chunkings x retrievers, is the evidence inside a token budget of context?"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rankscope.corpora.answers import MODES
from rankscope.workflows.cli.command import Command, Option, loader
from rankscope.workflows.cli.options import TEST, depth, scheduler


def call(args: argparse.Namespace, rag: Callable[..., Any]) -> Any:
    from rankscope.retrieval.registry import with_analyzer

    return rag(
        loader(args),
        args.chunking,
        [with_analyzer(spec, args.analyzer) for spec in args.retrievers],
        args.budget,
        args.answers,
        tokenizer=args.tokenizer,
        answer_mode=args.answer_mode,
        depth=args.depth,
        test=args.test,
        seed=args.seed,
        scheduler=args.scheduler,
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
            "answer_mode",
            {"choices": MODES},
        ),
        Option(
            ("--tokenizer",),
            "count tokens as whitespace words (default), 'analyzer' tokens, or with a local tokenizer.json",
            "tokenizer",
            {"metavar": "NAME|PATH"},
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
