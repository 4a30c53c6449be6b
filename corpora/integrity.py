"""Is a known collection the one distributed? File checksums and record counts, checked at load.

A SMART file that lost one ``.I`` line still parses: two records merge, and since
Cranfield's qrels number queries by position, every later query lands on another
query's judgments. Nothing in the file itself shows it, so a collection loaded by
name is compared with what is known of the distributed files: their text's SHA-256
(pinned in :mod:`corpora.registry`, or recorded in the cache folder's
``download.json`` at the first successful load when none is published) and the
numbers of documents, queries and judgment lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from rankscope.core import jsonstrict as strict_json
from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, atomic_write, read_text
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.registry import Collection

RECORD = "download.json"
"""What a downloaded collection's folder records of its download (source, checksums), beside its files."""
RESTORE = "restore the distributed file, or load the folder by path to use it as it is"


def text_sha256(path: PathLike) -> str:
    """SHA-256 of the file's text as the readers see it (so CRLF copies and .gz files agree)."""
    return hashlib.sha256(read_text(path).encode("utf-8")).hexdigest()


def check_files(collection: Collection, files: Mapping[str, Path], recorded: Mapping[str, str]) -> None:
    """Raise FormatError naming the first file whose text differs from the pinned or recorded checksum."""
    expected = {**recorded, **collection.files}
    for path in files.values():
        want = expected.get(path.name.removesuffix(".gz"))
        if want is None:
            continue
        got = text_sha256(path)
        if got != want:
            raise FormatError(
                path,
                None,
                f"differs from the {collection.name} file as distributed (text SHA-256 {got[:16]}..., "
                f"expected {want[:16]}...): damaged or edited; {RESTORE}",
            )


def check_counts(collection: Collection, folder: Path, dataset: Dataset) -> None:
    """Raise FormatError when the documents, queries or judgments differ in number from the distribution."""
    if collection.counts is None:
        return
    found = (len(dataset.corpus), len(dataset.queries), len(dataset.qrels))
    if found != collection.counts:
        shown = ", ".join(f"{n} {what}" for n, what in zip(found, ("documents", "queries", "judgments")))
        wanted = ", ".join(f"{n}" for n in collection.counts)
        raise FormatError(
            folder,
            None,
            f"holds {shown}; the distributed {collection.name} has {wanted}: a record was lost, merged or cut "
            f"(a missing '.I' line merges two records and shifts the queries the qrels number by position); {RESTORE}",
        )


def recorded_checksums(folder: Path) -> dict[str, str]:
    """The per-file checksums a cache folder's ``download.json`` holds (empty if none were recorded)."""
    path = folder / RECORD
    if not path.is_file():
        return {}
    try:
        record = strict_json.loads(read_text(path))
    except (json.JSONDecodeError, strict_json.JSONValueError) as exc:
        raise FormatError(
            path,
            getattr(exc, "lineno", None),
            f"not valid JSON ({getattr(exc, 'msg', exc)}); remove the folder to download again",
        ) from None
    files = record.get("files", {}) if isinstance(record, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise FormatError(
            path, None, "'files' must map file names to SHA-256 strings; remove the folder to download again"
        )
    return files


def record_checksums(folder: Path, files: Mapping[str, Path]) -> None:
    """Add each file's text checksum to the folder's ``download.json`` (after a first successful load).

    A read-only cache is left as it is: the record only guards later loads.
    """
    path = folder / RECORD
    with contextlib.suppress(OSError):
        record = json.loads(read_text(path)) if path.is_file() else {}
        record["files"] = {p.name.removesuffix(".gz"): text_sha256(p) for p in files.values()}
        with atomic_write(path) as sink:
            sink.write(json.dumps(record, indent=2) + "\n")
