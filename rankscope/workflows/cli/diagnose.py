"""``rankscope diagnose``: every relevant document found, lost to ranking or lost to recall, and why."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from rankscope.core.lazy import Late
from rankscope.workflows.cli.command import Command, Option, defaults, loader
from rankscope.workflows.cli.options import GROUPS, RUN, Grouping, default_specs, depth, systems_from_args

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished
    from rankscope.workflows.diagnose import DiagnoseResult


def call(args: argparse.Namespace, diagnose: Callable[..., Finished]) -> Finished:
    """The systems in the order the docs give: ``--retriever`` (its default unless ``--run`` is
    given), the ``--run`` files, then ``--vs``; the first is the one diagnosed in depth."""
    from rankscope.workflows.diagnose.sampling import Sampled

    given = [args.retriever] if args.retriever else None
    specs = default_specs(given, args.run, defaults(diagnose)["retriever"])
    grouping = Grouping(args.groups)  # a bad file is said before any work, a bad column once the dataset loads
    result = diagnose(
        grouping.loading(loader(args)),
        systems_from_args(specs, args.run, args.fields, args.analyzer, after=[args.vs] if args.vs else []),
        None,
        args.depth,
        metrics=args.metrics,
        sampled=Sampled(args.sampled_negatives, args.sampled_repeats) if args.sampled else False,
        seed=args.seed,
    )
    return grouping.applied(cast("DiagnoseResult", result))


def _metrics_help(given: Mapping[str, Any]) -> str:
    from rankscope.workflows.diagnose.headroom import default_metrics

    return (
        "metrics priced in points (actual, oracle reranker, ideal); the first picks the worst queries "
        f"(default: {' '.join(default_metrics(given['depth']))})"
    )


COMMAND = Command(
    name="diagnose",
    help="split every relevant document into found, ranking loss and recall loss at each K",
    workflow="rankscope.workflows.diagnose:diagnose",
    options=(
        Option(
            ("--retriever",),
            "retriever spec, the system diagnosed (default: {default} unless --run is given)",
            "retriever",
            applies=False,
        ),
        RUN,
        Option(("--vs",), "a second system to compare with, after --retriever and --run", settings={"metavar": "SPEC"}),
        depth("candidate depth D: the top D a reranker would get; not within it = recall loss"),
        Option(("--metrics",), _metrics_help, settings={"nargs": "+", "metavar": "METRIC"}),
        Option(
            ("--sampled",),
            "also run the sampled-negatives protocol, to see how much sampling flatters the retriever",
            settings={"action": "store_true"},
        ),
        Option(
            ("--sampled-negatives",),
            "sampled protocol: negatives (default: %(default)s)",
            settings={"type": int, "default": Late("rankscope.workflows.diagnose.sampling:Sampled.negatives")},
        ),
        Option(
            ("--sampled-repeats",),
            "sampled protocol: repeats (default: %(default)s)",
            settings={"type": int, "default": Late("rankscope.workflows.diagnose.sampling:Sampled.repeats")},
        ),
        GROUPS,
    ),
    call=call,
    example=("--retriever", "bm25", "--vs", "tfidf", "--depth", "20"),
)
register = COMMAND.register
