"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

- corpus lines ``{"_id", "title", "text"}`` (title optional, other fields ignored);
- query lines ``{"_id", "text"}``;
- qrels: tab-separated with the header ``query-id corpus-id score``; integer scores.

As BEIR's own loader does, a split holds the queries named in its qrels file; the
other queries of ``queries.jsonl`` (another split's, or in a collection folder questions
nobody has judged yet) are not loaded, and the Dataset's warnings say how many were left out. Any of the files may be gzipped
(``corpus.jsonl.gz``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, atomic_write, read_lines
from rankscope.corpora.checks import id_problem, integer, refuse_repeats
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.jsonl import EMPTY, corpus_document, read_jsonl, string_field, write_jsonl
from rankscope.corpora.paths import first_file
from rankscope.corpora.query_fields import QueriesFile
from rankscope.corpora.questions import read_questions_table

QRELS_HEADER = ("query-id", "corpus-id", "score")
_HEADER_LINE = "\t".join(QRELS_HEADER)


def is_beir_folder(folder: PathLike) -> bool:
    """True when ``folder`` holds a BEIR corpus file and a ``qrels/`` folder."""
    folder = Path(folder)
    return _optional(folder, "corpus.jsonl") is not None and (folder / "qrels").is_dir()


def beir_splits(folder: PathLike) -> list[str]:
    """Names of the qrels splits in a BEIR folder (``qrels/test.tsv`` -> ``test``)."""
    qrels_dir = Path(folder) / "qrels"
    if not qrels_dir.is_dir():
        return []
    return sorted(p.name.removesuffix(".gz").removesuffix(".tsv") for p in qrels_dir.glob("*.tsv*"))


def read_beir(folder: PathLike, split: str = "test", name: str | None = None) -> Dataset:
    """Load one split of a BEIR folder."""
    folder = Path(folder)
    corpus_path = _required(folder, "corpus.jsonl")
    queries_path = _required(folder, "queries.jsonl")
    qrels_path = _optional(folder / "qrels", f"{split}.tsv")
    if qrels_path is None:
        raise FileNotFoundError(
            f"{folder}: no qrels/{split}.tsv; splits found: {beir_splits(folder) or 'none'} "
            "(choose one with --split NAME; split= in Python)"
        )
    qrels = read_beir_qrels(qrels_path)
    all_queries = read_beir_queries(queries_path)
    in_split = all_queries["query_id"].isin(qrels["query_id"])
    warnings = []
    if not in_split.all():
        warnings.append(
            f"{int((~in_split).sum())} of {len(all_queries)} queries in {queries_path.name} are not in "
            f"qrels/{qrels_path.name} (another split's, or not judged yet; not loaded)"
        )
    return Dataset(
        name=name or folder.name,
        corpus=read_beir_corpus(corpus_path),
        queries=all_queries[in_split].reset_index(drop=True),
        qrels=qrels,
        split=split,
        warnings=tuple(warnings),
        queries_file=QueriesFile(Path(queries_path), "beir"),
    )


def read_beir_corpus(path: PathLike) -> pd.DataFrame:
    """``corpus.jsonl``: ``_id`` and ``text`` required, ``title`` optional, ids unique (errors name the line)."""
    rows = [corpus_document(path, n, obj) for n, obj in _objects(path, "_id")]
    return pd.DataFrame(rows, columns=["doc_id", "title", "text"])


def read_beir_queries(path: PathLike) -> pd.DataFrame:
    """``queries.jsonl``: every query of every split (``read_beir`` keeps those its qrels name), read as
    every questions file is (:mod:`rankscope.corpora.questions`), the id in ``_id``."""
    return read_questions_table(path, {"query_id": "_id"})


def read_beir_qrels(path: PathLike) -> pd.DataFrame:
    """A BEIR qrels TSV; the header is required, scores must be integers, pairs unique."""
    lines = read_lines(path)
    if not lines:
        raise FormatError(path, None, f"empty qrels file: expected the header {_HEADER_LINE!r}")
    if tuple(lines[0].split("\t")) != QRELS_HEADER:
        raise FormatError(path, 1, f"expected the header {_HEADER_LINE!r}, found {lines[0][:60]!r}")
    rows: list[tuple[str, str, int]] = []
    numbers: list[int] = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise FormatError(path, number, f"expected 3 tab-separated fields {_HEADER_LINE!r}, found {len(parts)}")
        for name, value in zip(("query-id", "corpus-id"), parts):
            problem = id_problem(value, name)
            if problem:
                raise FormatError(path, number, problem)
        rows.append((parts[0], parts[1], integer(parts[2], path, number, "score")))
        numbers.append(number)
    refuse_repeats(path, [r[:2] for r in rows], numbers, "judgment of query, document", [r[2] for r in rows])
    if not rows:
        raise FormatError(path, None, "no judgments after the header")
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def write_beir(dataset: Dataset, folder: PathLike) -> None:
    """Write a Dataset as a BEIR folder (each file atomically); the qrels go to ``qrels/<split>.tsv``."""
    folder = Path(folder)
    corpus = dataset.corpus
    write_jsonl(
        ({"_id": d, "title": t, "text": x} for d, t, x in zip(corpus["doc_id"], corpus["title"], corpus["text"])),
        folder / "corpus.jsonl",
    )
    queries = dataset.queries
    write_jsonl(({"_id": q, "text": t} for q, t in zip(queries["query_id"], queries["text"])), folder / "queries.jsonl")
    write_beir_qrels(dataset.qrels, folder / "qrels" / f"{dataset.split}.tsv")


def write_beir_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """BEIR's ``qrels/<split>.tsv``: the header, then ``query-id, corpus-id, score`` rows (atomically)."""
    with atomic_write(path) as handle:
        handle.write(_HEADER_LINE + "\n")
        for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
            handle.write(f"{q}\t{d}\t{r}\n")


def _objects(path: PathLike, key: str) -> list[tuple[int, dict[str, Any]]]:
    """JSON objects with a unique ``key``; a repeated id is an error naming both lines."""
    objects = list(read_jsonl(path))
    if not objects:
        raise FormatError(path, None, EMPTY)
    ids = [string_field(path, number, obj, key) for number, obj in objects]
    for (number, _), value in zip(objects, ids):
        problem = id_problem(value, key)
        if problem:
            raise FormatError(path, number, problem)
    refuse_repeats(path, ids, [number for number, _ in objects], key)
    return objects


def _optional(folder: Path, name: str) -> Path | None:
    return first_file(folder, [name])


def _required(folder: Path, name: str) -> Path:
    found = _optional(folder, name)
    if found is None:
        layout = "a BEIR folder holds corpus.jsonl, queries.jsonl, qrels/<split>.tsv"
        raise FileNotFoundError(f"{folder}: no {name} ({layout})")
    return found
