"""Snippets and highlighting against their definitions, written the slow, obvious way: every window's
count of query-term words (the first window with the most wins), and a regular expression of the
whole words to mark."""

from __future__ import annotations

import functools
import html
import random
import re

import pytest

from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.snippets import Words, highlight, snippet, word_terms

VOCABULARY = [
    "retrieval",
    "retrieving",
    "retrieve",
    "library",
    "libraries",
    "Library",
    "evaluation",
    "the",
    "of",
    "a",
    "x_1",
    "42",
    "café",
    "naïve",
    "Straße",
    "in",
    "in_",
    "systems",
]
GLUE = [" ", "  ", ", ", ". ", "\n", " - ", "<b>", " & ", "—", "/", "'"]


def random_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(VOCABULARY) + rng.choice(GLUE) for _ in range(n)) + rng.choice(["", "!", " end"])


@functools.cache
def analyzed(word: str, analyzer: Analyzer) -> str | None:
    """The index term of one word alone (None: none)."""
    terms = analyzer.tokenize(word)
    return terms[0] if terms else None


def snippet_by_definition(text: str, query_terms: set[str], analyzer: Analyzer, size: int) -> tuple[str, list[str]]:
    """Every window of ``size`` words counted; the first with the most words whose term is a query term."""
    found = list(re.finditer(r"\w+", text))
    if not found:
        return " ".join(text.split()), []
    hit = [analyzed(m.group(), analyzer) in query_terms for m in found]
    size = min(size, len(found))
    counts = [sum(hit[s : s + size]) for s in range(len(found) - size + 1)]
    start = counts.index(max(counts))
    end = start + size
    body = " ".join(text[found[start].start() : found[end - 1].end()].split())
    shown = ("… " if start else "") + body + (" …" if end < len(found) else "")
    return shown, sorted({found[i].group() for i in range(start, end) if hit[i]})


def highlight_by_definition(text: str, words: list[str], before: str, after: str, escape) -> str:  # type: ignore[no-untyped-def]
    """The whole occurrences of ``words`` as one regular expression (longest first)."""
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b")
    pieces = pattern.split(text)
    return "".join(escape(p) if i % 2 == 0 else f"{before}{escape(p)}{after}" for i, p in enumerate(pieces))


@pytest.mark.parametrize("seed", range(4))
def test_snippets_equal_their_definition_for_every_query_of_a_shared_text(seed: int) -> None:
    rng = random.Random(seed)
    analyzer = Analyzer()
    texts = [random_text(rng, rng.randint(0, 90)) for _ in range(25)] + ["", "  \n ", "!!", "one"]
    terms = word_terms(texts, analyzer)
    queries = [set(analyzer.tokenize(" ".join(rng.sample(VOCABULARY, rng.randint(0, 4))))) for _ in range(8)]
    for text in texts:
        words = Words(text, terms)  # one per text, asked for every query
        for query in queries:
            for size in (1, 2, 7, 30):
                expected = snippet_by_definition(text, query, analyzer, size)
                assert words.snippet(query, size) == expected
                assert snippet(text, query, terms, words=size) == expected


def test_the_first_of_equal_windows_wins_and_a_lone_hit_ends_its_window() -> None:
    analyzer = Analyzer()
    text = "a b retrieval c d e f g h library i j"
    terms = word_terms([text], analyzer)
    # one hit: the first window holding it is the one that ends with it
    assert snippet(text, {"retriev"}, terms, words=3) == ("a b retrieval …", ["retrieval"])
    assert snippet(text, {"librari"}, terms, words=3) == ("… g h library …", ["library"])
    # two windows of one hit each: the first
    assert snippet(text, {"retriev", "librari"}, terms, words=4) == ("a b retrieval c …", ["retrieval"])
    assert snippet(text, set(), terms, words=4) == ("a b retrieval c …", [])


@pytest.mark.parametrize("seed", range(4))
def test_highlight_equals_the_whole_word_pattern(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(200):
        text = random_text(rng, rng.randint(0, 30))
        words = sorted(set(rng.sample(VOCABULARY, rng.randint(0, 5))))
        for before, after, escape in (("<mark>", "</mark>", html.escape), ("**", "**", str)):
            assert highlight(text, words, before, after, escape) == highlight_by_definition(
                text, words, before, after, escape
            )


def test_highlight_marks_whole_words_only_and_escapes_the_rest() -> None:
    marked = highlight("in_ in <in> x_1in in", ["in"], "<mark>", "</mark>", html.escape)
    assert marked == "in_ <mark>in</mark> &lt;<mark>in</mark>&gt; x_1in <mark>in</mark>"
