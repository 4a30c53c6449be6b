"""What ``rankscope evaluate`` does once its command line has parsed (:mod:`rankscope.evaluation.cli`
declares it): read the qrels and run files, score them with trec_eval's semantics and print the
table, JSON or CSV; with several runs, the significance tests against the baseline."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import fields
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.core.forked import checked_count
from rankscope.core.notices import print_warnings
from rankscope.core.params import parse_size
from rankscope.core.scheduler import using
from rankscope.corpora.cli import parsed_fields
from rankscope.corpora.foreign import read_qrels, read_run
from rankscope.corpora.formats import looks_like, sniff
from rankscope.corpora.label_sources import file_sources
from rankscope.corpora.run_names import named_path
from rankscope.corpora.trec import CodedTable
from rankscope.evaluation.conventions import WHY_COUNTED, label_conventions
from rankscope.evaluation.coverage import CoverageWarning, coverage_notes
from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.holes import BANDS_CAPTION, band_metrics, hole_warnings, shares_from, shown_shares
from rankscope.evaluation.marks import ALPHA, legend, mark_summary
from rankscope.evaluation.metrics import DEFAULT_METRICS, parse_metric, parse_metrics
from rankscope.evaluation.options import EvaluationOptions
from rankscope.evaluation.results import EvaluationResult, wide_table
from rankscope.evaluation.significance import compare_results
from rankscope.evaluation.streaming import stream_evaluate

SUMMARY_ID = "all"  # trec_eval's query id for the summary line


def split_inputs(inputs: list[str], options: list[str]) -> tuple[list[str], list[str]]:
    """Run files and metric names from the positional arguments, then the ``-m`` names.

    The first positional argument is a run; after it, existing files (or ``NAME=PATH`` of one) are runs
    and anything else a metric name (``rankscope evaluate QRELS RUN ndcg@10 map``, the one-run form, stays
    valid). A name that is neither is refused as an unknown metric that is no file either.
    """
    runs, metrics = inputs[:1], list[str]()
    for item in inputs[1:]:
        if Path(item).is_file() or ("=" in item and Path(item.partition("=")[2]).is_file()):
            if metrics:
                raise RankscopeError(f"run file {item!r} comes after metric names; put the runs first or use -m")
            runs.append(item)
            continue
        try:
            parse_metric(item)
        except RankscopeError as exc:
            raise RankscopeError(f"{exc}; nor is {item!r} a run file") from None
        metrics.append(item)
    return runs, metrics + options


def run_evaluate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Read the files, evaluate and print in the chosen format; returns the exit code."""
    out = sys.stdout if out is None else out
    items, names = split_inputs(args.inputs, args.metric)
    metrics = [m.name for m in parse_metrics(names or DEFAULT_METRICS)]  # fail on a typo before reading big files
    files = given_runs(items)
    paths = list(files)
    baseline = checked_baseline(args.baseline, paths)
    fields = parsed_fields(args.fields)
    budget = None if args.memory_budget is None else parse_size(args.memory_budget)
    if budget is not None and fields.get("run"):
        raise RankscopeError("--memory-budget reads TREC and Parquet run files by their own columns: without --fields")
    workers = _workers(args, budget)
    with using(args.scheduler) as client:
        qrels = _read(args.qrels, "qrels", fields.get("qrels"))
        if budget is not None:
            scored = {
                path: _stream_file(qrels, files[path], metrics, args, (budget, client, workers), len(paths) > 1)
                for path in paths
            }
        else:
            scored = {
                path: _evaluate_file(
                    qrels,
                    _read(files[path], "run", fields.get("run")),
                    files[path],
                    metrics,
                    args,
                    client,
                    len(paths) > 1,
                )
                for path in paths
            }
    results = {path: result for path, (result, _) in scored.items()}
    bands = {path: shares for path, (_, shares) in scored.items()}
    if len(results) == 1:
        _print_one(results[paths[0]], bands[paths[0]], args, out)
    else:
        _print_several(results, bands, baseline, args, out)
    if args.format == "table":
        out.write(f"judgments: {file_sources(qrels, args.qrels).describe()}; read as: {_conventions(qrels, args)}\n")
    return 0


def _workers(args: argparse.Namespace, budget: int | None) -> int:
    """The processes of ``--workers`` (default: up to 2), which split a file read with ``--memory-budget``."""
    workers = checked_count(args.workers)
    if args.workers is not None and (budget is None or args.scheduler):
        raise RankscopeError("--workers splits a run file read with --memory-budget, without --scheduler")
    return workers


def _conventions(qrels: pd.DataFrame | CodedTable, args: argparse.Namespace) -> str:
    labels = qrels.value if isinstance(qrels, CodedTable) else qrels["relevance"]
    return label_conventions(labels, args.relevance_level, args.exclude_unjudged, why=WHY_COUNTED["evaluate"])


def _read(path: str, kind: str, columns: dict[str, str] | None) -> pd.DataFrame | CodedTable:
    """A qrels or run file (TREC files coded: ids as codes, fastest); one that fails as ``kind`` but
    whose first line has the other kind's shape says so: QRELS and RUN were likely swapped."""
    try:
        return (read_qrels if kind == "qrels" else read_run)(path, columns, coded=True)
    except FormatError as exc:
        other = "run" if kind == "qrels" else "qrels"
        found = None if columns else looks_like(path, other)
        if found is None:
            raise
        hint = f"this looks like a {other} file ({found.label}); did you swap QRELS and RUN?"
        raise FormatError(exc.path, exc.line, f"{exc.problem}; {hint}") from None


def _evaluate_file(
    qrels: pd.DataFrame | CodedTable,
    run: pd.DataFrame | CodedTable,
    path: str,
    metrics: list[str],
    args: argparse.Namespace,
    client: Any,
    named: bool,
) -> tuple[EvaluationResult, dict[str, float]]:
    """Say (or with --strict refuse) what the run read from ``path`` shares with the qrels, score it
    (on ``client``'s cluster unless None), with its judged share by rank band from the same pass.

    ``named``: several runs, so each warning starts with the run's path."""
    _report(coverage_notes(qrels, run, allow_disjoint=args.allow_disjoint), path, args, named)  # evaluate()'s check
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # its warnings are among the notes printed
        result = evaluate(qrels, run, _with_bands(metrics), options=_options(args), scheduler=client)
    return _banded(result, metrics)


def _stream_file(
    qrels: pd.DataFrame | CodedTable,
    path: str,
    metrics: list[str],
    args: argparse.Namespace,
    where: tuple[int, Any, int],
    named: bool,
) -> tuple[EvaluationResult, dict[str, float]]:
    """:func:`_evaluate_file` of a TREC run read in pieces (:mod:`rankscope.evaluation.streaming`) in
    ``where`` = (memory budget, Dask client or None, worker processes); the coverage notes come once the
    whole file is read."""
    if sniff(path, "run").name not in ("trec", "parquet"):
        raise RankscopeError(
            f"{path}: --memory-budget reads TREC run files (query_id Q0 doc_id rank score tag) and Parquet runs"
        )
    budget, client, workers = where
    result, notes = stream_evaluate(
        qrels, path, _with_bands(metrics), options=_options(args), memory_budget=budget, client=client, workers=workers
    )
    _report(notes, path, args, named)
    return _banded(result, metrics)


def _options(args: argparse.Namespace) -> EvaluationOptions:
    """The options of evaluate that the command line sets."""
    return EvaluationOptions(**{field.name: getattr(args, field.name) for field in fields(EvaluationOptions)})


def _report(notes: list[str], path: str, args: argparse.Namespace, named: bool) -> None:
    """Print the coverage notes (each prefixed by the run's path when there are several), or with
    ``--strict`` refuse the first."""
    if notes and args.strict:
        raise RankscopeError(f"{path}: {notes[0]} (--strict)")
    print_warnings(args.command, [f"{path}: {note}" for note in notes] if named else notes)


def _with_bands(metrics: list[str]) -> list[str]:
    """``metrics`` and those the judged share by rank band is computed from, in the same pass."""
    return metrics + [name for name in band_metrics() if name not in metrics]


def _banded(result: EvaluationResult, metrics: list[str]) -> tuple[EvaluationResult, dict[str, float]]:
    """The result of ``metrics`` alone, and the judged share by rank band from the extra ones."""
    shares = shares_from(wide_table(result.per_query, result.metrics))
    per_query = result.per_query[result.per_query["metric"].isin(metrics)].reset_index(drop=True)
    return EvaluationResult(per_query, {m: result.mean[m] for m in metrics}, result.n_unjudged), shares


def given_runs(items: list[str]) -> dict[str, str]:
    """Each run argument's label (its ``NAME=``, else its path as typed) and the file to read; a file or a
    name given twice is refused."""
    pairs = [named_path(item) for item in items]
    paths = [path for _, path in pairs]
    if len(set(paths)) != len(paths):
        raise RankscopeError(f"a run file is listed twice: {paths}")
    labels = [path if name is None else name for name, path in pairs]
    if len(set(labels)) != len(labels):
        raise RankscopeError(f"a run name is given twice: {labels}")
    return dict(zip(labels, paths))


def checked_baseline(baseline: str | None, paths: list[str]) -> str:
    """``--baseline`` (refused unless it is one of the runs), else the first run."""
    if baseline is None:
        return paths[0]
    if baseline not in paths:
        raise RankscopeError(f"--baseline {baseline!r} is not among the runs {paths}")
    return baseline


def _print_one(result: EvaluationResult, bands: dict[str, float], args: argparse.Namespace, out: TextIO) -> None:
    if args.format == "json":
        json.dump({**result.to_dict(per_query=args.per_query), "judged_by_band": _json_shares(bands)}, out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        _summary_table(result, args.per_query).to_csv(out, index=False, lineterminator="\n")
    else:
        table = _summary_table(result, args.per_query)
        if args.per_query:
            table = wide_table(table, result.metrics)
        out.write(table.to_string(index=args.per_query, float_format=_fmt) + "\n")
        out.write(f"queries: {result.n_queries} (without relevant judgments: {result.n_unjudged})\n")
        out.write(f"judged share by rank band: {shown_shares(bands)}\n{BANDS_CAPTION}\n")


def _print_several(
    results: dict[str, EvaluationResult],
    bands: dict[str, dict[str, float]],
    baseline: str,
    args: argparse.Namespace,
    out: TextIO,
) -> None:
    """One row per run with best and significance marks (as ``compare``), then the tests themselves."""
    metrics = results[baseline].metrics
    significance = compare_results(
        results, baseline, metrics, test=args.test, correction="holm", seed=args.seed, alpha=ALPHA
    )
    summary = pd.DataFrame({path: result.mean for path, result in results.items()}).T[metrics]
    summary.index.name = "run"
    if args.format == "json":
        document = {
            "baseline": baseline,
            "test": args.test,
            "correction": "holm",
            "alpha": ALPHA,
            "runs": {
                path: {**result.to_dict(per_query=args.per_query), "judged_by_band": _json_shares(bands[path])}
                for path, result in results.items()
            },
            "significance": json.loads(significance.to_json(orient="records", double_precision=15)),
        }
        json.dump(document, out, indent=2)
        out.write("\n")
        return
    if args.format == "csv":
        rows = [_summary_table(result, args.per_query).assign(run=path) for path, result in results.items()]
        long = pd.concat(rows, ignore_index=True)
        long[["run", *(c for c in long.columns if c != "run")]].to_csv(out, index=False, lineterminator="\n")
        return
    out.write(mark_summary(summary, significance, baseline, index_name="run").to_string() + "\n\n")
    out.write(legend(args.test, "runs") + "\n\n")
    columns = ["metric", "system", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "significant"]
    out.write(significance[columns].to_string(index=False, float_format=_fmt) + "\n")
    first = results[baseline]
    out.write(f"queries: {first.n_queries} (without relevant judgments: {first.n_unjudged})\n")
    shares = pd.DataFrame.from_dict(bands, orient="index").rename_axis("run")
    out.write(f"\n{BANDS_CAPTION}\n{shares.to_string(float_format=_fmt, na_rep='-')}\n")
    print_warnings(args.command, hole_warnings(shares, baseline))
    if args.per_query:
        for path, result in results.items():
            out.write(f"\n== {path}\n{result.wide().to_string(float_format=_fmt)}\n")


def _json_shares(shares: dict[str, float]) -> dict[str, float | None]:
    """A band no query reached is null (JSON has no NaN)."""
    return {band: share if share == share else None for band, share in shares.items()}


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
