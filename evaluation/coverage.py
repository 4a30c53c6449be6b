"""Do a run and qrels describe the same queries and documents? Counted notes, and an error when not at all.

trec_eval ignores run queries missing from the qrels and scores qrels queries
missing from the run 0. That is the right arithmetic, but a run whose query ids are
written differently (``001`` for ``1``, ``"1"`` for ``1``) or that belongs to another
collection then scores 0 without a word. These checks say so: a run sharing no query
with the qrels is an error (``allow_disjoint=True``, ``--allow-disjoint``: scored anyway,
every query 0, as ``trec_eval -c``); partial overlap and a run that retrieves none of the
judged documents are counted notes the CLI prints. :func:`rankscope.evaluation.evaluate` runs the
same check, and warns (:class:`CoverageWarning`) of the notes whose ids match once written alike:
the silent zeros of ids read as numbers (``1.0``) or zero-padded (``001``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from typing import TypeAlias

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.trec import CodedTable
from rankscope.evaluation.ranking import distinct_objects

_WRITTEN_ALIKE = re.compile(r'^["\']|["\']$|\.0+$')


class CoverageWarning(UserWarning):
    """Run ids that match the qrels' only once written alike: those queries or documents score 0."""


class DisjointRunError(RankscopeError):
    """The run shares no query with the qrels: every query would score 0."""


Table: TypeAlias = pd.DataFrame | CodedTable | Mapping[str, np.ndarray]
"""A run or qrels as :func:`coverage_notes` reads it: a frame, a coded table, or its id columns as arrays."""


def coverage_notes(qrels: Table, run: Table, *, allow_disjoint: bool = False) -> list[str]:
    """Notes on queries found in only one of the two tables and on judged documents never retrieved.

    Raises :class:`DisjointRunError` when the run shares no query with the qrels (every query would
    score 0), unless ``allow_disjoint``: then that is the one note.
    """
    run_queries, qrels_queries = _distinct(run, "query_id"), _distinct(qrels, "query_id")
    if not run_queries & qrels_queries:
        if not run_queries:
            problem, question = "the run is empty: every query would score 0", ""
        else:
            problem = (
                f"the run's {len(run_queries)} queries share none with the qrels' {len(qrels_queries)} "
                f"(run {_examples(run_queries)}, qrels {_examples(qrels_queries)}){_hint(run_queries, qrels_queries)}: "
                "every query would score 0"
            )
            question = "; is it the run of another collection?"
        if allow_disjoint:
            return [f"{problem.replace('would score', 'scores')} (allowed)"]
        raise DisjointRunError(f"{problem}{question} (to score it anyway: --allow-disjoint, allow_disjoint=True)")
    notes = []
    only_run, only_qrels = run_queries - qrels_queries, qrels_queries - run_queries
    if only_run:
        notes.append(
            f"{len(only_run)} of {len(run_queries)} run queries are not in the qrels (ignored; "
            f"e.g. {_examples(only_run)}){_hint(only_run, qrels_queries)}"
        )
    if only_qrels:
        notes.append(
            f"{len(only_qrels)} of {len(qrels_queries)} qrels queries are not in the run (they score 0; "
            f"e.g. {_examples(only_qrels)})"
        )
    run_docs, judged_docs = _distinct(run, "doc_id"), _distinct(qrels, "doc_id")
    if not run_docs & judged_docs:
        notes.append(
            f"the run retrieves none of the {len(judged_docs)} judged documents (run {_examples(run_docs)}, "
            f"qrels {_examples(judged_docs)}){_hint(run_docs, judged_docs)}"
        )
    return notes


def written_alike(note: str) -> bool:
    """Whether a note of :func:`coverage_notes` found ids that match once written alike."""
    return _ALIKE in note


def warn_coverage(notes: Iterable[str], *, allow_disjoint: bool, stacklevel: int) -> None:
    """Warn (:class:`CoverageWarning`) of the notes evaluate reports in Python: ids that match once
    written alike, and every note of a run scored with ``allow_disjoint``. ``stacklevel`` counts from
    the caller, as :func:`warnings.warn`'s would there."""
    for note in notes:
        if written_alike(note) or allow_disjoint:
            warnings.warn(note, CoverageWarning, stacklevel=stacklevel + 1)


def _distinct(table: Table, column: str) -> set[str]:
    """The distinct ids of ``column``: a coded table lists them; in a frame, one row per distinct object is
    hashed (a run read from a file holds one str object per distinct id), far faster than pd.unique."""
    if isinstance(table, CodedTable):
        return set(table.query_names if column == "query_id" else table.doc_names)
    values = table[column]
    return set(distinct_objects(values.to_numpy(dtype=object) if isinstance(values, pd.Series) else values))


def _examples(ids: set[str]) -> list[str]:
    return sorted(ids)[:3]


def _hint(ids: set[str], known: set[str]) -> str:
    """Say so when ids would match once quotes, leading zeros or a trailing ``.0`` are dropped."""
    alike = {_normalised(i) for i in known}
    matched = sorted(i for i in ids if i not in known and _normalised(i) in alike)
    if not matched:
        return ""
    return f"; {len(matched)} of them {_ALIKE} (e.g. {matched[0]!r}: quotes, leading zeros, '.0')"


_ALIKE = "match once written alike"


def _normalised(identifier: str) -> str:
    stripped = _WRITTEN_ALIKE.sub("", identifier)
    if stripped.isascii() and stripped.isdigit():
        return str(int(stripped[-30:]) if len(stripped) <= 30 else stripped.lstrip("0"))
    return stripped
