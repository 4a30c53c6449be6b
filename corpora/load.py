"""``load_dataset``: a known collection by name, or any folder by path, into a Dataset.

A name resolves, in order, to
1. the folder ``$RANKSCOPE_DATA/<name>``,
2. the user cache ``$XDG_CACHE_HOME/rankscope/<name>`` (default ``~/.cache/rankscope/<name>``),
3. a download from the collection's official location into that cache (checksum
   checked, progress bar shown on a terminal); ``RANKSCOPE_OFFLINE=1`` forbids it.
If none works, :class:`DatasetNotFoundError` says which folders were tried and
which files to put there. ``irds:NAME`` is a collection of ir_datasets (:mod:`rankscope.corpora.irds`),
``hf:OWNER/NAME`` a BEIR-layout dataset of the Hugging Face Hub (:mod:`rankscope.corpora.hf`).

A folder's format is detected from its files: a SMART/Glasgow collection by its
file names (``cran.all.1400``, ``CISI.ALL``, ...), a BEIR folder by
``corpus.jsonl``, and a TREC-style folder by ``corpus.{jsonl,tsv,csv}`` +
``queries.{jsonl,tsv,csv}`` + a TREC qrels file ``qrels`` / ``qrels.txt``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rankscope.core.errors import DatasetNotFoundError, FormatError, SchemaError
from rankscope.core.fileio import PathLike
from rankscope.core.suggest import did_you_mean
from rankscope.corpora.beir import is_beir_folder, read_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.integrity import check_counts, check_files, record_checksums, recorded_checksums
from rankscope.corpora.label_sources import folder_sources
from rankscope.corpora.paths import cache_root, data_root, first_file
from rankscope.corpora.query_fields import QueriesFile
from rankscope.corpora.questions import read_questions_table
from rankscope.corpora.registry import COLLECTIONS, Collection, get_collection
from rankscope.corpora.remote_sources import OFFLINE, downloads_off
from rankscope.corpora.smart import SPECS, detect_smart, read_smart
from rankscope.corpora.tabular import Columns, read_table
from rankscope.corpora.trec import read_trec_qrels

_TABLE_SUFFIXES = (".jsonl", ".tsv", ".csv")
IRDS = "irds:"  # irds:NAME, a collection of ir_datasets (corpora/irds.py)
HF = "hf:"  # hf:OWNER/NAME, a BEIR-layout dataset of the Hugging Face Hub (corpora/hf.py)
_TREC_QRELS = ("qrels", "qrels.txt")


@dataclass(frozen=True)
class Location:
    """Where a known collection resolves locally: a folder and which rule found it, or nothing."""

    name: str
    path: Path | None
    source: str  # "RANKSCOPE_DATA", "cache" or "" when not found locally
    tried: tuple[Path, ...]


def locate(name: str) -> Location:
    """Find a known collection locally, without downloading."""
    collection = get_collection(name)
    spec = SPECS[collection.layout]
    candidates = []
    root = data_root()
    if root is not None:
        candidates.append(("RANKSCOPE_DATA", root / collection.name))
    candidates.append(("cache", cache_root() / collection.name))
    for source, folder in candidates:
        if folder.is_dir() and spec.find(folder) is not None:
            return Location(collection.name, folder, source, tuple(f for _, f in candidates))
    return Location(collection.name, None, "", tuple(f for _, f in candidates))


def load_dataset(
    name_or_path: str | PathLike, split: str | None = None, columns: Mapping[str, Columns] | None = None
) -> Dataset:
    """Load a known collection by name (see the module doc for the order) or a folder by path.

    ``columns`` maps the corpus' and queries' columns of a TREC-style folder's table files
    (``{"corpus": {"doc_id": "id", "text": "contents"}}``); other formats have fixed fields.

    >>> cranfield = load_dataset("cranfield")  # RANKSCOPE_DATA names the folder holding cranfield/
    >>> cranfield
    Dataset('cranfield', split='test': 1400 documents, 225 queries, 1837 judgments, 0 warnings)
    >>> list(cranfield.qrels.columns)
    ['query_id', 'doc_id', 'relevance']
    """
    text = str(name_or_path)
    if text.startswith(IRDS):  # ir_datasets' catalogue, imported only here
        from rankscope.corpora.irds import load_irds

        return load_irds(text.removeprefix(IRDS), split, columns)
    if text.startswith(HF):  # the Hugging Face Hub through `datasets`, imported only here
        from rankscope.corpora.hf import load_hf

        return load_hf(text.removeprefix(HF), split, columns)
    if text.lower() in COLLECTIONS and not _looks_like_path(text):
        _no_columns(columns, text, "a known collection")
        return _load_known(get_collection(text), split)
    folder = Path(text).expanduser()
    if folder.is_dir():
        return load_folder(folder, split, columns=columns)
    if folder.exists():
        raise DatasetNotFoundError(
            f"{folder} is a file; a dataset is a collection name or the folder holding its corpus, queries "
            "and qrels. To score runs against a qrels file alone: rankscope evaluate QRELS RUN ... (or "
            "rankscope compare --dataset QRELS --run NAME=RUN ...; rs.evaluate(qrels, {name: run}) in Python)"
        )
    raise DatasetNotFoundError(
        f"{text!r} is neither an existing folder nor a known collection{did_you_mean(text.lower(), COLLECTIONS)}; "
        f"known collections: {', '.join(COLLECTIONS)}"
    )


def load_folder(
    folder: PathLike, split: str | None = None, name: str | None = None, columns: Mapping[str, Columns] | None = None
) -> Dataset:
    """Load a folder in whichever supported format its files show (``columns``: see :func:`load_dataset`),
    recording where its qrels came from and, from a ``judgments.tsv`` beside them, who made them."""
    folder = Path(folder)
    dataset = _read_folder(folder, split, name, columns)
    pairs = zip(dataset.qrels["query_id"], dataset.qrels["doc_id"])
    return dataset.with_label_sources(folder_sources(folder, pairs, str(folder)))


def _read_folder(folder: Path, split: str | None, name: str | None, columns: Mapping[str, Columns] | None) -> Dataset:
    name = name or folder.name
    spec = detect_smart(folder)
    if spec is not None:
        _no_columns(columns, str(folder), f"a {spec.name} (SMART) collection")
        _only_test_split(split, folder, spec.name)
        return read_smart(folder, spec, name=name)
    if is_beir_folder(folder):
        _no_columns(columns, str(folder), "a BEIR folder")
        return read_beir(folder, split or "test", name=name)
    trec = _trec_style_files(folder)
    if trec is not None:
        _only_test_split(split, folder, "TREC-style")
        corpus, queries, qrels = trec
        columns = columns or {}
        return Dataset(
            name=name,
            corpus=read_table(corpus, "corpus", columns.get("corpus")),
            queries=read_questions_table(queries, columns.get("queries")),
            qrels=read_trec_qrels(qrels),
            queries_file=QueriesFile(queries, "table", dict(columns.get("queries") or {})),
        )
    missing = _missing_parts(folder)
    if missing:
        raise FormatError(folder, None, missing)
    raise FormatError(
        folder,
        None,
        "cannot tell the format: expected a SMART collection ("
        + "; ".join(f"{s.name}: {s.docs[0]}, {s.queries[0]}, {s.qrels[0]}" for s in SPECS.values())
        + "), a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) or corpus.jsonl|tsv|csv + "
        "queries.jsonl|tsv|csv + a TREC qrels file named qrels or qrels.txt",
    )


def has_judgments(folder: PathLike) -> bool:
    """True when a folder holds judgments in a form :func:`load_folder` reads: a SMART collection's,
    a BEIR ``qrels/`` folder or a TREC qrels file (``qrels``, ``qrels.txt``)."""
    folder = Path(folder)
    return (
        detect_smart(folder) is not None
        or (folder / "qrels").is_dir()
        or first_file(folder, list(_TREC_QRELS)) is not None
    )


def load_corpus_folder(folder: PathLike, columns: Mapping[str, Columns] | None = None) -> Dataset:
    """A folder's corpus alone (``corpus.jsonl|tsv|csv``; no queries, no judgments): what
    ``rag --answers`` needs on QA data, where the answers are the evidence (NQ, TriviaQA)."""
    folder = Path(folder)
    corpus = first_file(folder, [f"corpus{s}" for s in _TABLE_SUFFIXES])
    if corpus is None:
        raise FormatError(folder, None, "no corpus.jsonl (or corpus.tsv / corpus.csv)")
    return Dataset.corpus_only(read_table(corpus, "corpus", (columns or {}).get("corpus")), folder.name)


def _missing_parts(folder: Path) -> str | None:
    """What a folder holding some of a collection's parts (corpus, queries, judgments) lacks, in one
    sentence naming the missing file, or None when it holds none of them (then the formats are listed)."""
    corpus = first_file(folder, [f"corpus{s}" for s in _TABLE_SUFFIXES])
    queries = first_file(folder, [f"queries{s}" for s in _TABLE_SUFFIXES])
    trec_qrels = first_file(folder, list(_TREC_QRELS))
    judgments = "qrels/" if (folder / "qrels").is_dir() else (None if trec_qrels is None else trec_qrels.name)
    if corpus is None and queries is None and not judgments:
        return None
    found = [p.name for p in (corpus, queries) if p is not None] + ([judgments] if judgments else [])
    needs = {
        "corpus": None if corpus else "corpus.jsonl (or corpus.tsv / corpus.csv)",
        "queries": None if queries else "queries.jsonl (or queries.tsv / queries.csv)",
        "judgments": None
        if judgments
        else "judgments: qrels/<split>.tsv (BEIR) or a TREC qrels file named qrels or qrels.txt",
    }
    lacking = [text for text in needs.values() if text]
    if not lacking:
        return None
    return f"has {', '.join(found)} but no {'; no '.join(lacking)}"


def _no_columns(columns: Mapping[str, Columns] | None, where: str, what: str) -> None:
    """A column mapping for files whose fields are fixed is a mistake to report, never to ignore."""
    if any(columns.values() if columns else ()):
        raise SchemaError(
            f"{where} is {what}, whose fields are fixed: a corpus or queries column mapping (--fields) "
            "applies to JSONL/CSV/TSV files; write run.COLUMN=NAME or qrels.COLUMN=NAME for run or qrels files"
        )


def _load_known(collection: Collection, split: str | None) -> Dataset:
    found = locate(collection.name)
    if found.path is not None:
        return _load_checked(collection, found.path, split, cached=found.source == "cache")
    destination = cache_root() / collection.name
    if downloads_off():
        raise DatasetNotFoundError(_missing(collection, found, OFFLINE))
    try:
        from rankscope.corpora.download import fetch  # urllib and ssl load only to download

        fetch(collection, destination)
    except DatasetNotFoundError as exc:
        raise DatasetNotFoundError(_missing(collection, found, str(exc))) from None
    return _load_checked(collection, destination, split, cached=True)


def _load_checked(collection: Collection, folder: Path, split: str | None, cached: bool) -> Dataset:
    """Load a known collection's folder, checking its files and counts against the distribution.

    A cache folder's file checksums are recorded at its first successful load when
    none is published, and checked at every later one.
    """
    files = SPECS[collection.layout].find(folder) or {}
    recorded = recorded_checksums(folder) if cached else {}
    check_files(collection, files, recorded)
    dataset = load_folder(folder, split, name=collection.name)
    check_counts(collection, folder, dataset)
    if cached and not recorded:
        record_checksums(folder, files)
    return _quirks_as_notes(collection, dataset)


def _quirks_as_notes(collection: Collection, dataset: Dataset) -> Dataset:
    """The dataset with the collection's known quirks (its verified files' handled warnings) as notes."""
    known = [w for w in dataset.warnings if w in collection.quirks]
    if not known:
        return dataset
    kept = tuple(w for w in dataset.warnings if w not in collection.quirks)
    return dataclasses.replace(dataset, warnings=kept, notes=(*dataset.notes, *known))


def _missing(collection: Collection, found: Location, reason: str) -> str:
    spec = SPECS[collection.layout]
    files = ", ".join(names[0] for names in (spec.docs, spec.queries, spec.qrels))
    tried = " or ".join(str(p) for p in found.tried)
    hint = "" if data_root() is not None else " (RANKSCOPE_DATA is not set)"
    return (
        f"{collection.name}: not found in {tried}{hint}, and {reason}. "
        f"Put the files {files} (from {collection.url}) in one of those folders."
    )


def _only_test_split(split: str | None, folder: Path, kind: str) -> None:
    if split not in (None, "test"):
        raise DatasetNotFoundError(f"{folder}: a {kind} collection has a single split 'test', not {split!r}")


def _trec_style_files(folder: Path) -> tuple[Path, Path, Path] | None:
    corpus = first_file(folder, [f"corpus{s}" for s in _TABLE_SUFFIXES])
    queries = first_file(folder, [f"queries{s}" for s in _TABLE_SUFFIXES])
    qrels = first_file(folder, list(_TREC_QRELS))
    if corpus is None or queries is None or qrels is None:
        return None
    return corpus, queries, qrels


def _looks_like_path(text: str) -> bool:
    """``./cranfield`` or ``data/cranfield`` mean a folder; a bare known name means the collection."""
    return os.sep in text or "/" in text or text.startswith(".")
