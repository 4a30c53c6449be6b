"""What every source of datasets from elsewhere shares (a known collection's download, ``irds:``, ``hf:``): the
``RANKSCOPE_OFFLINE`` rule and the check of a catalogue name, so that each source refuses the same way."""

from __future__ import annotations

import os

from rankscope.core.errors import DatasetNotFoundError

OFFLINE = "downloads are off (RANKSCOPE_OFFLINE is set)"
"""What a refused download says, wherever it is refused."""


def downloads_off() -> bool:
    """Whether ``RANKSCOPE_OFFLINE`` forbids every download (set to anything but empty or ``0``)."""
    return os.environ.get("RANKSCOPE_OFFLINE", "") not in ("", "0")


def catalogue_name(prefix: str, name: str, form: str) -> str:
    """``name`` (what follows ``prefix``, e.g. ``irds:``), refused in one line when it names nothing: empty,
    blank or slashes only, or holding a line break or another control character (the libraries behind
    them fail on those with an IndexError or worse). ``form`` shows what is expected."""
    if not name.strip(" \t/") or not name.isprintable():
        raise DatasetNotFoundError(f"{prefix + name!r} names no dataset: write {form}")
    return name
