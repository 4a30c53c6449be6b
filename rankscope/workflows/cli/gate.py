"""``rankscope gate``: a non-inferiority test for continuous integration; its exit status is the decision."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import RankscopeError
from rankscope.core.lazy import Late
from rankscope.workflows.cli.command import Command, Option
from rankscope.workflows.cli.compare import JUDGE, dataset_or_qrels, judgments_from
from rankscope.workflows.cli.options import scheduler

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished

RUN_SUFFIXES = (".trec", ".run", ".txt", ".tsv", ".csv", ".jsonl", ".json", ".parquet", ".gz")
EXIT_HELP = (
    "Exit status: 0 when the candidate is not worse than the baseline by more than the margin (the lower "
    "bound of the mean difference is above -margin), 1 when it is (the upper bound is below -margin), 3 when "
    "undecided (the interval holds -margin: more queries or a wider margin would tell), 2 on a usage error."
)


def system(value: str) -> object:
    """A run file if ``value`` names a file or looks like a path (a folder in it, a file suffix: a missing
    run is then said to be missing, not an unknown retriever), else a retriever spec."""
    path = Path(value)
    looks_like_path = "/" in value or path.suffix.lower() in RUN_SUFFIXES
    return path if path.is_file() or looks_like_path else value


def call(args: argparse.Namespace, gate: Callable[..., Finished]) -> Finished:
    from rankscope.evaluation.noninferiority import Margin
    from rankscope.workflows.options import Execution

    for flag, value in (("--baseline", args.baseline), ("--candidate", args.candidate), ("--margin", args.margin)):
        if value is None:
            raise RankscopeError(f"{flag} is required")
    rule = Margin(args.margin, args.alpha, args.sequential)  # refused before any work
    judgments = judgments_from(args)
    if args.judge is not None:
        from rankscope.workflows.common.runs import check_depth

        check_depth(args.pool_depth, "--pool-depth")
    targets = {flag: value for flag, value in (("--junit", args.junit), ("--summary", args.summary)) if value}
    checked_targets(targets)
    return gate(
        dataset_or_qrels(args),
        baseline=system(args.baseline),
        candidate=system(args.candidate),
        margin=rule,
        metric=args.metric,
        execution=Execution.from_args(args),
        judgments=judgments,
    )


def checked_targets(targets: dict[str, str]) -> None:
    """``--junit`` and ``--summary``: files that can be written, two different ones, before any computing."""
    from rankscope.core.outputs import check_output_file

    paths = {flag: check_output_file(path, flag).resolve() for flag, path in targets.items()}
    if len(set(paths.values())) < len(paths):
        raise RankscopeError(f"--junit and --summary name the same file ({next(iter(paths.values()))})")


def write_ci_files(args: argparse.Namespace, result: Any) -> int:
    """The JUnit XML and Markdown summary, each replaced whole (a reader never sees half a file); the verdict's status."""
    from rankscope.core.fileio import atomic_write

    for path, text in ((args.junit, result.to_junit), (args.summary, result.to_markdown)):
        if path:
            with atomic_write(path) as sink:
                sink.write(text())
    return int(result.exit_status)


COMMAND = Command(
    name="gate",
    help="non-inferiority gate for CI: is the candidate worse than the baseline by more than a margin? "
    "exit 0 no, 1 yes, 3 undecided",
    workflow="rankscope.workflows.gate:gate",
    options=(
        Option(
            ("--baseline",),
            "the system in place: a retriever spec or a run file (TREC, MS MARCO, Parquet or a table); required",
            "baseline",
            {"metavar": "SYSTEM"},
            applies=False,
        ),
        Option(
            ("--candidate",),
            "the system that would replace it, as --baseline; required",
            "candidate",
            {"metavar": "SYSTEM"},
            applies=False,
        ),
        Option(
            ("--margin",),
            "how much worse the candidate may be on the metric's mean, in its units (0.01: one point of nDCG); "
            "at least 0; required",
            "margin",
            {"type": float, "metavar": "D"},
            applies=False,
        ),
        Option(("--metric",), "the metric decided on (default: {default})", "metric", {"metavar": "METRIC"}),
        Option(
            ("--alpha",),
            "each one-sided bound's error: a candidate exactly at the margin fails at most this often, one worse "
            "than it passes at most this often (default: %(default)s)",
            settings={"type": float, "default": Late("rankscope.evaluation.noninferiority:ALPHA")},
        ),
        Option(
            ("--sequential",),
            "decide by an anytime-valid confidence sequence over the queries (in a --seed order) instead of "
            "Student's t: honest for any number of queries and any shape of differences, and had one looked after "
            "every query; much wider (docs/intervals.md): for large margins or many queries",
            settings={"action": "store_true"},
        ),
        Option(
            ("--judgments",),
            "score with a `rankscope judge --out DIR` folder's merged qrels and decide by the prediction-powered "
            "interval of the difference from its human sample (human_sample.txt), never the judge's number alone; "
            "or --judge SPEC with --human-sample N",
            "judgments",
            {"metavar": "DIR"},
        ),
        *JUDGE,
        Option(
            ("--junit",), "also write the decision as a JUnit XML file CI systems show", settings={"metavar": "FILE"}
        ),
        Option(
            ("--summary",),
            "also write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)",
            settings={"metavar": "FILE"},
        ),
        scheduler("each system's run is made there as a task"),
    ),
    call=call,
    example=("--baseline", "bm25", "--candidate", "bm25:k1=1.2", "--margin", "0.5"),
    details=EXIT_HELP,
    after=write_ci_files,
)
register = COMMAND.register
