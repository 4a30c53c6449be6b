"""Fetching a collection archive: stream, check its checksum, unpack safely, move into place.

Nothing is written where the collection should live until the archive has been
checked and unpacked completely, so an interrupted or corrupt download never
leaves a half-filled folder behind.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rankscope.core.errors import DatasetNotFoundError
from rankscope.core.progress import progress
from rankscope.corpora.integrity import RECORD
from rankscope.corpora.registry import Collection
from rankscope.corpora.smart import SPECS

CHUNK = 1 << 16
MAX_UNPACKED = 200 * 2**20
"""Largest total a collection archive may unpack to (the Glasgow collections unpack to a few MB each)."""
urlopen = urllib.request.urlopen  # module attribute so tests can serve archives without a network


def fetch(collection: Collection, destination: Path, timeout: float = 60.0) -> Path:
    """Download ``collection`` into ``destination`` (which must not exist yet) and return it."""
    destination = Path(destination)
    if destination.exists():
        raise DatasetNotFoundError(
            f"{destination} exists but does not hold the {collection.name} files; remove it first"
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{collection.name}.", dir=destination.parent) as tmp:
        archive = Path(tmp) / "archive"
        sha256, md5, size = _download(collection, archive, timeout)
        _verify(collection, sha256, md5, size)
        unpacked = Path(tmp) / collection.name
        _unpack(archive, unpacked)
        if SPECS[collection.layout].find(unpacked) is None:
            raise DatasetNotFoundError(f"the archive from {collection.url} lacks the {collection.name} files")
        record = {
            "url": collection.url,
            "size": size,
            "sha256": sha256,
            "md5": md5,
            "verified": _verified_by(collection),
        }
        (unpacked / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        os.replace(unpacked, destination)
    return destination


def _download(collection: Collection, target: Path, timeout: float) -> tuple[str, str, int]:
    sha256, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    try:
        with urlopen(collection.url, timeout=timeout) as response, open(target, "wb") as out:
            length = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            total = -(-int(length) // CHUNK) if length and length.isdigit() else None
            for chunk in progress(_chunks(response), desc=f"downloading {collection.name}", total=total, unit="64KiB"):
                out.write(chunk)
                sha256.update(chunk)
                md5.update(chunk)
                size += len(chunk)
            if length and length.isdigit() and size != int(length):  # http.client ends a short read quietly
                raise http.client.HTTPException(f"the connection closed after {size} of {length} bytes")
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        said = str(exc) or type(exc).__name__
        raise DatasetNotFoundError(f"could not download {collection.name} from {collection.url}: {said}") from None
    return sha256.hexdigest(), md5.hexdigest(), size


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _verify(collection: Collection, sha256: str, md5: str, size: int) -> None:
    checks = [("SHA-256", collection.sha256, sha256), ("MD5", collection.md5, md5), ("size", collection.size, size)]
    for what, expected, got in checks:
        if expected is not None and expected != got:
            raise DatasetNotFoundError(
                f"checksum mismatch for {collection.name} from {collection.url}: {what} is {got}, expected {expected}; "
                "the download was discarded"
            )


def _verified_by(collection: Collection) -> str:
    if collection.sha256 or collection.md5:
        return "published checksum"
    return "none published: recorded on first download"


def _unpack(archive: Path, target: Path, limit: int = MAX_UNPACKED) -> None:
    """Extract regular files by base name only, refusing members that point outside ``target`` and
    archives that unpack to more than ``limit`` bytes (a small download must not fill the disk)."""
    target.mkdir()
    total = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                parts = Path(member.name).parts
                if member.name.startswith(("/", "\\")) or ".." in parts:
                    raise DatasetNotFoundError(f"archive member {member.name!r} points outside its folder; refusing it")
                name = Path(member.name).name
                if not member.isfile() or name.startswith("."):
                    continue  # directories, links, devices and hidden files (e.g. macOS '._' forks)
                if (target / name).exists():
                    raise DatasetNotFoundError(f"archive holds two files named {name!r}; refusing it")
                total += member.size
                if total > limit:
                    raise DatasetNotFoundError(
                        f"archive unpacks to more than {limit // 2**20} MB (at {member.name!r}); refusing it"
                    )
                source = tar.extractfile(member)
                if source is None:
                    continue
                with source, open(target / name, "wb") as out:
                    shutil.copyfileobj(source, out)
    except DatasetNotFoundError:
        raise
    except (tarfile.TarError, EOFError, OSError) as exc:  # a truncated or corrupt archive
        raise DatasetNotFoundError(f"downloaded archive is not a readable tar file ({exc})") from None
