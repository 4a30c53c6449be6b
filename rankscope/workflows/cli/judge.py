"""``rankscope judge``: pool the systems' top documents and have a judge label the pairs nobody judged."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rankscope.core.notices import print_warnings
from rankscope.workflows.cli.command import Command, Option, defaults, loader
from rankscope.workflows.cli.options import RUN, default_specs, depth, scheduler, systems_from_args


def call(args: argparse.Namespace, judge: Callable[..., Any]) -> Any:
    from rankscope.workflows.judge.workflow import Study
    from rankscope.workflows.options import Execution

    specs = default_specs(args.systems, args.run, defaults(judge)["systems"])
    result = judge(
        loader(args),
        systems_from_args(specs, args.run, args.fields, args.analyzer),
        args.judge,
        depth=args.depth,
        judgments=args.judgments,
        study=Study(
            args.rejudge, args.audit, args.audit_pairs, args.human_sample, args.blind, args.metric, args.outside_pool
        ),
        execution=Execution.from_args(args),
    )
    print_warnings(args.command, result.warnings)
    return result


COMMAND = Command(
    name="judge",
    help="pool the systems' top documents and have a judge label the pairs nobody judged",
    workflow="rankscope.workflows.judge:judge",
    options=(
        Option(
            ("--systems",),
            "retriever specs whose top documents are pooled (default: {default} unless --run is given)",
            "systems",
            {"nargs": "+", "metavar": "SPEC"},
            applies=False,
        ),
        RUN,
        depth("pool depth per system"),
        Option(
            ("--judge",),
            "openai:model=M,base_url=U[,key_env=VAR,seed=S,...], or qrels[:PATH][,flip=F,seed=S] (without a "
            "path: the dataset's own judgments) (docs/judges.md)",
            "judge",
            {"metavar": "SPEC"},
        ),
        Option(
            ("--judgments",),
            "the judgments cache folder (default: the user cache)",
            "judgments",
            {"metavar": "DIR"},
        ),
        Option(
            ("--rejudge",),
            "judge the pairs humans judged too, and report the agreement",
            settings={"action": "store_true"},
        ),
        Option(
            ("--audit",),
            "probe the judge for position, length, keyword-stuffing and prompt-injection bias (text planted in "
            "documents telling the judge the grade)",
            settings={"action": "store_true"},
        ),
        Option(
            ("--audit-pairs",),
            "pooled pairs the audit perturbs, drawn with --seed (default: %(default)s)",
            "audit_pairs",
            {"type": int},
        ),
        Option(
            ("--human-sample",),
            "N judged queries drawn with --seed as the human sample (the judge then labels every pooled pair): "
            "naive, PPI and PPI++ intervals of each system's mean --metric under the humans' labels",
            "human_sample",
            {"type": int, "metavar": "N"},
        ),
        Option(
            ("--blind",),
            "calibration study: hide the dataset's judgments but the sample's, judge every pooled pair, and "
            "check each interval against the mean under the full judgments",
            settings={"action": "store_true"},
        ),
        Option(("--metric",), "metric of the intervals (default: %(default)s)", "metric"),
        Option(
            ("--outside-pool",),
            "K unjudged documents per query drawn outside everything judged (strata by the first system's ranks "
            "1-100, 101-1000, the rest) for the judge to label: each query's R and each system's recall@100 "
            "with intervals (docs/recall.md)",
            "outside_pool",
            {"type": int, "metavar": "K"},
        ),
        scheduler("each system's run and each chunk of judge calls is made there as a task, sharing the one cache"),
    ),
    call=call,
    example=("--systems", "bm25", "tfidf", "--depth", "3", "--judge", "qrels:flip=0.2"),
)
register = COMMAND.register
