"""Snippets of documents around the query's terms, and the words in them that match the query
(``rankscope search --query`` and diagnose's drill-down show the same ones).

A word matches when the retriever's analyzer turns it into one of the query's
terms (so ``retrieval`` matches a query saying ``retrieving`` under a stemming
analyzer). The snippet is the window of :data:`SNIPPET_WORDS` words holding the
most matching words (the first such window).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from rankscope.retrieval.analysis import Analyzer

SNIPPET_WORDS = 30
_WORD = re.compile(r"\w+")


def word_terms(texts: Iterable[str], analyzer: Analyzer) -> dict[str, str | None]:
    """Every word of ``texts`` -> its index term under ``analyzer`` (None: a stopword or too short).

    Built once for all snippets: each distinct word is analysed once, whatever the number of texts.
    """
    return _analysed({w for text in texts for w in _WORD.findall(text)}, analyzer)


def texts_as_words(texts: Sequence[str], analyzer: Analyzer) -> list[Words]:
    """Each text as :class:`Words`, read once and each distinct word analysed once (:func:`word_terms`)."""
    surfaces = [_WORD.findall(text) for text in texts]
    terms = _analysed({w for surface in surfaces for w in surface}, analyzer)
    return [Words(text, terms, surface) for text, surface in zip(texts, surfaces)]


def _analysed(words: Iterable[str], analyzer: Analyzer) -> dict[str, str | None]:
    """Each word -> its index term under ``analyzer`` (the first, when it splits it into several)."""
    ordered = sorted(words)
    return {w: (terms[0] if terms else None) for w, terms in zip(ordered, analyzer.tokenize_many(ordered))}


def snippet(
    text: str, query_terms: set[str], terms: Mapping[str, str | None], words: int = SNIPPET_WORDS
) -> tuple[str, list[str]]:
    """(snippet, matching words in it): the window of ``words`` words of ``text`` with the most query
    terms (the first such window); ``terms`` maps words to index terms (:func:`word_terms`)."""
    return Words(text, terms).snippet(query_terms, words)


class Words:
    """One text's words and each word's index term, found once for every query shown with it (a
    drill-down shows a document under many queries)."""

    def __init__(self, text: str, terms: Mapping[str, str | None], surface: list[str] | None = None) -> None:
        """``surface``: the words of ``text`` (``_WORD.findall(text)``), when the caller has them already."""
        self.text = text
        self.surface = _WORD.findall(text) if surface is None else surface
        self.terms = list(map(terms.get, self.surface))  # None: a stopword, too short, or unknown

    def snippet(self, query_terms: set[str], words: int = SNIPPET_WORDS) -> tuple[str, list[str]]:
        """:func:`snippet` of this text."""
        n = len(self.surface)
        if not n:
            return " ".join(self.text.split()), []
        hits = list(itertools.compress(range(n), map(query_terms.__contains__, self.terms)))  # in order
        window = min(words, n)
        start = _first_best_window(hits, n, window)
        end = start + window
        found = _WORD.finditer(self.text)
        first = next(itertools.islice(found, start, None))
        last = first if window == 1 else next(itertools.islice(found, window - 2, None))
        body = " ".join(self.text[first.start() : last.end()].split())
        prefix = "… " if start > 0 else ""
        suffix = " …" if end < n else ""
        matched = sorted({self.surface[i] for i in hits if start <= i < end})
        return f"{prefix}{body}{suffix}", matched


def _first_best_window(hits: list[int], n: int, window: int) -> int:
    """The first start of a ``window`` of ``n`` words holding the most of the (sorted) positions ``hits``.

    The count rises only where a hit enters (start = hit - window + 1), so the first best start is 0 or
    one of those: each is counted with a second pointer to the first hit still inside."""
    if not hits or window == n:
        return 0
    best, start, first = 0, 0, 0
    for last, hit in enumerate(hits):
        begin = hit - window + 1
        while hits[first] < begin:
            first += 1
        if last - first + 1 > best:
            best, start = last - first + 1, max(0, begin)
    return start


def highlight(text: str, words: Sequence[str], before: str, after: str, escape: Callable[[str], str]) -> str:
    """``text`` escaped with ``escape``, every whole occurrence of ``words`` (each a word: letters, digits,
    ``_``) wrapped in ``before`` ... ``after``. A word is found as :data:`_WORD` finds it, so no pattern is
    compiled per snippet."""
    wanted = set(words)
    if not wanted:
        return escape(text)
    pieces = []
    done = 0
    for match in _WORD.finditer(text):
        if match.group() in wanted:
            pieces += [escape(text[done : match.start()]), before, escape(match.group()), after]
            done = match.end()
    pieces.append(escape(text[done:]))
    return "".join(pieces)
