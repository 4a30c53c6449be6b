"""Close names for typos: the one "did you mean" every refusal of an unknown name uses (metrics,
collections, retrievers)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_names(text: str, known: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The ``n`` known names closest to ``text`` (difflib's ratio at least ``cutoff``), closest first."""
    return difflib.get_close_matches(text, list(known), n=n, cutoff=cutoff)


def did_you_mean(text: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean 'tfidf'?"`` for ``tfdif``, or ``""`` when no known name is close."""
    close = close_names(text, known, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""
