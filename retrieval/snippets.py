"""Snippets of documents around the query's terms, and the words in them that match the query
(``rankscope search --query`` and diagnose's drill-down show the same ones).

A word matches when the retriever's analyzer turns it into one of the query's
terms (so ``retrieval`` matches a query saying ``retrieving`` under a stemming
analyzer). The snippet is the window of :data:`SNIPPET_WORDS` words holding the
most matching words (the first such window).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from rankscope.retrieval.analysis import Analyzer

SNIPPET_WORDS = 30
_WORD = re.compile(r"\w+")


def word_terms(texts: Iterable[str], analyzer: Analyzer) -> dict[str, str | None]:
    """Every word of ``texts`` -> its index term under ``analyzer`` (None: a stopword or too short).

    Built once for all snippets: each distinct word is analysed once, whatever the number of texts.
    """
    words = sorted({w for text in texts for w in _WORD.findall(text)})
    return {w: (terms[0] if terms else None) for w, terms in zip(words, analyzer.tokenize_many(words))}


def snippet(
    text: str, query_terms: set[str], terms: Mapping[str, str | None], words: int = SNIPPET_WORDS
) -> tuple[str, list[str]]:
    """(snippet, matching words in it): the window of ``words`` words of ``text`` with the most query
    terms (the first such window); ``terms`` maps words to index terms (:func:`word_terms`)."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if not spans:
        return " ".join(text.split()), []
    surface = [text[a:b] for a, b in spans]
    hit = np.array([terms.get(w) in query_terms for w in surface], dtype=np.int64)
    window = min(words, len(spans))
    sums = np.convolve(hit, np.ones(window, dtype=np.int64), mode="valid")
    start = int(np.argmax(sums))
    end = start + window
    body = " ".join(text[spans[start][0] : spans[end - 1][1]].split())
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(spans) else ""
    matched = sorted({surface[i] for i in range(start, end) if hit[i]})
    return f"{prefix}{body}{suffix}", matched


def highlight(text: str, words: Sequence[str], before: str, after: str, escape: Callable[[str], str]) -> str:
    """``text`` escaped with ``escape``, every whole occurrence of ``words`` wrapped in ``before`` ... ``after``."""
    if not words:
        return escape(text)
    pattern = _pattern(tuple(sorted(words, key=len, reverse=True)))
    pieces = pattern.split(text)  # even positions: text between matches; odd: the matches
    return "".join(escape(p) if i % 2 == 0 else f"{before}{escape(p)}{after}" for i, p in enumerate(pieces))


@functools.lru_cache(maxsize=4096)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of whole occurrences of ``words``, longest first; kept, because a report highlights each
    snippet twice (HTML and Markdown) and holds more snippets than :mod:`re`'s own cache of 512 patterns."""
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b")
