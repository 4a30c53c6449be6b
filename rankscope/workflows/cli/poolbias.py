"""``rankscope poolbias``: leave each system out of the pool of the systems' top K and score it again."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from rankscope.core.errors import RankscopeError
from rankscope.workflows.cli.command import Command, Option, defaults
from rankscope.workflows.cli.compare import dataset_or_qrels
from rankscope.workflows.cli.options import RETRIEVERS, RUN, default_specs, scheduler, systems_from_args

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished


def call(args: argparse.Namespace, poolbias: Callable[..., Finished]) -> Finished:
    from rankscope.workflows.options import Execution

    if args.qrels is not None:
        if args.retrievers:
            raise RankscopeError("--qrels gives judgments alone: the systems are --run files (or use --dataset)")
        args = argparse.Namespace(**{**vars(args), "dataset": args.qrels})
    specs = default_specs(args.retrievers, args.run, defaults(poolbias)["retrievers"])
    return poolbias(
        dataset_or_qrels(args),
        systems_from_args(specs, args.run, args.fields, args.analyzer),
        args.metrics,
        args.depth,
        execution=Execution.from_args(args),
    )


COMMAND = Command(
    name="poolbias",
    help="pool-bias test: each system scored again without the relevant judgments only it pooled (Zobel 1998)",
    workflow="rankscope.workflows.pool_bias:poolbias",
    options=(
        RETRIEVERS,
        RUN,
        Option(
            ("--qrels",),
            "a qrels file instead of --dataset: judgments alone, the systems are --run files",
            settings={"metavar": "FILE"},
        ),
        Option(("--metrics",), "default: {default}", "metrics", {"nargs": "+", "metavar": "METRIC"}),
        Option(("--depth",), "pool depth: each system's top K per query (default: {default})", "depth", {"type": int}),
        scheduler("each system's run is made there as a task"),
    ),
    call=call,
    example=("--retrievers", "bm25", "tfidf", "--depth", "10"),
)
register = COMMAND.register
