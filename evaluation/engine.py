"""``evaluate``: score a run against qrels with trec_eval's semantics, all queries at once.

Which queries count (trec_eval ``-c`` by default):

- queries in the qrels are evaluated; a qrels query missing from the run scores 0
  on every metric and counts in the mean (``judged_only=True``: average only over
  queries present in both);
- run queries absent from the qrels are ignored;
- a query whose judgments contain no relevant document scores 0 and counts
  (``exclude_unjudged=True`` leaves it out); their number is always reported as
  ``n_unjudged``;
- a run sharing no query with the qrels is refused (``allow_disjoint=True`` scores it, every
  query 0), and ids that match the qrels' only once written alike (``1.0``, ``001``) are a
  :class:`~rankscope.evaluation.coverage.CoverageWarning`: the check ``rankscope evaluate`` runs
  (:mod:`rankscope.evaluation.coverage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, Unpack, overload

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError
from rankscope.core.phases import phase
from rankscope.corpora.foreign import as_table, named_runs
from rankscope.corpora.schema import validate
from rankscope.corpora.trec import CodedTable, coded_table
from rankscope.evaluation.coverage import Table, coverage_notes, warn_coverage
from rankscope.evaluation.metrics import DEFAULT_METRICS, Metric, parse_metrics
from rankscope.evaluation.options import EvaluationOptions, EvaluationSettings, evaluation_options
from rankscope.evaluation.ranking import Judged, judge_coded, judge_run
from rankscope.evaluation.results import EvaluationResult


@overload
def evaluate(
    qrels: Any,
    run: Mapping[str, Any],
    metrics: str | Iterable[str] = ...,
    *,
    options: EvaluationOptions | None = ...,
    scheduler: Any = ...,
    **settings: Unpack[EvaluationSettings],
) -> dict[str, EvaluationResult]: ...  # several named runs (a single dict-of-dicts run is typed so too)
@overload
def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Iterable[str] = ...,
    *,
    options: EvaluationOptions | None = ...,
    scheduler: Any = ...,
    **settings: Unpack[EvaluationSettings],
) -> EvaluationResult: ...
@phase("evaluate")
def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    options: EvaluationOptions | None = None,
    scheduler: Any = None,
    **settings: Unpack[EvaluationSettings],
) -> EvaluationResult | dict[str, EvaluationResult]:
    """Score ``run`` (``query_id, doc_id, score[, rank]``) against ``qrels`` (``query_id, doc_id, relevance``).

    ``run`` may also be several named runs, ``{name: run}`` (as ranx's ``compare(qrels, runs)``
    takes them): the result is then ``{name: EvaluationResult}``, each the same as scoring that
    run alone (significance tests between them: :func:`rankscope.compare` with ``qrels=``).

    Either may also be a dict of dicts (``{query_id: {doc_id: score or relevance}}``, as
    pytrec_eval and BEIR take them) or an object with ``to_dict()`` giving one (ranx); a
    :class:`~rankscope.corpora.trec.CodedTable` (``read_run(path, coded=True)`` of a TREC file) is
    scored on its integer codes, which is several times faster on large runs.

    Documents are ranked by score descending, ties by doc_id descending (byte order); the ``rank``
    column is ignored. ``options`` (an :class:`~rankscope.evaluation.options.EvaluationOptions`) or its
    fields as keywords (``relevance_level=2``, ``judged_only``, ``exclude_unjudged``, ``ignore_self``,
    ``allow_disjoint``) set what relevant means and which queries count; nDCG uses the graded labels.
    Neither frame is modified.

    A run sharing no query with the qrels is a :class:`~rankscope.evaluation.coverage.DisjointRunError`
    (every query would score 0: ids written otherwise, or another collection's run) unless
    ``allow_disjoint``; ids that match only once written alike are a ``CoverageWarning``.

    ``scheduler`` (``local:N``, a Dask scheduler's address or a connected ``distributed.Client``)
    scores partitions of the queries there as tasks (:mod:`rankscope.evaluation.query_partitions`);
    the result is the same, bit for bit.

    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d4": 0.8, "d3": 0.7}}
    >>> evaluate(qrels, run, ["mrr", "precision@1"]).mean
    {'mrr': 0.75, 'precision@1': 0.5}
    >>> evaluate(qrels, run, "mrr", relevance_level=2).mean
    {'mrr': 0.25}
    """
    chosen = evaluation_options(options, settings, "evaluate")
    parsed = parse_metrics(metrics)
    several = named_runs(run)
    if several is not None:
        return {name: _evaluate_one(qrels, one, parsed, chosen, scheduler) for name, one in several.items()}
    return _evaluate_one(qrels, run, parsed, chosen, scheduler)


def _evaluate_one(
    qrels: Any, run: Any, parsed: Sequence[Metric], options: EvaluationOptions, scheduler: Any
) -> EvaluationResult:
    """One run scored (:func:`evaluate`'s body)."""
    levels: dict[str, Any] = {"relevance_level": options.relevance_level, "judged_only": options.judged_only}
    if isinstance(run, CodedTable) and scheduler is None:
        qrels = _coded_qrels(qrels)
        _check_coverage(qrels, run, options.allow_disjoint)
        query_ids, values, unjudged = _scored(_judge_coded(qrels, run, options.ignore_self, **levels), parsed)
    else:
        columns = _columns(qrels, run, options.ignore_self)
        _check_coverage(
            {"query_id": columns.qrels_query, "doc_id": columns.qrels_doc},
            {"query_id": columns.run_query, "doc_id": columns.run_doc},
            options.allow_disjoint,
        )
        if scheduler is None:
            query_ids, values, unjudged = score_queries(columns, parsed, **levels)
        else:
            from rankscope.core.scheduler import using
            from rankscope.evaluation.query_partitions import partitioned_scores

            with using(scheduler) as client:
                query_ids, values, unjudged = partitioned_scores(columns, parsed, client=client, **levels)
    if options.exclude_unjudged:
        query_ids, values = query_ids[~unjudged], values[~unjudged]
        if len(query_ids) == 0:
            raise RankscopeError("exclude_unjudged: no evaluated query has a relevant judgment")
    names = tuple(metric.name for metric in parsed)
    return EvaluationResult.from_matrix(query_ids, names, values, int(unjudged.sum()))


class Columns(NamedTuple):
    """What :func:`~rankscope.evaluation.ranking.judge_run` reads, as 1-d arrays (ids as ``str`` objects)."""

    qrels_query: np.ndarray
    qrels_doc: np.ndarray
    qrels_label: np.ndarray
    run_query: np.ndarray
    run_doc: np.ndarray
    run_score: np.ndarray


def score_queries(
    columns: Columns, metrics: Sequence[Metric], *, relevance_level: int, judged_only: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The evaluated queries (:func:`~rankscope.evaluation.ranking.evaluated_queries` order), their
    values (one column per metric) and which of them have no relevant judgment."""
    return _scored(judge_run(*columns, relevance_level=relevance_level, judged_only=judged_only), metrics)


def _scored(judged: Judged, metrics: Sequence[Metric]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = np.column_stack([metric.compute(judged) for metric in metrics])
    return judged.query_ids, values, judged.num_rel == 0


def _columns(qrels: object, run: object, ignore_self: bool) -> Columns:
    """The columns of tables (or of what :func:`as_table` takes, or of coded tables), ids as ``str`` per row."""
    if isinstance(qrels, CodedTable):
        qrels = qrels.frame()
    if isinstance(run, CodedTable):
        run = run.frame()
    judgments = validate(as_table(qrels, "qrels", "qrels"), "qrels", "qrels")
    if judgments.empty:
        raise SchemaError("qrels: no judgments, nothing to evaluate")
    run_query, run_doc, run_score = _run_columns(as_table(run, "run", "run"))
    if ignore_self:
        other = run_doc != run_query
        run_query, run_doc, run_score = run_query[other], run_doc[other], run_score[other]
    return Columns(
        judgments["query_id"].to_numpy(dtype=object),
        judgments["doc_id"].to_numpy(dtype=object),
        judgments["relevance"].to_numpy(dtype=np.int64),
        run_query,
        run_doc,
        run_score,
    )


def _check_coverage(qrels: Table, run: Table, allow_disjoint: bool) -> None:
    """The query and document coverage check of ``rankscope evaluate`` (:func:`coverage_notes`): raises
    for a run sharing no query with the qrels, warns of ids that match once written alike."""
    warn_coverage(
        coverage_notes(qrels, run, allow_disjoint=allow_disjoint), allow_disjoint=allow_disjoint, stacklevel=3
    )


def _coded_qrels(qrels: object) -> CodedTable:
    """Qrels as a coded table (checked), for scoring a coded run."""
    if not isinstance(qrels, CodedTable):
        qrels = coded_table(validate(as_table(qrels, "qrels", "qrels"), "qrels", "qrels"), "qrels")
    if len(qrels) == 0:
        raise SchemaError("qrels: no judgments, nothing to evaluate")
    return qrels


def _judge_coded(
    qrels: CodedTable, run: CodedTable, ignore_self: bool, *, relevance_level: int, judged_only: bool
) -> Judged:
    """The judged run from a coded run (a TREC file as the compiled reader gives it), no ``str`` per row."""
    if ignore_self:
        own_doc = pd.Index(run.doc_names).get_indexer(run.query_names)  # each query id's doc code, -1 if none
        other = run.doc != own_doc[run.query]
        run = replace(run, query=run.query[other], doc=run.doc[other], value=run.value[other])
    return judge_coded(qrels, run, relevance_level=relevance_level, judged_only=judged_only)


def _run_columns(run: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """query_id and doc_id as arrays of str, score as finite float64.

    Checked column by column rather than through ``corpora.schema.validate``, which
    copies the frame and recomputes ranks: runs reach tens of millions of rows and
    the rank column is ignored here anyway.
    """
    if not isinstance(run, pd.DataFrame):
        raise SchemaError(f"run: expected a pandas DataFrame, got {type(run).__name__}")
    missing = [c for c in ("query_id", "doc_id", "score") if c not in run.columns]
    if missing:
        raise SchemaError(
            f"run: missing column(s) {missing}; expected ['query_id', 'doc_id', 'score'(, 'rank')], "
            f"found {list(map(str, run.columns))}"
        )
    return _ids(run["query_id"], "query_id"), _ids(run["doc_id"], "doc_id"), _scores(run["score"])


def _ids(column: pd.Series, name: str) -> np.ndarray:
    """The ids as an object array of ``str`` (one C-level type check when they already are)."""
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values
    missing = pd.isna(values)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise SchemaError(f"run: column {name!r} has a missing value at row {row}")
    return values.astype(str).astype(object)  # ids are strings (schema rule), e.g. 7 -> "7"


def _scores(column: pd.Series) -> np.ndarray:
    if column.dtype == np.float64:
        numeric = column.to_numpy()  # no copy; NaN fails the finiteness check below
    else:
        numeric = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(numeric)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise SchemaError(f"run: column 'score' must hold finite numbers; row {row} has {column.iloc[row]!r}")
    return numeric
