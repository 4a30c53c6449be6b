"""``rankscope evaluate QRELS RUN [METRIC ...]``: trec_eval-style scoring from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.notices import print_warnings
from rankscope.corpora.trec import read_trec_qrels, read_trec_run
from rankscope.evaluation.coverage import coverage_notes
from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.metrics import DEFAULT_METRICS, known_forms, parse_metrics
from rankscope.evaluation.results import EvaluationResult, wide_table

SUMMARY_ID = "all"  # trec_eval's query id for the summary line


class _IntermixedParser(argparse.ArgumentParser):
    """Takes metric names anywhere: ``QRELS RUN ndcg@10 --per-query map``.

    The command hub hands the sub-command's arguments to ``parse_known_args``; plain
    argparse fills each positional from one stretch only, so a name after an option
    would be "unrecognized". This parses intermixed instead (that method calls
    ``parse_known_args`` itself, hence the guard).
    """

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` sub-command to the rankscope command."""
    parser = subparsers.add_parser(
        "evaluate",
        help="score a TREC run file against a qrels file",
        description=(
            "Score RUN against QRELS with trec_eval's semantics (score descending, ties by doc id "
            "descending; qrels queries missing from the run score 0). Metrics: "
            + ", ".join(known_forms())
            + ". Default: "
            + " ".join(DEFAULT_METRICS)
            + "."
        ),
    )
    parser.add_argument("qrels", help="TREC qrels file (query iteration doc relevance)")
    parser.add_argument("run", help="TREC run file (query Q0 doc rank score tag)")
    parser.add_argument("metrics", nargs="*", metavar="METRIC", help="metric names, e.g. ndcg@10 map")
    parser.add_argument("--per-query", action="store_true", help="also print every query's values")
    parser.add_argument("--relevance-level", type=int, default=1, metavar="N", help="relevant means label >= N")
    parser.add_argument("--judged-only", action="store_true", help="average only over queries in both files")
    parser.add_argument("--exclude-unjudged", action="store_true", help="leave out queries with no relevant judgment")
    parser.add_argument("--format", choices=("table", "json", "csv"), default="table")
    parser.add_argument(
        "--strict", action="store_true", help="queries in only one of the files, or no judged document retrieved, fail"
    )
    parser.set_defaults(func=run_evaluate)
    parser.__class__ = _IntermixedParser  # add_parser builds the hub's class; only the parsing differs


def run_evaluate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Read both files, evaluate and print in the chosen format; returns the exit code."""
    out = sys.stdout if out is None else out
    metrics = parse_metrics(args.metrics or DEFAULT_METRICS)  # fail on a typo before reading big files
    qrels = read_trec_qrels(args.qrels)
    run = read_trec_run(args.run)
    notes = coverage_notes(qrels, run)
    if notes and args.strict:
        raise RankscopeError(f"{args.run}: {notes[0]} (--strict)")
    print_warnings(args.command, notes)
    result = evaluate(
        qrels,
        run,
        [metric.name for metric in metrics],
        relevance_level=args.relevance_level,
        judged_only=args.judged_only,
        exclude_unjudged=args.exclude_unjudged,
    )
    if args.format == "json":
        json.dump(result.to_dict(per_query=args.per_query), out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        _summary_table(result, args.per_query).to_csv(out, index=False, lineterminator="\n")
    else:
        table = _summary_table(result, args.per_query)
        if args.per_query:
            table = wide_table(table, result.metrics)
        out.write(table.to_string(index=args.per_query, float_format=_fmt) + "\n")
        out.write(f"queries: {result.n_queries} (without relevant judgments: {result.n_unjudged})\n")
    return 0


def _fmt(value: float) -> str:
    return f"{value:.4f}"


def _summary_table(result: EvaluationResult, per_query: bool) -> pd.DataFrame:
    """``query_id, metric, value`` rows: per query if asked, then the means under query id ``all``."""
    mean = pd.DataFrame({"query_id": SUMMARY_ID, "metric": list(result.mean), "value": list(result.mean.values())})
    if not per_query:
        return mean[["metric", "value"]]
    if (result.per_query["query_id"] == SUMMARY_ID).any():
        raise RankscopeError(
            f"a query is named {SUMMARY_ID!r}, the id used for the means; use --format json with --per-query"
        )
    return pd.concat([result.per_query, mean], ignore_index=True)
