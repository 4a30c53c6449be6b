"""An index saved by ``rankscope search`` or ``rankscope index`` with ``--index-dir``, and its
``source.json`` (which corpus built it, and where its texts are): reused only when built from the same
corpus with the same spec (re-weighted from its stored counts when only weights differ), never silently
another corpus's; searched alone, its texts read back from where ``source.json`` says."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rankscope.core import jsonstrict as strict_json
from rankscope.core.errors import RankscopeError
from rankscope.retrieval.index_swap import reading_index
from rankscope.retrieval.storage import META_FILE, replacing_index

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from rankscope.corpora.dataset import Dataset
    from rankscope.retrieval.base import Retriever

SOURCE_FILE = "source.json"
"""Written beside an index by this command: which corpus built it."""


class IndexMismatchError(RankscopeError):
    """A reused ``--index-dir`` was built with another spec or another corpus."""


def indexed(
    retriever: Retriever, dataset: Dataset, where: str, index_dir: Path | None, fields: str | None
) -> Retriever:
    """``retriever`` on the dataset's corpus: the saved index in ``index_dir`` when it holds this corpus
    (re-weighted if only weights differ), else indexed now and saved there with its ``source.json``
    (``fields``: ``--fields``, whose corpus mapping it records)."""
    doc_ids = dataset.corpus["doc_id"].tolist()
    fingerprint, mapping = doc_ids_digest(doc_ids), corpus_fields(fields)
    reused = _reuse(index_dir, retriever, fingerprint, mapping) if index_dir is not None else None
    if reused is not None:
        return reused
    retriever.index(dataset.corpus)
    if index_dir is not None:
        with replacing_index(index_dir) as staging:  # the index and its source.json swapped in together
            retriever.save(staging)
            folder = Path(where).expanduser()
            collection = str(folder.resolve()) if folder.is_dir() else where
            write_source(staging, dataset.name, doc_ids, dataset=collection, fields=mapping)
    return retriever


Documents = Callable[[set[str]], "pd.DataFrame"]
"""The corpus rows (doc_id, title, text) of the given documents, for titles and snippets."""


def index_alone(directory: Path, wanted: Retriever | None) -> tuple[Retriever, Documents]:
    """The index in ``directory`` without its collection: its own spec (or ``wanted``, re-weighted
    when only weights differ), and the texts of its corpus as ``source.json`` records where it is."""
    if not (directory / META_FILE).is_file():
        raise RankscopeError(
            f"{directory}: no index there; build one with rankscope index --corpus FILE --index-dir {directory} "
            "(or search --dataset ... --index-dir)"
        )
    source = _source(directory)
    fingerprint, fields = str(source.get("doc_ids_sha256")), _recorded_fields(source)
    if wanted is None:
        with reading_index(directory):
            retriever = _load_source_index(directory, fingerprint, fields)
    else:
        retriever = cast("Retriever", _reuse(directory, wanted, fingerprint, fields))
    return retriever, _source_documents(source)


def _source_documents(source: dict[str, object]) -> Documents:
    """Reads the texts of the wanted documents from the corpus file or collection ``source.json`` names
    (a collection's fields as the index took them: ``source.json``'s ``fields``)."""
    import pandas as pd

    from rankscope.corpora.load import IRDS

    def documents(doc_ids: set[str]) -> pd.DataFrame:
        if isinstance(source.get("corpus_file"), str) and Path(str(source["corpus_file"])).is_file():
            from rankscope.corpora.stream import iter_corpus

            rows = [row for row in iter_corpus(str(source["corpus_file"])) if row[0] in doc_ids]
            return pd.DataFrame(rows, columns=["doc_id", "title", "text"])
        collection, mapping = source.get("collection"), _recorded_fields(source)
        if isinstance(collection, str) and collection.startswith(IRDS):  # streamed: keep only the hits
            from rankscope.corpora.irds import iter_irds_documents

            streamed = iter_irds_documents(collection.removeprefix(IRDS), mapping)
            return pd.DataFrame([row for row in streamed if row[0] in doc_ids], columns=["doc_id", "title", "text"])
        if isinstance(collection, str):
            from rankscope.corpora.load import load_dataset

            return load_dataset(collection, columns={"corpus": mapping} if mapping else None).corpus
        return pd.DataFrame({"doc_id": [], "title": [], "text": []})

    return documents


def corpus_fields(fields: str | None) -> dict[str, str] | None:
    """``--fields``' corpus mapping (title, text), recorded in ``source.json`` so that titles and snippets
    are read from the fields the index was built from; None when not given."""
    from rankscope.corpora.cli import parsed_fields

    return parsed_fields(fields).get("corpus") or None


def doc_ids_digest(doc_ids: Iterable[str]) -> str:
    """SHA-256 of the doc ids in order: cheap, and enough to notice an index of another corpus."""
    digest = hashlib.sha256()
    for doc_id in doc_ids:
        digest.update(doc_id.encode("utf-8") + b"\0")
    return digest.hexdigest()


def write_source(
    directory: Path,
    name: str,
    doc_ids: Sequence[str] | np.ndarray,
    *,
    corpus_file: Path | None = None,
    dataset: str | None = None,
    fields: Mapping[str, str] | None = None,
) -> None:
    """``source.json``: which corpus the index in ``directory`` (a staging folder) holds, and where its
    texts are (``corpus_file``, absolute, or ``dataset``, a collection's name or absolute folder, kept as
    ``collection``, read with the corpus ``fields`` mapping given), so that ``search --index-dir`` works
    with the index alone."""
    record: dict[str, object] = {
        "dataset": name,
        "documents": len(doc_ids),
        "doc_ids_sha256": doc_ids_digest(doc_ids),
    }
    if corpus_file is not None:
        record["corpus_file"] = str(corpus_file.resolve())
    if dataset is not None:
        record["collection"] = dataset
    if fields:
        record["fields"] = dict(fields)
    (directory / SOURCE_FILE).write_text(json.dumps(record), encoding="utf-8")


def _reuse(directory: Path, wanted: Retriever, fingerprint: str, fields: Mapping[str, str] | None) -> Retriever | None:
    """The saved index, if ``source.json`` says it holds this corpus (read with these corpus ``fields``)
    and it was built with this spec;
    None if there is none yet. Opened under the readers' lock: a writer swapping a new index in
    meanwhile waits, so source, meta and arrays are all the old index's or all the new one's."""
    with reading_index(directory):
        if not (directory / META_FILE).is_file():
            return None
        loaded = _load_source_index(directory, fingerprint, fields)
    if loaded.spec() == wanted.spec():
        return loaded
    if _reweightable(loaded, wanted):
        changed = {k: v for k, v in wanted.get_params().items() if k != "analyzer" and loaded.get_params()[k] != v}
        loaded.set_params(**changed)  # re-fits the weights from the stored counts
        shown = ",".join(f"{k}={v}" for k, v in changed.items())
        print(f"reusing the counts in {directory}, re-weighted for {shown} (no re-tokenising)", file=sys.stderr)
        return loaded
    raise IndexMismatchError(
        f"{directory}: index was built as {loaded.spec()}, not {wanted.spec()}; use a new --index-dir"
    )


def _load_source_index(directory: Path, fingerprint: str, fields: Mapping[str, str] | None) -> Retriever:
    """The index in ``directory``, verified, if its ``source.json`` names the corpus of ``fingerprint`` read
    with the corpus ``fields`` (the same ids with other texts are another corpus)."""
    from rankscope.retrieval.registry import load_retriever

    source = _source(directory)
    if source.get("doc_ids_sha256") != fingerprint:
        raise IndexMismatchError(
            f"{directory}: index was built from another corpus ({source.get('dataset')!r}, "
            f"{source.get('documents')} documents); use a new --index-dir"
        )
    recorded, given = _recorded_fields(source), dict(fields) if fields else None
    if recorded != given:
        built, asked = (f"the corpus fields {f}" if f else "the default corpus fields" for f in (recorded, given))
        raise IndexMismatchError(
            f"{directory}: index was built from {built}, not {asked} (--fields); use a new --index-dir"
        )
    return load_retriever(directory, verify=True)


def _recorded_fields(source: dict[str, object]) -> dict[str, str] | None:
    """The corpus fields ``source.json`` records (``--fields``' corpus mapping), None for the defaults."""
    fields = source.get("fields")
    return cast("dict[str, str]", fields) if isinstance(fields, dict) and fields else None


def _source(directory: Path) -> dict[str, object]:
    """``source.json`` of the index in ``directory``, checked to be a JSON object."""
    source_path = directory / SOURCE_FILE
    if not source_path.is_file():
        raise IndexMismatchError(f"{directory}: no {SOURCE_FILE}, so its corpus is unknown; use a new --index-dir")
    try:
        source = strict_json.loads(source_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, strict_json.JSONValueError) as exc:
        raise IndexMismatchError(f"{source_path}: not valid JSON ({exc}); use a new --index-dir") from None
    if not isinstance(source, dict):
        raise IndexMismatchError(f"{source_path}: expected a JSON object describing the corpus; use a new --index-dir")
    return source


def _reweightable(loaded: Retriever, wanted: Retriever) -> bool:
    """Same counts-based kind and the same analysis: only weighting parameters differ."""
    from rankscope.retrieval.analysis import get_analyzer
    from rankscope.retrieval.counts_retriever import CountsRetriever

    return (
        isinstance(loaded, CountsRetriever)
        and type(loaded) is type(wanted)
        and get_analyzer(wanted.get_params()["analyzer"]) == loaded.analyzer_
    )
