"""``rankscope compare``, ``rankscope tune``, ``rankscope diagnose`` and ``rankscope rag``."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from rankscope.core.errors import RankscopeError
from rankscope.core.scheduler import add_scheduler
from rankscope.corpora.cli import add_analyzer, add_fields, add_strict, load_reported, parsed_fields
from rankscope.reporting.plots import FIGURE_FORMATS
from rankscope.reporting.tables import to_json

RUN_HELP = "a run file as a system, named NAME (repeatable; TREC, MS MARCO, Parquet or a JSONL/CSV/TSV table)"


def defaults(function: Callable[..., object]) -> dict[str, Any]:
    """A function's parameter defaults by name: the CLI's defaults are read here, never retyped."""
    return {name: p.default for name, p in inspect.signature(function).parameters.items()}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the three workflow commands to the ``rankscope`` hub."""
    from rankscope.evaluation.metrics import DEFAULT_METRICS
    from rankscope.workflows.compare import compare
    from rankscope.workflows.diagnose import diagnose
    from rankscope.workflows.diagnose.headroom import default_metrics
    from rankscope.workflows.tune.workflow import DEFAULT_B, DEFAULT_K1, SEARCHES, tune

    given = defaults(compare)
    p = subparsers.add_parser("compare", help="compare retrievers and runs on one dataset, with significance tests")
    _common(p, given, formats=("table", "json", "latex"))
    add_fields(p)
    p.add_argument(
        "--retrievers",
        nargs="+",
        metavar="SPEC",
        help=f"retriever specs, e.g. tfidf bm25:k1=0.9,b=0.4 w2v (default: {' '.join(given['retrievers'])} "
        "unless --run is given)",
    )
    p.add_argument("--run", action="append", default=[], metavar="NAME=PATH", help=RUN_HELP)
    p.add_argument("--metrics", nargs="+", metavar="METRIC", help=f"default: {' '.join(DEFAULT_METRICS)}")
    p.add_argument(
        "--baseline",
        default=given["baseline"],
        help="system the others are tested against: a spec or a --run NAME (default: bm25 if compared, else the first)",
    )
    p.add_argument(
        "--depth", type=int, default=given["depth"], help="documents retrieved per query (default: %(default)s)"
    )
    _test_option(p)
    add_scheduler(p, "each system's run is made there as a task; the tables are the same, bit for bit")
    p.set_defaults(func=run_compare)

    given = defaults(tune)
    p = subparsers.add_parser(
        "tune", help="grid-search any retriever parameters with cross-validation over queries and an error bar"
    )
    _common(p, given)
    add_fields(p)
    p.add_argument("--retriever", default=given["retriever"], help="retriever spec to tune (default: %(default)s)")
    p.add_argument(
        "--retrievers",
        nargs="+",
        metavar="SPEC",
        help="choose the retriever too: each fold picks one of these and its parameters (each takes the "
        "--param it has); the first at its defaults is the baseline",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="a parameter and its grid: start:stop:step (inclusive), one value, or a comma list, e.g. "
        "fb_terms=5:30:5, norm=minmax,zscore; repeat for more (without --param, --k1 and --b: BM25's k1 and b)",
    )
    p.add_argument("--k1", help=f"start:stop:step, inclusive; same as --param k1=... (default grid: {DEFAULT_K1})")
    p.add_argument("--b", help=f"start:stop:step, inclusive; same as --param b=... (default grid: {DEFAULT_B})")
    p.add_argument("--metric", default=given["metric"], help="metric to maximise (default: %(default)s)")
    p.add_argument(
        "--folds", type=int, default=given["folds"], help="cross-validation folds over queries (default: %(default)s)"
    )
    add_scheduler(p, "grid points are scored there in chunks, one per worker; the results are the same, bit for bit")
    p.add_argument(
        "--search",
        choices=SEARCHES,
        default=given["search"],
        help="grid: score every point; optuna: TPE proposes points, one seeded study per training fold "
        "(needs the tune extra) (default: %(default)s)",
    )
    p.add_argument(
        "--trials",
        type=int,
        default=given["trials"],
        help="--search optuna: trials per study (default: %(default)s)",
    )
    p.set_defaults(func=run_tune)

    given = defaults(diagnose)
    p = subparsers.add_parser(
        "diagnose", help="split every relevant document into found, ranking loss and recall loss at each K"
    )
    _common(p, given)
    add_fields(p)
    p.add_argument("--retriever", help=f"retriever spec (default: {given['retriever']} unless --run is given)")
    p.add_argument("--vs", metavar="SPEC", help="a second retriever to compare with")
    p.add_argument("--run", action="append", default=[], metavar="NAME=PATH", help=RUN_HELP)
    p.add_argument(
        "--depth",
        type=int,
        default=given["depth"],
        help="candidate depth D: the top D a reranker would get; not within it = recall loss (default: %(default)s)",
    )
    p.add_argument(
        "--metrics",
        nargs="+",
        metavar="METRIC",
        help="metrics priced in points (actual, oracle reranker, ideal); the first picks the worst queries "
        f"(default: {' '.join(default_metrics(given['depth']))})",
    )
    p.add_argument(
        "--sampled",
        action="store_true",
        help="also run the sampled-negatives protocol, to see how much sampling flatters the retriever",
    )
    p.add_argument(
        "--sampled-negatives",
        type=int,
        default=given["sampled_negatives"],
        help="sampled protocol: negatives (default: %(default)s)",
    )
    p.add_argument(
        "--sampled-repeats",
        type=int,
        default=given["sampled_repeats"],
        help="sampled protocol: repeats (default: %(default)s)",
    )
    p.set_defaults(func=run_diagnose)

    _register_rag(subparsers)


def _register_rag(subparsers: argparse._SubParsersAction) -> None:
    from rankscope.workflows.rag import DEFAULT_BUDGETS, DEFAULT_CHUNKINGS, rag

    p = subparsers.add_parser(
        "rag", help="chunkings x retrievers: is the evidence inside a token budget of context? (whole documents too)"
    )
    _common(p, defaults(rag))
    p.add_argument(
        "--chunking",
        nargs="+",
        default=list(DEFAULT_CHUNKINGS),
        metavar="SPEC",
        help="words:SIZE[:OVERLAP], sentences:MAX, paragraphs:MAX (default: %(default)s); whole documents always",
    )
    p.add_argument("--retrievers", nargs="+", default=["bm25"], metavar="SPEC", help="default: %(default)s")
    p.add_argument(
        "--budget", nargs="+", type=int, default=list(DEFAULT_BUDGETS), metavar="TOKENS", help="default: %(default)s"
    )
    p.add_argument(
        "--answers",
        metavar="FILE",
        help='questions JSONL {"query_id","text","answers":[...]}: answers are the evidence',
    )
    p.add_argument(
        "--answer-mode",
        choices=("string", "regex", "substring"),
        default="string",
        help="string: DPR's has_answer; regex: DPR's regex mode; substring: FlashRAG's looser rule (default: %(default)s)",
    )
    p.add_argument(
        "--tokenizer",
        metavar="NAME|PATH",
        help="count tokens as whitespace words (default), 'analyzer' tokens, or with a local tokenizer.json",
    )
    p.add_argument("--depth", type=int, default=1000, help="chunks retrieved per query (default: %(default)s)")
    _test_option(p)
    add_scheduler(
        p, "each chunking x retriever is made and scored there as a task; the results are the same, bit for bit"
    )
    p.set_defaults(func=run_rag)


def _test_option(p: argparse.ArgumentParser) -> None:
    from rankscope.evaluation.significance import TESTS
    from rankscope.workflows.compare import compare

    p.add_argument(
        "--test",
        choices=TESTS,
        default=defaults(compare)["test"],
        help="paired significance test, Holm-corrected (default: %(default)s)",
    )


def _common(p: argparse.ArgumentParser, given: dict[str, Any], formats: tuple[str, ...] = ("table", "json")) -> None:
    """Options every workflow has; ``given`` is the workflow function's defaults."""
    p.add_argument("--dataset", default=given["dataset"], help="collection name or folder (default: %(default)s)")
    p.add_argument("--out", metavar="DIR", help="write tables, runs, plots and report.md/report.html here")
    add_analyzer(p)
    p.add_argument(
        "--figure-format",
        nargs="+",
        choices=FIGURE_FORMATS,
        default=list(given["figures"]),
        metavar="FORMAT",
        help="formats of every plot written with --out: png, svg, pdf (vector, for papers); report.html "
        "always holds them as inline SVG (default: %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=given["seed"], help="seed for tests, folds and sampling (default: %(default)s)"
    )
    add_strict(p)
    p.add_argument(
        "--format",
        choices=formats,
        default="table",
        help="terminal output: tables, the summary as JSON"
        + (", or the summary as a booktabs LaTeX table" if "latex" in formats else "")
        + " (default: %(default)s)",
    )
    # accepted after the command too; SUPPRESS keeps the hub's value when absent, and the hub
    # (rankscope.cli.main) turns args.quiet into set_quiet for every command
    p.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars")


def _loader(args: argparse.Namespace) -> partial:
    """Loads the dataset when the workflow has checked its other arguments, printing the dataset's warnings."""
    return partial(load_reported, args.dataset, args.command, args.strict, args.fields)


def _finish(result: object, args: argparse.Namespace) -> int:
    if args.format == "json":
        print(to_json(result.to_dict()), end="")
        return 0
    if args.format == "latex":
        print(result.to_latex(), end="")
        return 0
    print(result.to_text())
    if args.out:
        print(f"\nwrote {len(result.files)} files to {args.out} (open report.html)")
    return 0


def systems_from_args(
    specs: list[str], runs: list[str], fields: str | None = None, analyzer: str | None = None
) -> dict[str, object]:
    """Specs (each named by itself as typed, so ``--baseline bm25`` still names it; ``--analyzer``
    added to each that takes one) then ``--run NAME=PATH`` files (as paths, with the ``--fields``
    run mapping if any), refusing a name given twice."""
    from rankscope.retrieval.registry import with_analyzer
    from rankscope.workflows.common.systems import RunFile

    columns = parsed_fields(fields).get("run")
    pairs: list[tuple[str, object]] = [(spec, with_analyzer(spec, analyzer)) for spec in specs]
    for item in runs:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise RankscopeError(f"--run expects NAME=PATH, got {item!r}")
        pairs.append((name, RunFile(Path(path), columns) if columns else Path(path)))
    names = [name for name, _ in pairs]
    repeated = [name for name in names if names.count(name) > 1]
    if repeated:
        raise RankscopeError(f"system {repeated[0]!r} is listed twice")
    return dict(pairs)


def default_specs(specs: list[str] | None, runs: list[str], default: str | Sequence[str]) -> list[str]:
    """The specs given, else the workflow's own default (its signature's) unless ``--run`` gives the systems."""
    if specs or runs:
        return list(specs or [])
    return [default] if isinstance(default, str) else list(default)


def run_compare(args: argparse.Namespace) -> int:
    from rankscope.workflows.compare import compare

    specs = default_specs(args.retrievers, args.run, defaults(compare)["retrievers"])
    result = compare(
        _loader(args),
        systems_from_args(specs, args.run, args.fields, args.analyzer),
        args.metrics,
        args.baseline,
        args.out,
        depth=args.depth,
        test=args.test,
        seed=args.seed,
        figures=args.figure_format,
        scheduler=args.scheduler,
    )
    return _finish(result, args)


def run_tune(args: argparse.Namespace) -> int:
    from rankscope.workflows.tune import tune
    from rankscope.workflows.tune.grid import parse_param

    params = dict(parse_param(item) for item in args.param)
    if len(params) < len(args.param):
        raise RankscopeError(f"--param gives a parameter twice: {args.param}")
    from rankscope.retrieval.registry import with_analyzer

    result = tune(
        _loader(args),
        with_analyzer(args.retriever, args.analyzer),
        args.k1,
        args.b,
        args.metric,
        args.folds,
        args.seed,
        args.out,
        params=params,
        retrievers=None if args.retrievers is None else [with_analyzer(s, args.analyzer) for s in args.retrievers],
        figures=args.figure_format,
        scheduler=args.scheduler,
        search=args.search,
        trials=args.trials,
    )
    return _finish(result, args)


def run_diagnose(args: argparse.Namespace) -> int:
    from rankscope.workflows.diagnose import diagnose

    specs = default_specs([args.retriever] if args.retriever else None, args.run, defaults(diagnose)["retriever"])
    result = diagnose(
        _loader(args),
        systems_from_args(specs + ([args.vs] if args.vs else []), args.run, args.fields, args.analyzer),
        None,
        args.depth,
        args.out,
        metrics=args.metrics,
        sampled=args.sampled,
        sampled_negatives=args.sampled_negatives,
        sampled_repeats=args.sampled_repeats,
        seed=args.seed,
        figures=args.figure_format,
    )
    return _finish(result, args)


def run_rag(args: argparse.Namespace) -> int:
    from rankscope.retrieval.registry import with_analyzer
    from rankscope.workflows.rag import rag

    result = rag(
        args.dataset,
        args.chunking,
        [with_analyzer(spec, args.analyzer) for spec in args.retrievers],
        args.budget,
        args.answers,
        args.out,
        tokenizer=args.tokenizer,
        answer_mode=args.answer_mode,
        depth=args.depth,
        test=args.test,
        seed=args.seed,
        figures=args.figure_format,
        scheduler=args.scheduler,
    )
    return _finish(result, args)
