"""TREC qrels and run files: the formats trec_eval reads.

- qrels: ``query_id iteration doc_id relevance`` (the iteration field is ignored);
- run: ``query_id Q0 doc_id rank score tag`` (the Q0 and tag fields are ignored).

Fields are separated by spaces or tabs; blank lines are skipped; plain or ``.gz``.
Reading is strict: a line with the wrong number of fields, a non-integer
relevance or rank, a non-finite score or a duplicate (query, document) pair
raises :class:`~rankscope.core.errors.FormatError` naming the file and line. Files are
scanned in one compiled pass (``corpora/_trec_scan.c``: fields split, ids coded, numbers
checked and parsed); a file it doubts is checked line by line, which says where and why.

Like trec_eval, the rank column of a run file is checked but not used: ranks are
recomputed from the scores with the tie rule (score descending, then doc_id
descending), and the run comes back in that order, grouped by query_id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import count, islice
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.errors import FormatError, SchemaError, duplicate_message
from rankscope.core.fileio import PathLike, atomic_write, decoded_lines, read_bytes, read_lines, require_file
from rankscope.corpora.checks import id_problem, integer_problem, number_problem, shown
from rankscope.corpora.schema import as_strings, sort_run, validate

_FIELD_SPLIT = re.compile(r"[ \t]+")
_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class _Layout:
    """One whitespace-separated line format: field names and kinds (id, int, float, any)."""

    what: str
    fields: tuple[tuple[str, str], ...]
    trailing: bool = False  # words after the last field are allowed and ignored

    @property
    def expected(self) -> str:
        """The layout as error messages show it, e.g. ``4 fields 'query_id iteration doc_id relevance'``."""
        return f"{len(self.fields)} fields '{' '.join(name for name, _ in self.fields)}'"


QRELS_LAYOUT = _Layout("qrels", (("query_id", "id"), ("iteration", "any"), ("doc_id", "id"), ("relevance", "label")))
RUN_LAYOUT = _Layout(
    "run",
    (("query_id", "id"), ("Q0", "any"), ("doc_id", "id"), ("rank", "number"), ("score", "float"), ("tag", "any")),
    trailing=True,  # trec_eval ignores anything after the tag (its test file results.trunc has such lines)
)
_KEPT = ("id", "label", "float")
"""Kinds of field a table keeps: ids, relevance labels and scores. ``any`` fields (Q0, the tag, the
iteration) are not checked; a run's rank is checked to be a number but not kept (trec_eval ranks by score)."""


@dataclass(frozen=True)
class CodedTable:
    """A run or qrels read by the compiled scan, ids kept as integer codes: ``query_names[query]`` and
    ``doc_names[doc]`` are each row's ids (distinct ``str`` objects, in order of first appearance), ``value``
    its score (float64) or relevance (int64), rows in file order. Checked as strictly as a table: every
    line, and no (query, document) pair twice. Evaluation scores it without a ``str`` object per row."""

    kind: str  # "run" or "qrels"
    query: np.ndarray
    query_names: np.ndarray
    doc: np.ndarray
    doc_names: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.query)

    def frame(self) -> pd.DataFrame:
        """The schema's table (``query_id, doc_id`` and ``score`` or ``relevance``), file order; equal ids
        are one ``str`` object (evaluation codes rows by object, which is fast)."""
        value = "score" if self.kind == "run" else "relevance"
        return pd.DataFrame(
            {
                "query_id": as_strings(self.query_names[self.query]),
                "doc_id": as_strings(self.doc_names[self.doc]),
                value: self.value.copy(),
            }
        )


def read_trec_qrels(path: PathLike) -> pd.DataFrame:
    """Read a TREC qrels file into ``query_id, doc_id, relevance`` (file order kept)."""
    return read_trec_coded(path, "qrels").frame()


def read_trec_run(path: PathLike) -> pd.DataFrame:
    """Read a TREC run into ``query_id, doc_id, score, rank``, in tie-rule order per query."""
    return sort_run(read_trec_coded(path, "run").frame())


def read_trec_coded(path: PathLike, kind: str) -> CodedTable:
    """A TREC run or qrels file (``kind``) as a :class:`CodedTable`, file order: the compiled scan, or for a
    file it doubts the line-by-line check, which raises at the first bad line with its number."""
    layout = {"run": RUN_LAYOUT, "qrels": QRELS_LAYOUT}[kind]
    path = require_file(path, f"{layout.what} file")
    table = _scanned(path, layout)
    if table is None:
        _check_lines(path, layout)
        table = coded_table(_table_from_lines(path, layout), kind)
    return table


def write_trec_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """Write qrels as ``query_id 0 doc_id relevance`` lines, atomically (``.gz`` compresses)."""
    table = validate(qrels, "qrels", "qrels to write")
    _refuse_unwritable(table, "qrels to write")
    rows = zip(table["query_id"].tolist(), table["doc_id"].tolist(), table["relevance"].tolist())
    _write_lines(path, (f"{q} 0 {d} {r}\n" for q, d, r in rows))


def write_trec_run(run: pd.DataFrame, path: PathLike, tag: str = "rankscope") -> None:
    """Write a run as ``query_id Q0 doc_id rank score tag`` lines trec_eval reads, atomically.

    Rows are written grouped by query_id in tie-rule order with ranks recomputed to
    match, so the ranks in the file are the ones trec_eval will score. Scores are
    written with full (round-trip) precision, as ``repr`` writes them; the lines are made
    in C (``_trec_write.c``), ``f"{q} Q0 {d} {k} {s!r} {tag}\\n"`` of every row.
    """
    from rankscope.corpora import _trec_write

    if not tag or _WHITESPACE.search(tag):
        raise SchemaError(f"run tag must be a non-empty word without whitespace, got {tag!r}")
    table = validate(run, "run", "run to write")
    _refuse_unwritable(table, "run to write")
    ordered = sort_run(table)
    columns = [ordered[c].tolist() for c in ("query_id", "doc_id", "rank", "score")]
    scores = ordered["score"].to_numpy(dtype=np.float64)
    tail = f" {tag}\n"
    pieces = (
        _trec_write.run_lines(
            *(column[start : start + _LINES] for column in columns), tail, _shortest(scores[start : start + _LINES])
        )
        for start in range(0, len(ordered), _LINES)
    )
    _write_lines(path, pieces, chunk=1)  # each piece holds _LINES lines already


def _shortest(scores: np.ndarray) -> bytes:
    """The scores' shortest round-trip texts as orjson writes them (a JSON array): the writer copies those
    that are ``repr``'s text and formats the others itself (``_trec_write.c``), 18x faster than ``repr``."""
    import orjson

    return orjson.dumps(np.ascontiguousarray(scores), option=orjson.OPT_SERIALIZE_NUMPY)


# --- reading ---------------------------------------------------------------------------
def _scanned(path: Path, layout: _Layout) -> CodedTable | None:
    """The table from :mod:`corpora._trec_scan`, or None when the scan doubts a line or a pair repeats
    (the line-by-line check then says where)."""
    try:
        raw = read_bytes(path)
    except FormatError:
        return None  # not valid gzip: the line-by-line reader words it
    return scanned_bytes(raw, layout)


def scanned_bytes(raw: bytes, layout: _Layout) -> CodedTable | None:
    """:func:`_scanned` of a file's bytes (or whole lines of them). Repeats are found in one pass over the
    codes when each query's rows are contiguous (as runs are written), else by sorting the pairs."""
    from rankscope.corpora import _trec_scan

    if not raw.isascii():
        try:
            raw.decode("utf-8")  # ids are decoded one distinct id at a time; this covers every byte
        except UnicodeDecodeError:
            return None
    kinds = "".join(_SCAN_KINDS[kind] for _, kind in layout.fields)
    scanned = _trec_scan.scan(raw, kinds, layout.trailing)
    if scanned is None:
        return None
    (query, query_names), (doc, doc_names), value = scanned
    query, doc = np.frombuffer(query, dtype=np.int64), np.frombuffer(doc, dtype=np.int64)
    if _repeats(query, doc, len(doc_names)):
        return None
    return CodedTable(
        kind=layout.what,
        query=query,
        query_names=_decoded(query_names),
        doc=doc,
        doc_names=_decoded(doc_names),
        value=np.frombuffer(value, dtype=np.float64 if layout is RUN_LAYOUT else np.int64),
    )


def _repeats(query: np.ndarray, doc: np.ndarray, n_docs: int) -> bool:
    """Whether a (query, document) pair of int64 codes (numbered in order of first appearance) occurs twice:
    one compiled pass when each query's rows are contiguous, else by sorting the pairs."""
    from rankscope.corpora import _trec_scan

    repeats = _trec_scan.repeats(query, doc, n_docs)
    if repeats is None:  # queries interleaved
        pairs = query * n_docs + doc
        pairs.sort()
        repeats = bool((pairs[1:] == pairs[:-1]).any())
    return bool(repeats)


def _decoded(names: list[bytes]) -> np.ndarray:
    return np.array([name.decode("utf-8") for name in names], dtype=object)


def coded_table(frame: pd.DataFrame, kind: str) -> CodedTable:
    """A validated run or qrels table (``kind``) as a :class:`CodedTable`, ids coded in order of first appearance
    (from the columns' arrays: a string column's own factorize takes twice as long, 23 -> 10 ms on 191,156 rows)."""
    query, query_names = pd.factorize(frame["query_id"].to_numpy())
    doc, doc_names = pd.factorize(frame["doc_id"].to_numpy())
    value = frame["score" if kind == "run" else "relevance"].to_numpy()
    return CodedTable(
        kind,
        query.astype(np.int64),
        np.asarray(query_names, dtype=object),
        doc.astype(np.int64),
        np.asarray(doc_names, dtype=object),
        value,
    )


_SCAN_KINDS = {"id": "i", "any": "a", "number": "n", "float": "f", "label": "l"}
"""Each kind of field as :mod:`corpora._trec_scan` names it."""


def table_of_lines(path: Path, layout: _Layout, raw: bytes, first_line: int | Sequence[int] | np.ndarray) -> CodedTable:
    """The table of ``raw``, whole lines of ``path`` from line ``first_line`` that the scan doubted, checked
    line by line (a bad line raises with its number in the file). ``first_line`` may be each line's number
    instead: lines gathered from several places of the file (a run spread over buckets by query)."""
    start = first_line if isinstance(first_line, int) else (int(first_line[0]) if len(first_line) else 1)
    lines = decoded_lines(path, raw, start - 1)
    _check_lines(path, layout, lines, first_line)
    return coded_table(_table_from_lines(path, layout, lines), layout.what)


def _check_lines(
    path: Path, layout: _Layout, lines: list[str] | None = None, first_line: int | Sequence[int] | np.ndarray = 1
) -> None:
    """Raise a FormatError for the first bad line (slow path, only after the fast path failed); ``lines``
    (from ``first_line`` on, or numbered by it) are a piece of the file, else the whole file is read."""
    whole = lines is None
    if lines is None:
        lines = read_lines(path)  # reports invalid UTF-8 and bad gzip with file and line
    seen: dict[tuple[str, str], int] = {}
    n_fields = len(layout.fields)
    numbers = count(first_line) if isinstance(first_line, int) else map(int, first_line)
    for number, line in zip(numbers, lines):
        stripped = line.strip(" \t")
        if not stripped:
            continue
        fields = _FIELD_SPLIT.split(stripped)
        if len(fields) < n_fields or len(fields) > n_fields and not layout.trailing:
            found = f"found {len(fields)} field(s): {shown(line, 80)}"
            raise FormatError(path, number, f"expected {layout.expected}, {found}")
        for (name, kind), value in zip(layout.fields, fields):
            problem = _FIELD_CHECKS.get(kind, _accept)(value, name)
            if problem:
                raise FormatError(path, number, problem)
        key = (fields[0], fields[2])
        if key in seen:
            raise FormatError(
                path, number, duplicate_message(f"{layout.what} entry for query, document", key, seen[key])
            )
        seen[key] = number
    if not seen and whole:
        raise FormatError(path, None, f"empty {layout.what} file: expected lines of {layout.expected}")


def _table_from_lines(path: Path, layout: _Layout, lines: list[str] | None = None) -> pd.DataFrame:
    """The table of a file (or of ``lines`` of it) :func:`_check_lines` accepted but that is not plain (several
    spaces or tabs between fields, words after the last field, which are dropped). Slow: one split per line."""
    n_fields = len(layout.fields)
    lines = read_lines(path) if lines is None else lines
    rows = [_FIELD_SPLIT.split(stripped)[:n_fields] for line in lines if (stripped := line.strip(" \t"))]
    frame = pd.DataFrame(rows, columns=[name for name, _ in layout.fields])
    types = {"id": object, "label": np.int64, "float": np.float64}
    return pd.DataFrame({name: frame[name].astype(types[kind]) for name, kind in layout.fields if kind in _KEPT})


def _accept(value: str, name: str) -> None:
    return None


_FIELD_CHECKS = {"id": id_problem, "number": number_problem, "label": integer_problem, "float": number_problem}


# --- writing ---------------------------------------------------------------------------
def _refuse_unwritable(table: pd.DataFrame, source: str) -> None:
    """What a TREC file cannot hold, refused naming the first case: an id that is empty or not one word, a
    (query, document) pair named twice. Each id column is coded once, in order of first appearance; the
    distinct ids are scanned for whitespace and the codes for repeats (:func:`_repeats`), instead of
    hashing every row's pair of strings (Cranfield's 191,156-row run: 39 -> 11 ms)."""
    codes = []
    for col in ("query_id", "doc_id"):
        coded, values = pd.factorize(table[col].to_numpy())
        if "" in values or _WHITESPACE.search("\x00".join(values)):
            value = next(v for v in values if v == "" or _WHITESPACE.search(v))
            raise SchemaError(f"{source}: {col} {value!r} is empty or contains whitespace; TREC files cannot hold it")
        codes.append((coded.astype(np.int64, copy=False), len(values)))
    (query, _), (doc, n_docs) = codes
    if _repeats(query, doc, n_docs):
        dup = table.duplicated(["query_id", "doc_id"])  # which pair: the first row repeating an earlier one
        first = table[dup].iloc[0]
        raise SchemaError(f"{source}: {duplicate_message('query, document', (first['query_id'], first['doc_id']))}")


_LINES = 500_000
"""Rows made into text at a time (as :func:`_write_lines` joins them), so a run of many millions of rows
is never one string in memory."""


def _write_lines(path: PathLike, lines: Iterable[str], chunk: int = _LINES) -> None:
    """Write lines atomically, joined in chunks (much faster than a csv writer for large runs)."""
    remaining = iter(lines)
    with atomic_write(path) as handle:
        while batch := list(islice(remaining, chunk)):
            handle.write("".join(batch))
