"""What a run file given on the command line is called: ``NAME=PATH`` names it, a bare path is named
by its file name without the noise every run file carries (``run.bm25s.trec`` -> ``bm25s``), so a
report's rows and its ``run.<name>.trec`` files do not read ``run.run.bm25s.trec.trec``."""

from __future__ import annotations

from pathlib import Path

from rankscope.core.errors import RankscopeError

NOISE_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".trec", ".run", ".res", ".txt", ".tsv")
"""Endings a run file's name carries that say nothing of the system (compression, then format)."""
NOISE_PREFIXES = ("run.", "run_", "run-", "runs.")


def named_path(item: str) -> tuple[str | None, str]:
    """``NAME=PATH`` as its name and path; an existing file (whatever its name holds) or an item without
    ``=`` is a bare path (no name). An empty name or path is refused."""
    name, sep, path = item.partition("=")
    if not sep or Path(item).is_file():
        return None, item
    if not name or not path:
        raise RankscopeError(f"a run is PATH or NAME=PATH, got {item!r}")
    return name, path


def run_name(path: str) -> str:
    """The system name of a run file given without one: its file name less :data:`NOISE_SUFFIXES` and a
    leading ``run.`` (``runs/run.rank_bm25.trec.gz`` -> ``rank_bm25``); the whole name if nothing is left."""
    whole = Path(path).name
    name = whole
    while ending := next((s for s in NOISE_SUFFIXES if name.lower().endswith(s) and len(name) > len(s)), None):
        name = name[: -len(ending)]
    prefix = next((p for p in NOISE_PREFIXES if name.lower().startswith(p) and len(name) > len(p)), "")
    return name[len(prefix) :] or whole


def system_run(item: str) -> tuple[str, str]:
    """A ``--run`` / run argument as the system's name and the file's path (:func:`named_path`, :func:`run_name`)."""
    name, path = named_path(item)
    return name if name is not None else run_name(path), path
