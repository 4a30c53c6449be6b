"""``rankscope evaluate QRELS RUN [RUN ...] [-m METRIC ...]``: trec_eval-style scoring from the command
line. This module declares the command and imports nothing heavy, so a mistyped option is refused at
once; :mod:`rankscope.evaluation.score_files` does the work, and the help that names what heavy modules
hold (the metrics, the formats) is set once the line has parsed (:class:`~rankscope.core.lazy.LateParser`)."""

from __future__ import annotations

import argparse
from functools import partial

from rankscope.core.lazy import LateParser
from rankscope.core.scheduler import add_scheduler
from rankscope.corpora.cli import add_fields


class _IntermixedParser(LateParser):
    """Takes metric names anywhere: ``QRELS RUN ndcg@10 --per-query map``.

    The command hub hands the sub-command's arguments to ``parse_known_args``; plain
    argparse fills each positional from one stretch only, so a name after an option
    would be "unrecognized". This parses intermixed instead (that method calls
    ``parse_known_args`` itself for each of its passes, hence the guard), settling the
    parser around the whole intermixed parse: its first pass leaves the positionals over.
    """

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:
            return argparse.ArgumentParser.parse_known_args(self, args, namespace)
        self._intermixing = True
        try:
            return self.settled(self.parse_known_intermixed_args, args, namespace)
        finally:
            self._intermixing = False


FORMATS = ("table", "json", "csv")


def register(subparsers: argparse._SubParsersAction, formats: tuple[str, ...] = FORMATS) -> argparse.ArgumentParser:
    """Add the ``evaluate`` sub-command to the rankscope command (``formats``: the ``--format`` choices;
    :mod:`rankscope.workflows.cli.evaluate` adds ``latex`` and ``--out``, which write compare's report,
    and sets what runs it)."""
    parser = subparsers.add_parser(
        "evaluate", help="score TREC run files against a qrels file (several runs: with significance tests)"
    )
    parser.__class__ = _IntermixedParser  # add_parser builds the hub's class; only the parsing differs
    vars(parser).setdefault("_later", [])  # a plain argparse hub's parser was not built as a LateParser
    qrels = parser.add_argument("qrels")
    runs = parser.add_argument("inputs", nargs="+", metavar="RUN")
    parser.add_argument(
        "-m", "--metric", action="append", default=[], dest="metric", metavar="METRIC", help="a metric (repeatable)"
    )
    parser.add_argument("--per-query", action="store_true", help="also print every query's values")
    parser.add_argument("--relevance-level", type=int, default=1, metavar="N", help="relevant means label >= N")
    parser.add_argument("--judged-only", action="store_true", help="average only over queries in both files")
    parser.add_argument("--exclude-unjudged", action="store_true", help="leave out queries with no relevant judgment")
    parser.add_argument("--ignore-self", action="store_true", help="drop run rows whose doc id is the query id")
    parser.add_argument(
        "--allow-disjoint",
        action="store_true",
        help="score a run sharing no query with the qrels (every query 0, as trec_eval -c) instead of refusing it",
    )
    parser.add_argument("--baseline", metavar="RUN", help="several runs: the one the others are tested against")
    parser.add_argument(
        "--test", choices=("randomization", "t", "wilcoxon"), default="randomization", help="paired test (Holm)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomization test (default: %(default)s)")
    parser.add_argument("--format", choices=formats, default="table")
    parser.add_argument(
        "--strict", action="store_true", help="queries in only one of the files, or no judged document retrieved, fail"
    )
    parser.add_argument(
        "--memory-budget",
        metavar="SIZE",
        help="read each TREC or Parquet run file in pieces of whole queries and score them as they come, in about "
        "SIZE of memory (bytes, or with K, M or G: 2G); a run not grouped by query is grouped on disk first; with "
        "--scheduler, spans of a plain TREC file are scored on the workers. "
        "The numbers are the same, bit for bit",
    )
    workers = parser.add_argument("--workers", type=int, metavar="N")
    add_fields(parser)
    add_scheduler(parser, "partitions of the queries are scored there as tasks; the numbers are the same, bit for bit")
    parser.later(partial(_settle, parser, qrels, runs, workers))
    return parser


def _settle(
    parser: argparse.ArgumentParser, qrels: argparse.Action, runs: argparse.Action, workers: argparse.Action
) -> None:
    """The help that names what heavy modules hold (the metrics, the file formats, the size from which
    a file is split), set once the line has parsed or for ``--help``."""
    from rankscope.corpora.formats import formats_help
    from rankscope.evaluation.metrics import DEFAULT_METRICS, known_forms
    from rankscope.evaluation.streaming import SPLIT_BYTES

    parser.description = (
        "Score each RUN against QRELS with trec_eval's semantics (score descending, ties by doc id "
        "descending; qrels queries missing from the run score 0). With several runs, each is tested "
        "against the first (or --baseline) per metric. Metrics (trec_eval's and ir_measures' names are "
        f"accepted too, e.g. P_10, nDCG@10, recip_rank): {', '.join(known_forms())}. "
        f"Default: {' '.join(DEFAULT_METRICS)}."
    )
    qrels.help = f"qrels file, one of these formats (told apart as listed): {formats_help('qrels')}"
    runs.help = (
        f"run files, one of these formats (told apart as listed): {formats_help('run')}; "
        "for one run, metric names may follow it; NAME=PATH names a run (with --out: else its file name, run.bm25.trec: bm25)"
    )
    workers.help = (
        "with --memory-budget: processes scoring spans of whole queries of a plain TREC run file of "
        f"{SPLIT_BYTES >> 20} MiB or more (default: up to 2; a .gz file is read by one). The numbers are the "
        "same, bit for bit"
    )
