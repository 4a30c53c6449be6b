"""A corpus file read one document at a time, for indexes built in bounded memory.

:func:`iter_corpus` yields ``(doc_id, title, text)`` without holding the file: JSON Lines
(``doc_id`` or BEIR's ``_id``, ``text``, ``title`` optional) or CSV/TSV with a header row
(``doc_id``, ``text``, ``title`` optional), or a headerless ``id<TAB>text`` ``.tsv`` (MS MARCO's
``collection.tsv``; the rule of :func:`rankscope.corpora.tabular.headerless_names`, quotes plain text),
each optionally ``.gz``. The lines are read by
:func:`rankscope.core.fileio.iter_lines` (BOM, CRLF, UTF-8 errors with their line, as every reader)
and a JSON line by the BEIR reader's rules (:func:`rankscope.corpora.jsonl.corpus_document`), so one
file reads the same whichever command opens it. Repeated ids are left to the caller (the streaming
index finds them once every id is known; :func:`repeated_id` then names both lines).
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from pathlib import Path

from rankscope.core.errors import FormatError, duplicate_message
from rankscope.core.fileio import PathLike, iter_lines, require_file
from rankscope.corpora.checks import empty_table, id_problem
from rankscope.corpora.jsonl import EMPTY, corpus_document, read_jsonl

DELIMITERS = {".csv": ",", ".tsv": "\t"}
"""The delimiter of each delimited table suffix (one source for this streaming reader and corpora.tabular)."""


def iter_corpus(path: PathLike) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of each document in ``path``, in file order (title "" if absent)."""
    for _, _, doc_id, title, text in _documents(path):
        yield doc_id, title, text


def repeated_id(path: PathLike, doc_id: str) -> FormatError:
    """The error for ``doc_id`` found twice in ``path``, naming both lines (the file is read again: errors only)."""
    first = None
    for line, key, found, _, _ in _documents(path):
        if found == doc_id:
            if first is not None:
                return FormatError(path, line, duplicate_message(key, doc_id, first))
            first = line
    return FormatError(path, None, duplicate_message("doc_id", doc_id))


def _documents(path: PathLike) -> Iterator[tuple[int, str, str, str, str]]:
    """``(line, id field, doc_id, title, text)`` of each document; a file without any is an error."""
    path = require_file(path, "corpus file")
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix != ".jsonl" and suffix not in DELIMITERS:
        raise FormatError(
            path, None, f"unknown corpus format {suffix!r}; expected .jsonl, .csv or .tsv (optionally .gz)"
        )
    empty = True
    if suffix == ".jsonl":
        for number, obj in read_jsonl(path):
            empty = False
            key = "doc_id" if "doc_id" in obj else "_id"
            yield number, key, *corpus_document(path, number, obj, key)
        if empty:
            raise FormatError(path, None, EMPTY)
    else:
        for document in _delimited(path, DELIMITERS[suffix]):
            empty = False
            yield document
        if empty:
            raise empty_table(path, "corpus")


def _delimited(path: Path, delimiter: str) -> Iterator[tuple[int, str, str, str, str]]:
    # csv.reader and the header's positions, not DictReader (a dict per row): the benchmark's 100,000-row
    # corpus.tsv is read in 0.38 s of CPU instead of 0.46 s (best of three), by the one process that
    # feeds the counting workers
    from rankscope.corpora.tabular import headerless_names, quoting  # tabular imports this module: at call time

    lines = (line for _, line in iter_lines(path))
    first = next(lines, None)
    suffix = ".tsv" if delimiter == "\t" else ".csv"
    names = None if first is None else headerless_names(first, path, suffix, "corpus", None)
    rows = (line + "\n" for line in itertools.chain([] if first is None else [first], lines))
    reader = csv.reader(rows, delimiter=delimiter, strict=True, quoting=quoting(names))
    try:
        header = names or next(reader, None)
        if header is None or "doc_id" not in header or "text" not in header:
            raise FormatError(
                path,
                1,
                f"the header must name the columns doc_id and text (title optional), found {header}; a .tsv "
                "without a header has two columns, id<TAB>text (MS MARCO's collection.tsv)",
            )
        column = {name: i for i, name in enumerate(header)}  # a repeated name: its last column, as DictReader
        doc_id, text, title = column["doc_id"], column["text"], column.get("title")
        for row in reader:
            if not row:  # a blank line (DictReader skipped them too)
                continue
            if len(row) != len(header):
                raise FormatError(
                    path, reader.line_num, f"expected {len(header)} fields as in the header {header}, found {len(row)}"
                )
            problem = id_problem(row[doc_id], "doc_id")
            if problem:
                raise FormatError(path, reader.line_num, problem)
            yield reader.line_num, "doc_id", row[doc_id], "" if title is None else row[title], row[text]
    except csv.Error as exc:
        kind = "TSV" if delimiter == "\t" else "CSV"
        raise FormatError(path, reader.line_num, f"malformed {kind} ({exc})") from None
