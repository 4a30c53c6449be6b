"""Runs and qrels as other tools hand them over: dict-of-dicts, ranx/ir_measures objects, other files.

- ``{query_id: {doc_id: score}}`` runs and ``{query_id: {doc_id: relevance}}`` qrels, as
  pytrec_eval and BEIR take them and ranx's ``Run.to_dict()`` / ``Qrels.to_dict()`` give them;
- any object with a ``to_dict()`` method returning that shape (ranx ``Run``/``Qrels``);
- ir_measures' runs and qrels: iterables of ``ScoredDoc(query_id, doc_id, score)`` /
  ``Qrel(query_id, doc_id, relevance, iteration)`` (any namedtuples with those fields);
- run and qrels files (:func:`read_run`, :func:`read_qrels`) in any format of the table in
  :mod:`rankscope.corpora.formats` (TREC, MS MARCO, BEIR, Parquet, JSONL/CSV/TSV, gzipped or not).

Table files take a column mapping (:mod:`rankscope.corpora.tabular`; CLI ``--fields``);
TREC, MS MARCO and BEIR files have fixed fields and refuse one. Everything comes back as the
schema's tables (:mod:`rankscope.corpora.schema`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from rankscope.core.errors import SchemaError
from rankscope.core.fileio import PathLike
from rankscope.corpora.formats import read_file, refuse_repeated_pairs
from rankscope.corpora.schema import sort_run, validate
from rankscope.corpora.tabular import Columns, from_frame

if TYPE_CHECKING:
    from rankscope.corpora.trec import CodedTable


def run_from_dict(run: Mapping[str, Mapping[str, float]], source: str = "run dict") -> pd.DataFrame:
    """``{query_id: {doc_id: score}}`` as a run table in tie-rule order."""
    frame = _long(run, "score", source)
    return sort_run(validate(frame, "run", source)[["query_id", "doc_id", "score"]])


def qrels_from_dict(qrels: Mapping[str, Mapping[str, int]], source: str = "qrels dict") -> pd.DataFrame:
    """``{query_id: {doc_id: relevance}}`` as a qrels table."""
    return validate(_long(qrels, "relevance", source), "qrels", source)


def as_table(value: Any, kind: str, source: str) -> pd.DataFrame:
    """A run or qrels given as a DataFrame, a dict of dicts, an object with ``to_dict()`` (ranx),
    or an iterable of namedtuples (ir_measures' ``ScoredDoc`` / ``Qrel``)."""
    if isinstance(value, pd.DataFrame):
        return value
    if not isinstance(value, Mapping) and callable(getattr(value, "to_dict", None)):
        value = value.to_dict()
    if isinstance(value, Mapping):
        return run_from_dict(value, source) if kind == "run" else qrels_from_dict(value, source)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return _from_tuples(value, kind, source)
    raise SchemaError(
        f"{source}: expected a DataFrame, a dict of dicts or ir_measures' namedtuples, got {type(value).__name__}"
    )


def named_runs(value: Any) -> dict[str, Any] | None:
    """``{name: run}`` when ``value`` holds several named runs (as ranx's ``compare(qrels, runs)``
    takes them), else None: each value is a DataFrame, a coded table, an object with ``to_dict()``
    (ranx ``Run``) or a dict of dicts, where a single run's values are ``{doc_id: score}`` dicts."""
    from rankscope.corpora.trec import CodedTable

    if not isinstance(value, Mapping) or not value:
        return None

    def is_run(item: object) -> bool:
        if isinstance(item, (pd.DataFrame, CodedTable)):
            return True
        if isinstance(item, Mapping):
            return any(isinstance(inner, Mapping) for inner in item.values())
        return callable(getattr(item, "to_dict", None))

    if not all(is_run(item) for item in value.values()):
        return None
    return dict(value)


def _from_tuples(rows: Iterable[Any], kind: str, source: str) -> pd.DataFrame:
    """ir_measures' ``ScoredDoc``/``Qrel`` rows (namedtuples) as a table of ``kind``."""
    rows = list(rows)
    if not rows:
        raise SchemaError(f"{source}: no (query, document) entries")
    fields = getattr(rows[0], "_fields", None)
    for number, row in enumerate(rows):
        if fields is None or getattr(row, "_fields", None) != fields:
            raise SchemaError(
                f"{source}: entry {number} is a {type(row).__name__}; expected namedtuples with the fields "
                f"of ir_measures' ScoredDoc or Qrel, all alike"
            )
    frame = from_frame(pd.DataFrame.from_records(rows, columns=fields), kind, source=source)
    refuse_repeated_pairs(frame, source)
    return sort_run(frame) if kind == "run" else frame


def _long(nested: Mapping[str, Mapping[str, Any]], value: str, source: str) -> pd.DataFrame:
    rows = []
    for query_id, docs in nested.items():
        if not isinstance(docs, Mapping):
            raise SchemaError(
                f"{source}: query {query_id!r} maps to {type(docs).__name__}, expected {{doc_id: {value}}}"
            )
        rows += [(str(query_id), str(doc_id), v) for doc_id, v in docs.items()]
    if not rows:
        raise SchemaError(f"{source}: no (query, document) entries")
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def read_run(path: PathLike, columns: Columns | None = None, coded: bool = False) -> pd.DataFrame | CodedTable:
    """A run file in any format of :data:`rankscope.corpora.formats.FORMATS`: TREC, MS MARCO, Parquet, JSONL/CSV/TSV.

    ``columns`` maps the schema's run columns to a table file's (refused for TREC/MS MARCO files).
    ``coded``: a TREC file comes back as a :class:`~rankscope.corpora.trec.CodedTable` (file order, ids as
    codes: what evaluation scores fastest) instead of a table in tie-rule order.
    """
    return read_file(path, "run", columns, coded)


def read_qrels(path: PathLike, columns: Columns | None = None, coded: bool = False) -> pd.DataFrame | CodedTable:
    """A qrels file in any format of :data:`rankscope.corpora.formats.FORMATS`: TREC, BEIR's TSV, Parquet,
    JSONL/CSV/TSV.

    ``columns`` maps the schema's qrels columns to a table file's (refused for TREC/BEIR files).
    ``coded``: a TREC file comes back as a :class:`~rankscope.corpora.trec.CodedTable` (see :func:`read_run`).
    """
    return read_file(path, "qrels", columns, coded)
