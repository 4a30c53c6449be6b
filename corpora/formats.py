"""Run and qrels files in one table: each format a row of (name, sniff, reader, writer).

A file is read by the first row of its kind whose ``sniff`` recognises it, from its suffix
(``.gz`` aside) and, for text files, the words of its first non-blank line: Parquet by its
suffix; JSONL and CSV by theirs; a ``.tsv`` is a table with a header unless its first line is
shaped like a fixed-field format of the kind (MS MARCO or TREC runs, BEIR or TREC qrels), or
columns are mapped; then MS MARCO runs and BEIR qrels by their first line; TREC takes the rest
(its reader names the first bad line). Adding a format is one row here plus its reader and
writer; ``rankscope evaluate --help`` and docs/corpora.md list the rows
(``tests/corpora/test_formats.py`` checks the docs against the table).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rankscope.core.errors import FormatError, SchemaError, duplicate_message
from rankscope.core.extras import missing_extra
from rankscope.core.fileio import PathLike, atomic_write, read_head, read_lines, require_file
from rankscope.corpora.checks import empty_table
from rankscope.corpora.schema import sort_run, string_ids, validate
from rankscope.corpora.stream import DELIMITERS
from rankscope.corpora.tabular import ALIASES, Columns, from_frame, read_table

if TYPE_CHECKING:
    import pandas as pd

    from rankscope.corpora.trec import CodedTable

KINDS = ("run", "qrels")
COLUMNS = {"run": ["query_id", "doc_id", "score"], "qrels": ["query_id", "doc_id", "relevance"]}
"""The columns a writer puts in a table file (a run's rank follows from its scores by the tie rule)."""


@dataclass(frozen=True)
class Clue:
    """What sniffing looks at: the suffix without ``.gz``, whether columns are mapped, the first line's words."""

    path: Path
    kind: str
    mapped: bool

    @property
    def suffix(self) -> str:
        return Path(self.path.name.removesuffix(".gz")).suffix.lower()

    @cached_property
    def first(self) -> tuple[str, ...]:
        """The words of the first non-blank line, from the file's head only (runs are large); read on demand."""
        head = read_head(self.path)
        lines = head.replace(b"\r", b"\n").split(b"\n")[:-1] or [head]  # the last piece may be cut
        first = next((line for line in lines if line.strip()), b"")
        return tuple(first.decode("utf-8", errors="replace").split())


Reader = Callable[[Path, "Columns | None", bool], "pd.DataFrame | CodedTable"]
Writer = Callable[["pd.DataFrame", Path], None]


@dataclass(frozen=True)
class Format:
    """One file format of runs or of qrels.

    ``shape`` (fixed-field formats only) tells the format from a first line; such a format refuses a
    column mapping. ``example`` is a file name the format is written to and recognised by.
    """

    name: str
    kind: str
    sniff: Callable[[Clue], bool]
    read: Reader
    write: Writer
    label: str
    fields: str
    example: str
    shape: Callable[[tuple[str, ...]], bool] | None = None


# --- readers and writers --------------------------------------------------------------
def read_parquet(path: Path, kind: str, columns: Columns | None = None) -> pd.DataFrame:
    """A run or qrels table from a Parquet file (errors name the file and the row)."""
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except ImportError:  # pandas found neither engine
        raise missing_extra(f"{path}: reading Parquet", "pyarrow or fastparquet", "parquet") from None
    except Exception as exc:  # each engine raises its own types for a file that is not Parquet
        raise FormatError(path, None, f"not a valid Parquet file ({type(exc).__name__}: {exc})") from None
    if frame.empty:
        raise empty_table(path, kind)
    table = from_frame(frame.reset_index(drop=True), kind, columns, source=str(path))
    refuse_repeated_pairs(table, str(path), "row")
    return table


def _write_parquet(table: pd.DataFrame, path: Path) -> None:
    with atomic_write(path, "wb") as handle:
        try:
            table.to_parquet(handle, index=False)
        except ImportError:  # pandas found neither engine
            raise missing_extra(f"{path}: writing Parquet", "pyarrow or fastparquet", "parquet") from None


def refuse_repeated_pairs(
    table: pd.DataFrame, source: str, unit: str = "entry", first_row: int | np.ndarray = 0
) -> None:
    """A (query, document) pair twice is an error naming the first repeat (``first_row``: the table's first
    row's number in the file, for a piece of one; or each row's number, for rows from several places)."""
    repeated = table.duplicated(["query_id", "doc_id"]).to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        key = (table["query_id"].iat[row], table["doc_id"].iat[row])
        number = first_row + row if isinstance(first_row, int) else int(first_row[row])
        raise SchemaError(f"{source}: {unit} {number}: {duplicate_message('query, document', key)}")


def _write_jsonl(table: pd.DataFrame, path: Path) -> None:
    from rankscope.corpora.jsonl import write_jsonl

    write_jsonl(table.to_dict("records"), path)


def _delimited_writer(delimiter: str) -> Writer:
    def write(table: pd.DataFrame, path: Path) -> None:
        with atomic_write(path) as handle:
            rows = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
            rows.writerow(table.columns)
            rows.writerows(table.itertuples(index=False))

    return write


def _read_msmarco_run(path: Path) -> pd.DataFrame:
    """``query<TAB>doc<TAB>rank`` lines; the score is minus the rank (rank 1 scores highest).

    A document listed twice for a query, or two documents at one rank of a query, is an error naming
    both lines: from equal ranks the tie rule, not the file, would choose the order.
    """
    import pandas as pd

    from rankscope.corpora.checks import id_problem, integer_problem

    rows: list[list[str]] = []
    numbers: list[int] = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if not _msmarco_line(tuple(fields)):
            raise FormatError(path, number, f"expected 3 fields 'query_id doc_id rank' (MS MARCO run), found {line!r}")
        problem = id_problem(fields[0], "query_id") or id_problem(fields[1], "doc_id")
        if problem or (problem := integer_problem(fields[2], "rank")):
            raise FormatError(path, number, problem)
        rows.append(fields)
        numbers.append(number)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank"])
    frame["score"] = -frame["rank"].astype(np.float64)
    for key in (["query_id", "doc_id"], ["query_id", "score"]):
        repeated = np.flatnonzero(frame.duplicated(key).to_numpy())
        if len(repeated):
            second = int(repeated[0])
            first = int(np.flatnonzero((frame[key] == frame[key].iloc[second]).all(axis=1).to_numpy())[0])
            query, doc, rank = rows[second]
            problem = (
                duplicate_message("query, document", (query, doc), numbers[first])
                if key[1] == "doc_id"
                else f"query {query!r} has documents {rows[first][1]!r} and {doc!r} both at rank {rank} (first at "
                f"line {numbers[first]}): an MS MARCO run's order is its ranks, so a rank names one document"
            )
            raise FormatError(path, numbers[second], problem)
    return sort_run(frame[["query_id", "doc_id", "score"]])


def _write_msmarco_run(run: pd.DataFrame, path: Path) -> None:
    """Tab-separated ``query doc rank`` lines in tie-rule order (the scores are not kept: the format has none)."""
    ordered = sort_run(run)
    with atomic_write(path) as handle:
        for query, doc, rank in zip(ordered["query_id"], ordered["doc_id"], ordered["rank"]):
            handle.write(f"{query}\t{doc}\t{rank}\n")


def _read_trec(kind: str) -> Reader:
    def read(path: Path, columns: Columns | None, coded: bool) -> pd.DataFrame | CodedTable:
        from rankscope.corpora.trec import read_trec_coded, read_trec_qrels, read_trec_run

        if coded:
            return read_trec_coded(path, kind)
        return read_trec_run(path) if kind == "run" else read_trec_qrels(path)

    return read


def _write_trec(kind: str) -> Writer:
    def write(table: pd.DataFrame, path: Path) -> None:
        from rankscope.corpora.trec import write_trec_qrels, write_trec_run

        (write_trec_run if kind == "run" else write_trec_qrels)(table, path)

    return write


def _read_beir_qrels(path: Path, columns: Columns | None, coded: bool) -> pd.DataFrame:
    from rankscope.corpora.beir import read_beir_qrels

    return read_beir_qrels(path)


def _write_beir_qrels(qrels: pd.DataFrame, path: Path) -> None:
    from rankscope.corpora.beir import write_beir_qrels

    write_beir_qrels(qrels, path)


def _read_parquet(kind: str) -> Reader:
    def read(path: Path, columns: Columns | None, coded: bool) -> pd.DataFrame:
        table = read_parquet(path, kind, columns)
        return sort_run(table) if kind == "run" else table

    return read


def _read_table(kind: str) -> Reader:
    def read(path: Path, columns: Columns | None, coded: bool) -> pd.DataFrame:
        table = read_table(path, kind, columns)
        return sort_run(table) if kind == "run" else table

    return read


# --- sniffing -------------------------------------------------------------------------
def _suffix(*suffixes: str) -> Callable[[Clue], bool]:
    return lambda clue: clue.suffix in suffixes


def _tsv_table(clue: Clue) -> bool:
    """A ``.tsv`` is a table unless its first line is shaped like a fixed-field format of its kind."""
    if clue.suffix != ".tsv":
        return False
    fixed = (f.shape for f in FORMATS if f.kind == clue.kind and f.shape is not None)
    return clue.mapped or not any(shape(clue.first) for shape in fixed)


def _shaped(shape: Callable[[tuple[str, ...]], bool]) -> Callable[[Clue], bool]:
    return lambda clue: shape(clue.first)


def _msmarco_line(words: tuple[str, ...]) -> bool:
    return len(words) == 3 and words[2].isdigit()


def _beir_header(words: tuple[str, ...]) -> bool:
    from rankscope.corpora.beir import QRELS_HEADER

    return words == QRELS_HEADER


def _anything(clue: Clue) -> bool:
    return True


def _table_rows(kind: str) -> list[Format]:
    """Parquet, JSONL, CSV and TSV: tables with named columns (:func:`columns_help`; ``--fields`` maps others)."""
    return [
        Format("parquet", kind, _suffix(".parquet"), _read_parquet(kind), _write_parquet, f"a Parquet {kind}",
               "a table, as ranx's save writes it", f"{kind}.parquet"),
        Format("jsonl", kind, _suffix(".jsonl"), _read_table(kind), _write_jsonl, f"a JSONL {kind}",
               "one object per line", f"{kind}.jsonl"),
        Format("csv", kind, _suffix(".csv"), _read_table(kind), _delimited_writer(DELIMITERS[".csv"]), f"a CSV {kind}",
               "a header row, then rows", f"{kind}.csv"),
        Format("tsv", kind, _tsv_table, _read_table(kind), _delimited_writer(DELIMITERS[".tsv"]), f"a TSV {kind}",
               "a header row, then rows, tab-separated", f"{kind}.tsv"),
    ]  # fmt: skip


FORMATS: tuple[Format, ...] = (
    *_table_rows("run"),
    Format("msmarco", "run", _shaped(_msmarco_line), lambda path, columns, coded: _read_msmarco_run(path),
           _write_msmarco_run, "an MS MARCO run", "query doc rank, tab-separated (score: minus the rank)",
           "run.msmarco.tsv", shape=_msmarco_line),
    Format("trec", "run", _anything, _read_trec("run"), _write_trec("run"), "a TREC run",
           "query Q0 doc rank score tag [more fields]", "run.trec", shape=lambda words: len(words) >= 6),
    *_table_rows("qrels"),
    Format("beir", "qrels", _shaped(_beir_header), _read_beir_qrels, _write_beir_qrels, "BEIR qrels",
           "query-id corpus-id score header, tab-separated", "qrels.beir.tsv", shape=_beir_header),
    Format("trec", "qrels", _anything, _read_trec("qrels"), _write_trec("qrels"), "TREC qrels",
           "query iteration doc relevance", "qrels.txt", shape=lambda words: len(words) == 4),
)  # fmt: skip
"""Every format, in the order sniffing tries them within a kind (the first that recognises a file reads it)."""


def formats(kind: str) -> list[Format]:
    """The rows of ``kind`` (``run`` or ``qrels``) in sniffing order."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return [f for f in FORMATS if f.kind == kind]


def sniff(path: PathLike, kind: str, columns: Columns | None = None) -> Format:
    """The format that reads ``path`` as a ``kind`` file."""
    clue = Clue(Path(path), kind, bool(columns))
    return next(f for f in formats(kind) if f.sniff(clue))


def looks_like(path: PathLike, kind: str) -> Format | None:
    """The fixed-field format of ``kind`` whose shape the file's first line has (a TREC qrels line
    has 4 fields, a TREC run line 6 or more), else None: what tells a run given as qrels."""
    clue = Clue(Path(path), kind, False)
    return next((f for f in formats(kind) if f.shape is not None and f.shape(clue.first)), None)


def read_file(
    path: PathLike, kind: str, columns: Columns | None = None, coded: bool = False
) -> pd.DataFrame | CodedTable:
    """Read a run or qrels file in whatever format :func:`sniff` finds; ``columns`` maps a table's columns
    (refused for fixed-field formats), ``coded`` asks TREC files for a :class:`~rankscope.corpora.trec.CodedTable`."""
    path = require_file(path, f"{kind} file")
    found = sniff(path, kind, columns)
    if columns and found.shape is not None:
        raise FormatError(
            path, None, f"is {found.label} file, whose fields are fixed; --fields maps columns of tables only"
        )
    from rankscope.corpora.trec import CodedTable  # pandas: loaded once there is a file to read

    table = found.read(path, columns, coded)
    return table if isinstance(table, CodedTable) else string_ids(table)


def write_file(table: pd.DataFrame, path: PathLike, kind: str, name: str) -> None:
    """Write a run or qrels table in the format called ``name`` (a row of :data:`FORMATS`), atomically."""
    rows = {f.name: f for f in formats(kind)}
    if name not in rows:
        raise ValueError(f"unknown {kind} format {name!r}; known: {', '.join(rows)}")
    checked = validate(table, kind, f"{kind} to write")
    rows[name].write(checked[COLUMNS[kind]], Path(path))


def columns_help(kind: str) -> str:
    """The columns a table of ``kind`` names, with the other names read for them (``tabular.ALIASES``)."""
    aliases = ALIASES[kind]
    return ", ".join("|".join((column, *aliases.get(column, ()))) for column in COLUMNS[kind])


def formats_help(kind: str) -> str:
    """The formats of ``kind`` in one line, for ``--help``."""
    rows = "; ".join(f"{f.name}: {f.fields}" for f in formats(kind))
    return f"{rows} (text files may be gzipped: .gz). Table columns: {columns_help(kind)}, others mapped by --fields"
