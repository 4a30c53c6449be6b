"""``evaluate`` of a TREC run file larger than memory: read in pieces of whole queries, each scored as it
comes, in memory bounded by ``memory_budget``; the same numbers as the whole file scored at once, bit for bit.

A built-in metric's value for a query depends only on that query's rows and judgments (what makes
:mod:`rankscope.evaluation.query_partitions` exact too). A run grouped by query (each query's lines
together, as runs are written) is read in pieces cut where the query id changes
(:func:`rankscope.corpora.trec_pieces.raw_pieces`); each piece goes through the compiled pass of
:mod:`rankscope.evaluation.judged_scan` straight to the table the metrics read (a piece it doubts is
read by the whole-file reader's line-by-line check, which names the bad line), is scored, and only its
per-query values are kept. The qrels queries the run lacks are scored against no rows, as the
whole-file path does. The values are then put in
:func:`~rankscope.evaluation.ranking.evaluated_queries` order, so the means are taken over the same
floats in the same order.

With a scheduler, a plain file is cut into spans of whole queries
(:func:`~rankscope.corpora.trec_pieces.query_starts`, :data:`SPANS_PER_WORKER` a worker), each read and
scored in pieces by a task; the spans' values are stacked and ordered as one process's, so the numbers
do not depend on the workers. A span in doubt has the file read here (which words the problem).

A run that is not grouped (a query's lines in two places) is first spread over ``buckets`` temporary
files by a hash of the query id, in pieces of ``memory_budget / PIECE_OVERHEAD`` bytes, so that each
bucket holds whole queries; each bucket is then read whole and scored (an external grouping: two passes
over the data, one write).

Peak memory is about ``PIECE_OVERHEAD`` times a piece's bytes, plus the qrels and the per-query
values; a piece is ``memory_budget / PIECE_OVERHEAD`` bytes, at most :data:`READ_BYTES` for the
compiled pass (shared among the workers with a scheduler).
"""

from __future__ import annotations

import copy
import io
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import PathLike, require_file
from rankscope.core.forked import forked_map, pool_size
from rankscope.core.params import WORKERS
from rankscope.core.scheduler import using, worker_count
from rankscope.corpora.formats import sniff
from rankscope.corpora.parquet_pieces import parquet_pieces
from rankscope.corpora.trec import CodedTable, coded_table
from rankscope.corpora.trec_pieces import empty_run, piece_table, query_starts, raw_pieces
from rankscope.evaluation.coverage import coverage_notes, warn_coverage
from rankscope.evaluation.engine import _coded_qrels, _judge_coded, _scored
from rankscope.evaluation.judged_scan import INTERLEAVED, Judgments
from rankscope.evaluation.metrics import DEFAULT_METRICS, Metric, parse_metrics
from rankscope.evaluation.options import EvaluationOptions, EvaluationSettings, evaluation_options
from rankscope.evaluation.query_partitions import refuse_defined
from rankscope.evaluation.ranking import evaluated_queries
from rankscope.evaluation.results import EvaluationResult
from rankscope.evaluation.stream_buckets import parquet_buckets, trec_buckets

PIECE_OVERHEAD = 16
READ_BYTES = 2 << 20
"""Bytes of a piece the compiled pass reads at most (more only for a longer query): small pieces are
read into memory the allocator reuses and whose outputs stay in cache (10^7 rows: 0.40 us of CPU a row
in pieces of 128 MiB, 0.26 us in pieces of 2 MiB)."""
"""Peak bytes of memory per byte of a piece of the run file (measured: benchmarks/bench_stream_evaluate.py)."""
DEFAULT_BUDGET = 2 << 30
"""2 GiB."""
_DOC_EXAMPLES = 1000
"""Document ids kept for the coverage note of a run retrieving no judged document."""
_FIELDS = re.compile(rb"[ \t]+")


class _NotGrouped(Exception):
    """A query's rows appear in two places of the file."""


def evaluate_run_file(
    qrels: Any,
    path: PathLike,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    options: EvaluationOptions | None = None,
    memory_budget: int = DEFAULT_BUDGET,
    workers: int = 1,
    scheduler: Any = None,
    **settings: Unpack[EvaluationSettings],
) -> EvaluationResult:
    """:func:`~rankscope.evaluation.evaluate` of the TREC run file at ``path``, read in pieces so that
    memory stays near ``memory_budget`` bytes whatever the file's size (the options are evaluate's, and
    so are its coverage warnings). ``workers``: forked processes scoring spans of a plain file of
    :data:`SPLIT_BYTES` or more; ``scheduler`` (``local:N``, an address or a Dask client): spans scored
    as tasks there instead. The budget is shared among the workers; the numbers are the same."""
    chosen = evaluation_options(options, settings, "evaluate_run_file")
    with using(scheduler) as client:
        result, notes = stream_evaluate(
            qrels, path, metrics, options=chosen, memory_budget=memory_budget, client=client, workers=workers
        )
    warn_coverage(notes, allow_disjoint=chosen.allow_disjoint, stacklevel=2)
    return result


def stream_evaluate(
    qrels: Any,
    path: PathLike,
    metrics: str | Iterable[str],
    *,
    options: EvaluationOptions,
    memory_budget: int,
    client: Any = None,
    workers: int = 1,
) -> tuple[EvaluationResult, list[str]]:
    """:func:`evaluate_run_file`'s result and every coverage note (what ``rankscope evaluate`` prints);
    ``client``: a Dask client, or None for this process and ``workers`` forked ones."""
    if memory_budget < 1 << 20:
        raise RankscopeError(f"memory budget {memory_budget} bytes is too small: give at least 1 MiB (e.g. 2G)")
    WORKERS.validate(workers, "stream_evaluate")
    parsed = parse_metrics(metrics)
    coded = _coded_qrels(qrels)
    path = require_file(path, "run file")
    piece_bytes = max(memory_budget // PIECE_OVERHEAD, 1 << 12)
    scorer = _Scorer(coded, parsed, options.relevance_level, options.ignore_self)
    if sniff(path, "run").name == "parquet":
        scorer = _parquet(scorer, path, memory_budget // PARQUET_ROW_BYTES)
        return scorer.result(options.judged_only, options.exclude_unjudged), scorer.notes(options.allow_disjoint)
    try:
        read = min(piece_bytes, READ_BYTES)
        plain = path.suffix != ".gz"  # a gzip stream cannot be entered in the middle
        if client is not None and plain:
            refuse_defined(parsed)
            workers = worker_count(client)
            scorer.merge(_partials(client, coded, path, parsed, max(read // workers, 1 << 12), (
                options.relevance_level, options.ignore_self, workers * SPANS_PER_WORKER)), path, read)  # fmt: skip
        elif plain and path.stat().st_size >= SPLIT_BYTES and pool_size(workers) > 1:
            scorer.merge(_forked_partials(scorer, path, min(piece_bytes // workers, READ_BYTES), workers), path, read)
        else:
            scorer.add_file(path, read)
    except _NotGrouped:
        scorer = scorer.fresh()
        with tempfile.TemporaryDirectory(prefix="rankscope_buckets_") as folder:
            scorer.add_all(trec_buckets(path, piece_bytes, Path(folder)))
    if scorer.rows == 0:
        raise empty_run(path)
    notes = scorer.notes(options.allow_disjoint)
    return scorer.result(options.judged_only, options.exclude_unjudged), notes


PARQUET_ROW_BYTES = 1000
"""Memory a row of a Parquet run's piece may take while it is scored (ids as ``str`` objects in pandas, the
coding, the judged table): a piece holds ``memory_budget / PARQUET_ROW_BYTES`` rows or more (whole queries)."""


def _parquet(scorer: _Scorer, path: Path, piece_rows: int) -> _Scorer:
    """The Parquet run at ``path`` scored in pieces of whole queries, row group by row group; one not grouped
    by query is spread over bucket files of whole queries first (Parquet files, by a hash of the query id)."""
    try:
        scorer.add_all(coded_table(piece, "run") for piece in parquet_pieces(path, piece_rows))
        return scorer
    except _NotGrouped:
        pass
    fresh = scorer.fresh()
    with tempfile.TemporaryDirectory(prefix="rankscope_buckets_") as folder:
        fresh.add_all(parquet_buckets(path, piece_rows, Path(folder)))
    return fresh


SPANS_PER_WORKER = 4
"""Spans of the file per worker with a scheduler: a worker slowed by other work leaves its share to the rest."""


class _Doubt(Exception):
    """A worker met a piece the compiled pass doubts: this process reads the file, which words the problem."""


@dataclass(frozen=True)
class _Partial:
    """What a span of the file gives (:meth:`_Scorer.partial`): per-query values, and the coverage check's inputs."""

    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    run_queries: list[str]
    doc_examples: np.ndarray | None
    retrieved_judged: bool
    rows: int


def _partials(
    client: Any, qrels: CodedTable, path: Path, metrics: Sequence[Metric], piece_bytes: int, rest: tuple[int, bool, int]
) -> list[_Partial | str]:
    """Each span's :class:`_Partial` (or why not: :data:`INTERLEAVED`, or ``"doubt"``) from tasks on ``client``."""
    relevance_level, ignore_self, spans = rest
    starts = query_starts(path, spans)
    shared = client.scatter(qrels, broadcast=True)
    futures = [
        client.submit(
            _score_span, shared, str(path), metrics, (start, end), piece_bytes, relevance_level, ignore_self, pure=False
        )  # fmt: skip
        for start, end in zip(starts[:-1], starts[1:])
    ]
    return list(client.gather(futures))


SPLIT_BYTES = 64 << 20
"""A plain run file smaller than this is read in this process whatever ``workers`` says: forking the
workers and taking their results back costs more than a second core saves on a few million rows."""


def _forked_partials(scorer: _Scorer, path: Path, piece_bytes: int, workers: int) -> list[_Partial | str]:
    """Each span's :class:`_Partial` (or why not) from ``workers`` forked processes, which inherit
    ``scorer``'s judgments (built here once) and metrics (those defined in this process too)."""
    scorer.judged_table()
    starts = query_starts(path, workers * SPANS_PER_WORKER)
    return list(forked_map(
        workers, _hold, (scorer, str(path), max(piece_bytes, 1 << 12)), _score_held_span,
        list(zip(starts[:-1], starts[1:])), f"scoring {path}",
    ))  # fmt: skip


_HELD: list[tuple[_Scorer, str, int]] = []
"""In a forked worker: the scorer, file and piece size its spans are scored with (:func:`_hold`)."""


def _hold(scorer: _Scorer, path: str, piece_bytes: int) -> None:
    _HELD.append((scorer, path, piece_bytes))


def _score_held_span(span: tuple[int, int]) -> _Partial | str:
    """A forked worker's task: one span of the file scored in pieces by a fresh copy of its scorer."""
    scorer, path, piece_bytes = _HELD[-1]
    return _span_partial(scorer.fresh(), path, span, piece_bytes)


def _score_span(
    qrels: CodedTable,
    path: str,
    metrics: Sequence[Metric],
    span: tuple[int, int],
    piece_bytes: int,
    relevance_level: int,
    ignore_self: bool,
) -> _Partial | str:
    """A Dask task: one span of the file scored in pieces."""
    return _span_partial(_Scorer(qrels, metrics, relevance_level, ignore_self), path, span, piece_bytes)


def _span_partial(scorer: _Scorer, path: str, span: tuple[int, int], piece_bytes: int) -> _Partial | str:
    try:
        for raw, _ in raw_pieces(Path(path), piece_bytes, span, lines=False):
            scorer.add_raw(raw, None)
    except _NotGrouped:
        return INTERLEAVED
    except _Doubt:
        return "doubt"
    return scorer.partial()


class _Scorer:
    """Per-query values of pieces of whole queries, and what the coverage check needs."""

    def __init__(self, qrels: CodedTable, metrics: Sequence[Metric], relevance_level: int, ignore_self: bool) -> None:
        self.qrels, self.metrics = qrels, metrics
        self.relevance_level, self.ignore_self = relevance_level, ignore_self
        order = np.argsort(qrels.query, kind="stable")
        self.by_query = order  # qrels rows grouped by query code
        counts = np.bincount(qrels.query, minlength=len(qrels.query_names))
        self.starts = np.concatenate([[0], np.cumsum(counts)])
        self.query_index = pd.Index(qrels.query_names)
        self.judgments: Judgments | None = None
        self._clear()

    def _clear(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.run_queries: set[str] = set()
        self.doc_examples: np.ndarray | None = None
        self.retrieved_judged = False
        self.rows = 0

    def fresh(self) -> _Scorer:
        """A scorer of the same qrels, metrics and judgments, holding no values yet."""
        other = copy.copy(self)
        other._clear()
        return other

    def judged_table(self) -> Judgments:
        """The judgments the compiled pass reads, built once."""
        if self.judgments is None:
            self.judgments = Judgments(self.qrels, self.relevance_level)
        return self.judgments

    def add_all(self, tables: Iterator[CodedTable]) -> None:
        for table in tables:
            self.add(table)

    def add_file(self, path: Path, piece_bytes: int) -> None:
        """Score the grouped run file at ``path`` piece by piece (:class:`_NotGrouped` if it is not). Lines
        are counted only when the compiled pass doubts a piece: then the file is read again, counting, so
        that the line-by-line reader names the bad line by its number in the file."""
        try:
            for raw, _ in raw_pieces(path, piece_bytes, lines=False):
                self.add_raw(raw, None)
        except _Doubt:
            self._clear()
            for raw, first_line in raw_pieces(path, piece_bytes):
                self.add_raw(raw, (path, first_line))

    def add_raw(self, raw: bytes, where: tuple[Path, int] | None) -> None:
        """Score one piece of whole lines through the compiled pass; one it doubts is read line by line at
        ``where`` (file, number of its first line), which words the problem, or with None is :class:`_Doubt`."""
        piece = self.judged_table().piece(raw, self.ignore_self)
        if piece is None:
            if where is None:
                raise _Doubt
            table = piece_table(where[0], raw, where[1])
            query = table.query
            if np.count_nonzero(query[1:] != query[:-1]) != max(len(table.query_names) - 1, 0):
                raise _NotGrouped
            if len(table):
                self.add(table)
            return
        if isinstance(piece, str):  # INTERLEAVED
            raise _NotGrouped
        if piece.rows == 0:
            return
        self._note_queries(piece.query_names, piece.rows)
        if self.doc_examples is None:
            self.doc_examples = _first_documents(raw)
        if piece.judged is not None:
            self.retrieved_judged |= len(piece.judged.q) > 0
            self.parts.append(_scored(piece.judged, self.metrics))

    def partial(self) -> _Partial:
        return _Partial(self.parts, sorted(self.run_queries), self.doc_examples, self.retrieved_judged, self.rows)

    def merge(self, partials: list[_Partial | str], path: Path, piece_bytes: int) -> None:
        """Take the spans' partials in file order; a span in doubt: the whole file read here instead."""
        if "doubt" in partials:
            self.add_file(path, piece_bytes)
            return
        for partial in partials:
            if isinstance(partial, str):
                raise _NotGrouped
            self._note_queries(np.array(partial.run_queries, dtype=object), partial.rows)
            if self.doc_examples is None:
                self.doc_examples = partial.doc_examples
            self.retrieved_judged |= partial.retrieved_judged
            self.parts.extend(partial.parts)

    def _note_queries(self, names: np.ndarray, rows: int) -> None:
        """Count a piece's queries and rows; a query seen in an earlier piece is :class:`_NotGrouped`."""
        fresh = len(self.run_queries)
        self.run_queries.update(names)
        if len(self.run_queries) - fresh != len(names):
            raise _NotGrouped
        self.rows += rows

    def add(self, run: CodedTable) -> None:
        """Score one piece holding whole queries (its queries must be new)."""
        names = run.query_names
        self._note_queries(names, len(run))
        if self.doc_examples is None:
            self.doc_examples = run.doc_names[:_DOC_EXAMPLES]
        codes = self.query_index.get_indexer(names)
        codes = codes[codes >= 0]
        if len(codes) == 0:
            return  # no query of the piece is judged: trec_eval ignores them
        judged = _judge_coded(
            self._qrels_of(codes), run, self.ignore_self, relevance_level=self.relevance_level, judged_only=True
        )
        self.retrieved_judged |= len(judged.q) > 0
        self.parts.append(_scored(judged, self.metrics))

    def result(self, judged_only: bool, exclude_unjudged: bool) -> EvaluationResult:
        names = self.qrels.query_names
        query_ids = evaluated_queries(
            names[np.unique(self.qrels.query)], np.array(sorted(self.run_queries)), judged_only
        )
        missing = query_ids[~pd.Index(query_ids).isin(list(self.run_queries))]
        if len(missing):  # judged queries the run lacks: scored against no rows, as the whole-file path does
            no_codes, no_names = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
            empty = CodedTable("run", no_codes, no_names, no_codes, no_names, np.zeros(0))
            absent = _judge_coded(
                self._qrels_of(self.query_index.get_indexer(missing)),
                empty,
                False,
                relevance_level=self.relevance_level,
                judged_only=False,
            )
            self.parts.append(_scored(absent, self.metrics))
        ids = np.concatenate([part[0] for part in self.parts])
        order = np.argsort(ids)  # distinct ids: evaluated_queries' order (code point order)
        values = np.concatenate([part[1] for part in self.parts])[order]
        unjudged = np.concatenate([part[2] for part in self.parts])[order]
        ids = ids[order]
        if exclude_unjudged:
            ids, values = ids[~unjudged], values[~unjudged]
            if len(ids) == 0:
                raise RankscopeError("exclude_unjudged: no evaluated query has a relevant judgment")
        names_of_metrics = tuple(metric.name for metric in self.metrics)
        return EvaluationResult.from_matrix(ids, names_of_metrics, values, int(unjudged.sum()))

    def _qrels_of(self, codes: np.ndarray) -> CodedTable:
        """The judgments of the queries ``codes`` (qrels codes), as a small coded table of their own ids."""
        lengths = self.starts[codes + 1] - self.starts[codes]
        rows = self.by_query[np.repeat(self.starts[codes], lengths) + _offsets(lengths)]
        doc_codes, doc = np.unique(self.qrels.doc[rows], return_inverse=True)
        return CodedTable(
            "qrels",
            np.repeat(np.arange(len(codes), dtype=np.int64), lengths),
            self.qrels.query_names[codes],
            doc.astype(np.int64).reshape(-1),
            self.qrels.doc_names[doc_codes],
            self.qrels.value[rows],
        )

    def notes(self, allow_disjoint: bool) -> list[str]:
        """evaluate's coverage notes (and its DisjointRunError) on the run's distinct queries; documents from
        the first piece's ids (a note only when no piece retrieved a judged document). When one did, one judged
        document stands for both sides: the note is about their overlap only, and sorting or hashing a
        million judged ids for it cost 2.2 s of CPU."""
        docs = self.doc_examples if self.doc_examples is not None else np.zeros(0, dtype=object)
        judged = self.qrels.doc_names
        if self.retrieved_judged:
            docs = judged = judged[:1]
        run = {"query_id": np.array(sorted(self.run_queries), dtype=object), "doc_id": docs}
        qrels = {"query_id": self.qrels.query_names, "doc_id": judged}
        return coverage_notes(qrels, run, allow_disjoint=allow_disjoint)


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n-1 for each n of ``lengths``, concatenated."""
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def _first_documents(raw: bytes) -> np.ndarray:
    """The first distinct document ids of a piece (at most :data:`_DOC_EXAMPLES`), in order of appearance."""
    seen: dict[str, None] = {}
    for line in io.BytesIO(raw):
        fields = _FIELDS.split(line.strip(b" \t\r\n"))
        if len(fields) > 2:
            seen.setdefault(fields[2].decode(), None)
            if len(seen) == _DOC_EXAMPLES:
                break
    return np.array(list(seen), dtype=object)
