"""Runs and qrels as other tools hand them over: dict-of-dicts, ranx/ir_measures objects, MS MARCO runs.

- ``{query_id: {doc_id: score}}`` runs and ``{query_id: {doc_id: relevance}}`` qrels, as
  pytrec_eval and BEIR take them and ranx's ``Run.to_dict()`` / ``Qrels.to_dict()`` give them;
- any object with a ``to_dict()`` method returning that shape (ranx ``Run``/``Qrels``);
- run files: TREC (``query Q0 doc rank score tag [more]``) or MS MARCO's three columns
  (``query<TAB>doc<TAB>rank``, no score: the score is minus the rank, so the file's order
  is kept), told apart by the number of fields on the first line.

Everything comes back as the schema's tables (:mod:`rankscope.corpora.schema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import FormatError, SchemaError
from rankscope.core.fileio import PathLike, read_lines, require_file
from rankscope.corpora.schema import sort_run, validate


def run_from_dict(run: Mapping[str, Mapping[str, float]], source: str = "run dict") -> pd.DataFrame:
    """``{query_id: {doc_id: score}}`` as a run table in tie-rule order."""
    frame = _long(run, "score", source)
    return sort_run(validate(frame, "run", source)[["query_id", "doc_id", "score"]])


def qrels_from_dict(qrels: Mapping[str, Mapping[str, int]], source: str = "qrels dict") -> pd.DataFrame:
    """``{query_id: {doc_id: relevance}}`` as a qrels table."""
    return validate(_long(qrels, "relevance", source), "qrels", source)


def as_table(value: Any, kind: str, source: str) -> pd.DataFrame:
    """A run or qrels given as a DataFrame, a dict of dicts, or an object with ``to_dict()`` (ranx)."""
    if isinstance(value, pd.DataFrame):
        return value
    if not isinstance(value, Mapping) and callable(getattr(value, "to_dict", None)):
        value = value.to_dict()
    if isinstance(value, Mapping):
        return run_from_dict(value, source) if kind == "run" else qrels_from_dict(value, source)
    raise SchemaError(f"{source}: expected a DataFrame or a dict of dicts, got {type(value).__name__}")


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


def read_run(path: PathLike) -> pd.DataFrame:
    """A run file in TREC format (6 or more fields) or MS MARCO's (3 fields: query, doc, rank)."""
    from rankscope.corpora.trec import read_trec_run

    path = require_file(path, "run file")
    first = next((line for line in read_lines(path) if line.strip()), "")
    if len(first.split()) != 3:
        return read_trec_run(path)
    return _read_msmarco_run(path)


def _read_msmarco_run(path: Any) -> pd.DataFrame:
    """``query<TAB>doc<TAB>rank`` lines; the score is minus the rank (rank 1 scores highest)."""
    rows = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3 or not fields[2].isdigit():
            raise FormatError(path, number, f"expected 3 fields 'query_id doc_id rank' (MS MARCO run), found {line!r}")
        rows.append(fields)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank"])
    if frame.duplicated(["query_id", "doc_id"]).any():
        first = frame[frame.duplicated(["query_id", "doc_id"])].iloc[0]
        raise FormatError(path, None, f"query {first['query_id']!r} lists document {first['doc_id']!r} twice")
    frame["score"] = -frame["rank"].astype(np.float64)
    return sort_run(frame[["query_id", "doc_id", "score"]])
