"""``rankscope compare``: retrievers and runs on one dataset, with significance tests."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rankscope.core.errors import RankscopeError
from rankscope.core.lazy import Late, imported
from rankscope.corpora.cli import parsed_fields
from rankscope.workflows.cli.command import Command, Option, defaults, loader
from rankscope.workflows.cli.options import (
    GROUPS,
    RETRIEVERS,
    RUN,
    TEST,
    Grouping,
    default_specs,
    scheduler,
    systems_from_args,
)

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished
    from rankscope.workflows.compare import CompareResult
    from rankscope.workflows.options import Judging


JUDGE = (
    Option(
        ("--judge",),
        "instead of --judgments: pool the systems' top --pool-depth, have this judge label the holes (specs as in "
        "rankscope judge, docs/judges.md) and score with the merged qrels; the same numbers as rankscope judge "
        "then --judgments DIR",
        settings={"metavar": "SPEC"},
    ),
    Option(
        ("--human-sample",),
        "with --judge: N judged queries drawn with --seed as the human sample; naive, PPI and PPI++ intervals",
        settings={"type": int, "metavar": "N"},
    ),
    Option(
        ("--pool-depth",),
        "with --judge: documents per system and query pooled for the judge (default: %(default)s)",
        settings={"type": int, "default": Late("rankscope.workflows.options:Judging.depth"), "metavar": "K"},
    ),
    Option(
        ("--judge-cache",),
        "with --judge: the judgments cache folder (default: the user cache, shared with rankscope judge)",
        settings={"metavar": "DIR"},
    ),
)
"""``--judge SPEC`` and its options (compare's and gate's): a judge labels the systems' pool while the command runs."""


def judgments_from(args: argparse.Namespace) -> str | Judging | None:
    """``--judgments DIR``, or ``--judge SPEC`` with its options as a :class:`Judging`; never both."""
    from rankscope.workflows.options import Judging

    if args.judge is None:
        given = [
            flag
            for flag, value in (("--human-sample", args.human_sample), ("--judge-cache", args.judge_cache))
            if value
        ]
        if given:
            raise RankscopeError(f"{given[0]} needs --judge SPEC")
        return args.judgments
    if args.judgments is not None:
        raise RankscopeError("give --judgments DIR (a rankscope judge --out folder) or --judge SPEC, not both")
    return Judging(args.judge, args.human_sample, args.pool_depth, args.judge_cache)


def dataset_or_qrels(args: argparse.Namespace) -> partial:
    """The dataset's loader, or with a qrels file as ``--dataset`` its judgments alone (the systems
    are then ``--run`` files: evaluate's case with compare's tables, report and tests)."""
    from rankscope.workflows.common.runs import qrels_file_dataset

    if Path(args.dataset).is_file():
        return partial(qrels_file_dataset, args.dataset, parsed_fields(args.fields).get("qrels"))
    return loader(args)


def call(args: argparse.Namespace, compare: Callable[..., Finished]) -> Finished:
    from rankscope.workflows.common.runs import check_depth
    from rankscope.workflows.options import Execution

    specs = default_specs(args.retrievers, args.run, defaults(compare)["retrievers"])
    judgments = judgments_from(args)
    check_depth(args.pool_bias, "--pool-bias")  # before any work
    if args.judge is not None:
        check_depth(args.pool_depth, "--pool-depth")
    grouping = Grouping(args.groups)  # a bad file is said before any work, a bad column once the dataset loads
    result = compare(
        grouping.loading(dataset_or_qrels(args)),
        systems_from_args(specs, args.run, args.fields, args.analyzer),
        args.metrics,
        args.baseline,
        depth=args.depth,
        execution=Execution.from_args(args),
        judgments=judgments,
    )
    marked = grouping.applied(cast("CompareResult", result).with_marks(args.marks))
    return marked if args.pool_bias is None else marked.with_pool_bias(args.pool_bias)


COMMAND = Command(
    name="compare",
    help="compare retrievers and runs on one dataset, with significance tests",
    workflow="rankscope.workflows.compare:compare",
    options=(
        RETRIEVERS,
        RUN,
        Option(
            ("--metrics",),
            lambda _: f"default: {' '.join(imported('rankscope.evaluation.metrics:DEFAULT_METRICS'))}",
            settings={"nargs": "+", "metavar": "METRIC"},
        ),
        Option(
            ("--baseline",),
            "system the others are tested against: a spec or a --run NAME (default: bm25 if compared, else the "
            "first); repeat it for several baselines: every system against each, one Holm correction per metric "
            "over every comparison made",
            "baseline",
            {"action": "append", "metavar": "SYSTEM"},
        ),
        Option(
            ("--marks",),
            "baseline: + / - against the baseline(s); all-pairs: as ranx, each system a letter and each value "
            "the letters of the systems it is significantly better than (paired t-test, Holm over all pairs per "
            "metric) (default: %(default)s)",
            settings={"choices": ("baseline", "all-pairs"), "default": "baseline"},
        ),
        GROUPS,
        Option(
            ("--pool-bias",),
            "also the pool-bias test of these systems (as rankscope poolbias, Zobel 1998): each scored again "
            "without the relevant judgments only it put in the pool of every system's top K; pool_bias.csv",
            settings={"type": int, "metavar": "K"},
        ),
        Option(
            ("--depth",),
            lambda _: (
                f"documents each retriever returns per query (default: "
                f"{imported('rankscope.workflows.common.runs:SEARCH_DEPTH')}); when given, --run files are cut "
                "to it too (default: scored as given, as `rankscope evaluate` scores them)"
            ),
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
        *JUDGE,
    ),
    call=call,
    example=("--retrievers", "bm25", "tfidf", "--depth", "100"),
    formats=("table", "json", "latex"),
)
register = COMMAND.register
