"""``rankscope compare``: retrievers and runs on one dataset, with significance tests."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rankscope.evaluation.metrics import DEFAULT_METRICS
from rankscope.reporting.finish import Finished
from rankscope.workflows.cli.command import Command, Option, defaults, loader
from rankscope.workflows.cli.options import RUN, TEST, default_specs, scheduler, systems_from_args
from rankscope.workflows.common.runs import SEARCH_DEPTH
from rankscope.workflows.options import Execution


def call(args: argparse.Namespace, compare: Callable[..., Finished]) -> Finished:
    specs = default_specs(args.retrievers, args.run, defaults(compare)["retrievers"])
    return compare(
        loader(args),
        systems_from_args(specs, args.run, args.fields, args.analyzer),
        args.metrics,
        args.baseline,
        depth=args.depth,
        execution=Execution(seed=args.seed, test=args.test, scheduler=args.scheduler),
        judgments=args.judgments,
    )


COMMAND = Command(
    name="compare",
    help="compare retrievers and runs on one dataset, with significance tests",
    workflow="rankscope.workflows.compare:compare",
    options=(
        Option(
            ("--retrievers",),
            "retriever specs, e.g. tfidf bm25:k1=0.9,b=0.4 w2v (default: {default} unless --run is given)",
            "retrievers",
            {"nargs": "+", "metavar": "SPEC"},
            applies=False,
        ),
        RUN,
        Option(("--metrics",), f"default: {' '.join(DEFAULT_METRICS)}", settings={"nargs": "+", "metavar": "METRIC"}),
        Option(
            ("--baseline",),
            "system the others are tested against: a spec or a --run NAME (default: bm25 if compared, else the first)",
            "baseline",
        ),
        Option(
            ("--depth",),
            f"documents each retriever returns per query (default: {SEARCH_DEPTH}); when given, --run files are cut "
            "to it too (default: scored as given, as `rankscope evaluate` scores them)",
            "depth",
            {"type": int},
        ),
        TEST,
        scheduler("each system's run is made there as a task; the tables are the same, bit for bit"),
        Option(
            ("--judgments",),
            "score with the merged qrels of a `rankscope judge --out DIR` folder; adds each system's judge share "
            "and invalid replies in its top 10 and, when DIR has a human sample (human_sample.txt), naive, PPI "
            "and PPI++ intervals",
            "judgments",
            {"metavar": "DIR"},
        ),
    ),
    call=call,
    example=("--retrievers", "bm25", "tfidf", "--depth", "100"),
    formats=("table", "json", "latex"),
)
register = COMMAND.register
