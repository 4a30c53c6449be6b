"""Finding a collection's files, plain or gzip-compressed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def first_file(folder: Path, names: Iterable[str]) -> Path | None:
    """The first of ``names`` (or ``name.gz``) that is a file in ``folder``, else None."""
    return next((folder / n for name in names for n in (name, f"{name}.gz") if (folder / n).is_file()), None)
