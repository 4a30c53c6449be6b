"""Runs and qrels as other tools hand them over: dict-of-dicts, ranx/ir_measures objects, other files.

- ``{query_id: {doc_id: score}}`` runs and ``{query_id: {doc_id: relevance}}`` qrels, as
  pytrec_eval and BEIR take them and ranx's ``Run.to_dict()`` / ``Qrels.to_dict()`` give them;
- any object with a ``to_dict()`` method returning that shape (ranx ``Run``/``Qrels``);
- ir_measures' runs and qrels: iterables of ``ScoredDoc(query_id, doc_id, score)`` /
  ``Qrel(query_id, doc_id, relevance, iteration)`` (any namedtuples with those fields);
- run files (:func:`read_run`): TREC (``query Q0 doc rank score tag [more]``), MS MARCO's
  three columns (``query<TAB>doc<TAB>rank``, no score: the score is minus the rank, so the
  file's order is kept), Parquet (``q_id``/``qid``/``query_id``, ``doc_id``/``docid``,
  ``score``: what ranx's ``Run.save("run.parquet")`` writes), JSONL/CSV/TSV with a header;
- qrels files (:func:`read_qrels`): TREC, BEIR's ``qrels/<split>.tsv``, Parquet (ranx's
  ``Qrels.save`` names the label ``score``), JSONL/CSV/TSV with a header.

Table files take a column mapping (:mod:`rankscope.corpora.tabular`; CLI ``--fields``);
TREC and MS MARCO files have fixed fields and refuse one. Everything comes back as the
schema's tables (:mod:`rankscope.corpora.schema`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rankscope.core.errors import FormatError, RankscopeError, SchemaError, duplicate_message
from rankscope.core.fileio import PathLike, read_head, read_lines, require_file
from rankscope.corpora.schema import sort_run, validate
from rankscope.corpora.tabular import Columns, from_frame, read_table

if TYPE_CHECKING:
    from rankscope.corpora.trec import CodedTable

TABLE_SUFFIXES = (".jsonl", ".csv", ".tsv", ".parquet")
"""Files read as tables with named columns (a ``.tsv`` only when it is not TREC or MS MARCO shaped)."""


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
    _refuse_repeated_pairs(frame, source)
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
    """A run file: TREC (6 or more fields), MS MARCO (query, doc, integer rank), Parquet, JSONL/CSV/TSV.

    ``columns`` maps the schema's run columns to a table file's (refused for TREC/MS MARCO files).
    ``coded``: a TREC file comes back as a :class:`~rankscope.corpora.trec.CodedTable` (file order, ids as
    codes: what evaluation scores fastest) instead of a table in tie-rule order.
    """
    from rankscope.corpora.trec import read_trec_coded, read_trec_run

    path = require_file(path, "run file")
    suffix = _suffix(path)
    if suffix == ".parquet":
        return sort_run(read_parquet(path, "run", columns))
    if suffix in (".jsonl", ".csv") or suffix == ".tsv" and columns:
        return sort_run(read_table(path, "run", columns))
    first = _first_line_words(path)
    msmarco = len(first) == 3 and first[2].isdigit()
    if suffix == ".tsv" and not msmarco and len(first) < 6:
        return sort_run(read_table(path, "run", columns))
    _no_mapping(path, columns, "an MS MARCO run" if msmarco else "a TREC run")
    if msmarco:
        return _read_msmarco_run(path)
    return read_trec_coded(path, "run") if coded else read_trec_run(path)


def _first_line_words(path: Path) -> list[str]:
    """The words of the file's first non-blank line, read from its head only (runs are large)."""
    head = read_head(path)
    lines = head.replace(b"\r", b"\n").split(b"\n")[:-1] or [head]  # the last piece may be cut
    first = next((line for line in lines if line.strip()), b"")
    return first.decode("utf-8", errors="replace").split()


def read_qrels(path: PathLike, columns: Columns | None = None, coded: bool = False) -> pd.DataFrame | CodedTable:
    """A qrels file: TREC (``query iteration doc relevance``), BEIR's TSV, Parquet, JSONL/CSV/TSV.

    ``columns`` maps the schema's qrels columns to a table file's (refused for TREC/BEIR files).
    ``coded``: a TREC file comes back as a :class:`~rankscope.corpora.trec.CodedTable` (see :func:`read_run`).
    """
    from rankscope.corpora.beir import QRELS_HEADER, read_beir_qrels
    from rankscope.corpora.trec import read_trec_coded, read_trec_qrels

    path = require_file(path, "qrels file")
    suffix = _suffix(path)
    if suffix == ".parquet":
        return read_parquet(path, "qrels", columns)
    if suffix in (".jsonl", ".csv") or suffix == ".tsv" and columns:
        return read_table(path, "qrels", columns)
    first = _first_line_words(path)
    if tuple(first) == QRELS_HEADER:
        _no_mapping(path, columns, "BEIR qrels")
        return read_beir_qrels(path)
    if suffix == ".tsv" and len(first) != 4:
        return read_table(path, "qrels", columns)
    _no_mapping(path, columns, "TREC qrels")
    return read_trec_coded(path, "qrels") if coded else read_trec_qrels(path)


def read_parquet(path: Path, kind: str, columns: Columns | None = None) -> pd.DataFrame:
    """A run or qrels table from a Parquet file (errors name the file and the row)."""
    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise RankscopeError(
            f"{path}: reading Parquet needs pyarrow or fastparquet (pip install 'rankscope[parquet]')"
        ) from None
    except Exception as exc:  # each engine raises its own types for a file that is not Parquet
        raise FormatError(path, None, f"not a valid Parquet file ({type(exc).__name__}: {exc})") from None
    table = from_frame(frame.reset_index(drop=True), kind, columns, source=str(path))
    _refuse_repeated_pairs(table, str(path), "row")
    return table


def _refuse_repeated_pairs(table: pd.DataFrame, source: str, unit: str = "entry") -> None:
    repeated = table.duplicated(["query_id", "doc_id"]).to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        key = (table["query_id"].iat[row], table["doc_id"].iat[row])
        raise SchemaError(f"{source}: {unit} {row}: {duplicate_message('query, document', key)}")


def _no_mapping(path: Path, columns: Columns | None, what: str) -> None:
    if columns:
        raise FormatError(path, None, f"is {what} file, whose fields are fixed; --fields maps columns of tables only")


def _suffix(path: Path) -> str:
    return Path(path.name.removesuffix(".gz")).suffix.lower()


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
