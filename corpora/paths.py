"""Finding a collection's files, plain or gzip-compressed."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def first_file(folder: Path, names: Iterable[str]) -> Path | None:
    """The first of ``names`` (or ``name.gz``) that is a file in ``folder``, else None."""
    return next((folder / n for name in names for n in (name, f"{name}.gz") if (folder / n).is_file()), None)


def data_root() -> Path | None:
    """The folder ``RANKSCOPE_DATA`` names (searched first for a known collection), or None when unset."""
    value = os.environ.get("RANKSCOPE_DATA", "")
    return Path(value).expanduser() if value else None


def cache_root() -> Path:
    """Where downloads go and are looked for: ``$XDG_CACHE_HOME/rankscope`` (default ``~/.cache/rankscope``)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "rankscope"
