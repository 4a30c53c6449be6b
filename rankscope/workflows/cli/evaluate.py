"""``rankscope evaluate``: trec_eval-style scoring (:mod:`rankscope.evaluation.cli` declares it,
:mod:`rankscope.evaluation.score_files` does it), plus what a
researcher with qrels and runs alone needs for a paper: ``--out DIR`` (report, per-query CSV,
precision-recall plot, LaTeX) and ``--format latex``. Those are compare's result and files, made
from the qrels file as the dataset and the run files as the systems (scored as given), so one
report format serves both commands."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from rankscope.core.errors import RankscopeError
from rankscope.core.outputs import check_output_folder
from rankscope.corpora.cli import parsed_fields
from rankscope.evaluation import cli as declared
from rankscope.workflows.cli.command import present
from rankscope.workflows.cli.options import FIGURES, OUT

DEFAULTS = {  # evaluate's options compare's scoring does not take: refused with --out or latex, never ignored
    "relevance_level": 1,
    "judged_only": False,
    "exclude_unjudged": False,
    "ignore_self": False,
    "allow_disjoint": False,
    "per_query": False,
    "strict": False,
    "scheduler": None,
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """``evaluate`` with ``--out``, ``--figure-format`` and ``--format latex`` added to the scoring command."""
    parser = declared.register(subparsers, formats=(*declared.FORMATS, "latex"))
    for option in (OUT, FIGURES):
        option.add(parser, {})
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plain scoring, or with ``--out`` / ``--format latex`` compare's result on the qrels and runs."""
    from rankscope.evaluation import score_files

    if args.out is None and args.format != "latex":
        return score_files.run_evaluate(args)
    out = None if args.out is None else check_output_folder(args.out)  # before any reading
    return present(report_result(args), args, out)


def report_result(args: argparse.Namespace):  # noqa: ANN201 (a CompareResult; imported when used)
    """compare's result for the qrels file and the run files, each named by its ``NAME=`` or else by its
    file name (:func:`~rankscope.corpora.run_names.system_run`: ``run.bm25.trec`` is ``bm25``), scored as given, after refusing the options compare does not take."""
    from rankscope.corpora.run_names import system_run
    from rankscope.evaluation import score_files
    from rankscope.workflows.common.runs import check_names, qrels_file_dataset
    from rankscope.workflows.common.systems import RunFile
    from rankscope.workflows.compare.workflow import comparison
    from rankscope.workflows.options import Execution

    given = [name for name, default in DEFAULTS.items() if getattr(args, name) != default]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise RankscopeError(
            f"{flags} cannot go with --out or --format latex, which score as compare does (every query of the "
            "qrels, relevant means label >= 1; per-query values in per_query.csv); drop them there"
        )
    if args.format == "csv":
        raise RankscopeError("--format csv is evaluate's own table; with --out use table, json or latex")
    items, metrics = score_files.split_inputs(args.inputs, args.metric)
    score_files.given_runs(items)  # a file or a name given twice: refused as without --out
    pairs = [system_run(item) for item in items]
    check_names([name for name, _ in pairs], "run")  # run.a.trec and a.trec both read a: refused, not merged
    files = dict(pairs)
    fields = parsed_fields(args.fields)
    columns = fields.get("run")
    result = comparison(
        qrels_file_dataset(args.qrels, fields.get("qrels")),
        {name: RunFile(Path(path), columns) if columns else Path(path) for name, path in files.items()},
        metrics or None,
        score_files.checked_baseline(baseline_name(args.baseline, files), list(files)),
        None,
        depth=None,
        execution=Execution.from_args(args),
        judgments=None,
    )
    return replace(result, provenance=replace(result.provenance, workflow="evaluate"))  # the report says evaluate


def baseline_name(baseline: str | None, files: dict[str, str]) -> str | None:
    """``--baseline`` as a system name: a run's path as typed (what the plain table accepts) is its name."""
    return next((name for name, path in files.items() if path == baseline), baseline)
