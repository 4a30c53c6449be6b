"""Where a collection folder keeps each thing: one place for every file name the collection steps share.

The folder is a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, and after ``collection export``
``qrels/test.tsv``) plus the state of the steps that made it: what was ingested from which file
(``ingest.json``), the files that gave no document (``unreadable.tsv``), the pool, the sample and
the labels (``judgments.sqlite``, the judges' cache format, humans' labels under ``human:NAME``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import atomic_write
from rankscope.core.jsonstrict import loads
from rankscope.corpora.label_sources import MADE_OF

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
INGEST = "ingest.json"
UNREADABLE = "unreadable.tsv"
GENERATED_DROPPED = "generated_dropped.jsonl"
POOL = "pool.tsv"
POOL_STATE = "pool.json"
SAMPLE = "sample.tsv"
SAMPLE_STATE = "sample.json"
COLLECTION = MADE_OF
REPORT = "report.md"
FORMAT_VERSION = 1


class CollectionError(RankscopeError, ValueError):
    """A collection folder or a step's request that cannot be used (said in one line)."""


def read_state(path: Path) -> dict[str, Any]:
    """A JSON state file of the collection, or a CollectionError naming it."""
    try:
        value = loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CollectionError(f"{path}: not valid JSON ({exc}); the collection's state is damaged") from None
    if not isinstance(value, dict) or value.get("version") != FORMAT_VERSION:
        raise CollectionError(f"{path}: not a rankscope collection state file of version {FORMAT_VERSION}")
    return value


def write_state(path: Path, value: dict[str, Any]) -> None:
    with atomic_write(path) as out:
        json.dump({"version": FORMAT_VERSION, **value}, out, ensure_ascii=False, indent=1, sort_keys=True)
        out.write("\n")


def require_collection(folder: Path) -> Path:
    """``folder`` if ``collection init`` made it, else one line saying what to run."""
    if not (folder / INGEST).is_file():
        raise CollectionError(
            f"{folder}: not a collection (no {INGEST}); run: rankscope collection init {folder} --docs PATH"
        )
    return folder


def collection_dataset(folder: Path) -> Any:
    """The collection's documents and questions as a Dataset without judgments (what pooling searches)."""
    import pandas as pd

    from rankscope.corpora.beir import read_beir_corpus, read_beir_queries
    from rankscope.corpora.dataset import Dataset

    require_collection(folder)
    if not (folder / QUERIES).is_file() or not (folder / QUERIES).read_text(encoding="utf-8").strip():
        raise CollectionError(
            f"{folder}: no questions yet; add them: rankscope collection init {folder} --docs ... --queries FILE"
        )
    qrels = pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}).astype({"relevance": "int64"})
    return Dataset(folder.name, read_beir_corpus(folder / CORPUS), read_beir_queries(folder / QUERIES), qrels)


def write_tsv(frame: Any, path: Path) -> None:
    """A table the collection keeps (pool, sample), tab-separated with a header, atomically."""
    with atomic_write(path) as out:
        frame.to_csv(out, sep="\t", index=False, lineterminator="\n")


def read_tsv(path: Path, numbers: dict[str, str]) -> Any:
    """A table :func:`write_tsv` wrote: every column text (ids stay as written) but ``numbers``."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        return frame.astype(numbers)
    except (ValueError, KeyError) as exc:
        raise CollectionError(f"{path}: damaged ({exc}); run the step that made it again") from None
