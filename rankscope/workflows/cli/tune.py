"""``rankscope tune``: any retriever parameters chosen by cross-validation over queries, with an error bar."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from rankscope.core.errors import RankscopeError
from rankscope.core.forked import checked_count
from rankscope.core.lazy import Late, imported
from rankscope.workflows.cli.command import Command, Option, loader
from rankscope.workflows.cli.options import scheduler

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished


def call(args: argparse.Namespace, tune: Callable[..., Finished]) -> Finished:
    from rankscope.retrieval.registry import with_analyzer
    from rankscope.workflows.options import Execution, Search
    from rankscope.workflows.tune.grid import SHORTHANDS, parse_param

    params = dict(parse_param(item) for item in args.param)
    if len(params) < len(args.param):
        raise RankscopeError(f"--param gives a parameter twice: {args.param}")
    shorthands = {name: getattr(args, name) for name in SHORTHANDS if getattr(args, name) is not None}
    twice = sorted(set(shorthands) & set(params))
    if twice:
        raise RankscopeError(f"parameter {twice[0]!r} is given twice")
    given = with_analyzer(args.retriever, args.analyzer)
    return tune(
        loader(args),
        given if args.retrievers is None else [with_analyzer(s, args.analyzer) for s in args.retrievers],
        params={**shorthands, **params},
        metric=args.metric,
        folds=args.folds,
        search=Search(args.search, args.trials, args.repeats),
        execution=Execution.from_args(argparse.Namespace(**{**vars(args), "workers": _workers(args)})),
    )


def _workers(args: argparse.Namespace) -> int:
    """``--workers``, or by default up to 2 for a grid this process scores (optuna's trials and a
    scheduler's grid take none)."""
    if args.workers is None and (args.search != "grid" or args.scheduler is not None):
        return 1
    return checked_count(args.workers)


def _grid_help(name: str) -> str:
    grid = imported(f"rankscope.workflows.tune.grid:DEFAULT_{name.upper()}")
    return f"start:stop:step, inclusive; same as --param {name}=... (default grid: {grid})"


COMMAND = Command(
    name="tune",
    help="grid-search any retriever parameters with cross-validation over queries and an error bar",
    workflow="rankscope.workflows.tune:tune",
    options=(
        Option(("--retriever",), "retriever spec to tune (default: %(default)s)", "retriever"),
        Option(
            ("--retrievers",),
            "choose the retriever too: each fold picks one of these and its parameters (each takes the "
            "--param it has); the first at its defaults is the baseline",
            settings={"nargs": "+", "metavar": "SPEC"},
        ),
        Option(
            ("--param",),
            "a parameter and its grid: start:stop:step (inclusive), one value, or a comma list, e.g. "
            "fb_terms=5:30:5, norm=minmax,zscore; repeat for more (without --param, --k1 and --b: BM25's k1 and b)",
            settings={"action": "append", "default": [], "metavar": "NAME=VALUES"},
        ),
        Option(("--k1",), lambda _: _grid_help("k1")),
        Option(("--b",), lambda _: _grid_help("b")),
        Option(("--metric",), "metric to maximise (default: %(default)s)", "metric"),
        Option(("--folds",), "cross-validation folds over queries (default: %(default)s)", "folds", {"type": int}),
        Option(
            ("--repeats",),
            "fold seeds of repeated cross-validation (--seed, then the next ones): the gain is their mean, "
            "printed with its spread over them (default: %(default)s)",
            "repeats",
            {"type": int},
        ),
        scheduler("grid points are scored there in chunks, one per worker; the results are the same, bit for bit"),
        Option(
            ("--workers",),
            "processes scoring the grid's points, forked from this one once the corpus is indexed, each "
            "re-weighting its own copy (memory grows with them); 1 scores them here (default: up to 2; 1 with "
            "--scheduler or --search optuna); the results are the same, bit for bit",
            "workers",
            {"type": int, "metavar": "N"},
            applies=False,
        ),
        Option(
            ("--search",),
            "grid: score every point; optuna: TPE proposes points, one seeded study per training fold "
            "(needs the tune extra) (default: %(default)s)",
            "method",
            {"choices": Late("rankscope.workflows.options:SEARCHES")},
        ),
        Option(("--trials",), "--search optuna: trials per study (default: %(default)s)", "trials", {"type": int}),
    ),
    call=call,
    example=("--k1", "0.9:1.2:0.3", "--b", "0.75", "--folds", "2"),
)
register = COMMAND.register
