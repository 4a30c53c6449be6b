"""Split a corpus into chunks (passages) for retrieval-augmented generation.

A chunking is named by a spec string (the third number of ``words`` is the overlap,
as the ``stride`` of Hugging Face tokenizers; windows start every SIZE - OVERLAP tokens):

- ``words:SIZE[:OVERLAP]``: fixed windows of SIZE tokens, consecutive windows sharing
  OVERLAP tokens (0 <= OVERLAP < SIZE, default 0). The last window ends at the document's
  last token; no window lies entirely inside the one before it.
- ``sentences:MAX``: whole sentences packed greedily, in order, while the chunk stays within
  MAX tokens; a sentence longer than MAX is cut into ``words:MAX`` windows of its own.
  A sentence ends after ``.``, ``!`` or ``?`` (and any closing quotes or brackets) followed
  by whitespace, or at a blank line; there is no abbreviation list, so ``J. Smith`` splits.
- ``paragraphs:MAX``: whole paragraphs (separated by a blank line) packed the same way; a
  paragraph longer than MAX is packed by sentences.
- ``whole``: one chunk per document (the baseline a chunking is compared with).

Chunks hold the parent's ``doc_id`` and ``title``, their ``position`` in the parent (0, 1,
...), the character offsets ``start``/``end`` of the chunk in the parent's ``text`` (so
``text[start:end]`` is the chunk's text exactly: from its first token's first character to
its last token's last character) and ``tokens``, the number of the parent's tokens inside it.
A document without any token gives no chunk.

Chunk ids: ``{doc_id}#{position}`` (:func:`chunk_id`). The position is the decimal number
after the *last* ``#``, so the id maps back to one (doc_id, position) pair even when doc ids
contain ``#`` themselves: two different chunks never share an id. (A chunk id can equal the id
of some *other* document of the original corpus, such as a document literally named ``7#0``;
chunk tables and chunk runs are their own id space and are never mixed with document ids.)

Length is counted by a :class:`TokenCounter`: whitespace-separated words (the default),
a regular expression (the retrieval analyzer's token pattern), or a local Hugging Face
``tokenizer.json`` through the ``tokenizers`` library (``pip install "rankscope[hf]"``),
so budgets can be stated in an LLM's tokens. Nothing is downloaded.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import require_extra
from rankscope.corpora.schema import validate

CHUNK_COLUMNS = ("chunk_id", "doc_id", "position", "start", "end", "tokens", "title", "text")
SEPARATOR = "#"
KINDS = ("words", "sentences", "paragraphs", "whole")

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+|\n[ \t]*\n\s*")
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n\s*")

Span = tuple[int, int]


class ChunkingError(RankscopeError, ValueError):
    """A chunking spec or tokenizer choice that cannot be used."""


# --- ids -------------------------------------------------------------------------------
def chunk_id(doc_id: str, position: int) -> str:
    """The id of a document's chunk at ``position`` (0-based): ``{doc_id}#{position}``."""
    return f"{doc_id}{SEPARATOR}{position}"


def parse_chunk_id(value: str) -> tuple[str, int]:
    """(doc_id, position) of a chunk id made by :func:`chunk_id`; anything else is an error."""
    doc_id, sep, position = str(value).rpartition(SEPARATOR)
    if not sep or not position.isdigit() or (len(position) > 1 and position[0] == "0") or not position.isascii():
        raise ChunkingError(f"{value!r} is not a chunk id (expected DOC_ID{SEPARATOR}POSITION, e.g. 'd7#0')")
    return doc_id, int(position)


# --- token counters ----------------------------------------------------------------------
class TokenCounter(Protocol):
    """Finds the tokens of a text as character spans; ``name`` says what is counted."""

    @property
    def name(self) -> str: ...

    def spans(self, text: str) -> list[Span]: ...


@dataclass(frozen=True)
class PatternCounter:
    """Tokens are the matches of a regular expression (``\\S+``: whitespace-separated words)."""

    pattern: str = r"\S+"
    name: str = "whitespace words"

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in re.finditer(self.pattern, text)]


class HFTokenizerCounter:
    """Tokens of a local Hugging Face ``tokenizer.json`` (special tokens not added)."""

    def __init__(self, path: str | Path) -> None:
        Tokenizer = require_extra("tokenizers", "hf", "tokenizer=PATH").Tokenizer
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such tokenizer file")
        try:
            self._tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # the library raises a bare Exception on a malformed file
            raise ChunkingError(f"{path}: not a Hugging Face tokenizer.json ({exc})") from None
        self.name = f"tokens of {path}"

    def spans(self, text: str) -> list[Span]:
        return [(start, end) for start, end in self._tokenizer.encode(text, add_special_tokens=False).offsets]


WHITESPACE = PatternCounter()


def token_counter(choice: str | None, analyzer_pattern: str | None = None) -> TokenCounter:
    """``None``/``"whitespace"``, ``"analyzer"`` (needs the analyzer's ``analyzer_pattern``),
    or a path to a ``tokenizer.json``."""
    if choice in (None, "whitespace"):
        return WHITESPACE
    if choice == "analyzer":
        if analyzer_pattern is None:
            raise ChunkingError("tokenizer 'analyzer' needs the analyzer's token pattern")
        return PatternCounter(analyzer_pattern, f"analyzer tokens ({analyzer_pattern})")
    return HFTokenizerCounter(choice)


# --- specs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chunking:
    """A parsed chunking spec (see the module doc)."""

    kind: str
    size: int = 0
    overlap: int = 0

    @property
    def spec(self) -> str:
        if self.kind == "whole":
            return "whole"
        if self.kind == "words":
            return f"words:{self.size}:{self.overlap}"
        return f"{self.kind}:{self.size}"


def parse_chunking(spec: str) -> Chunking:
    """``words:200:50``, ``words:200``, ``sentences:300``, ``paragraphs:500`` or ``whole``."""
    parts = spec.split(":")
    kind, numbers = parts[0], parts[1:]
    usage = "expected words:SIZE[:OVERLAP], sentences:MAX, paragraphs:MAX or whole"
    if kind not in KINDS:
        raise ChunkingError(f"unknown chunking {spec!r}; {usage}")
    allowed = {"whole": (0,), "words": (1, 2), "sentences": (1,), "paragraphs": (1,)}[kind]
    if len(numbers) not in allowed or not all(n.isdigit() and n.isascii() for n in numbers):
        raise ChunkingError(f"chunking {spec!r}: {usage}")
    values = [int(n) for n in numbers]
    if kind == "whole":
        return Chunking("whole")
    size, overlap = values[0], (values[1] if len(values) > 1 else 0)
    if size < 1:
        raise ChunkingError(f"chunking {spec!r}: the size must be at least 1 token")
    if overlap >= size:
        raise ChunkingError(f"chunking {spec!r}: the overlap ({overlap}) must be smaller than the size ({size})")
    return Chunking(kind, size, overlap)


# --- splitting ---------------------------------------------------------------------------
def windows(n_tokens: int, size: int, overlap: int = 0) -> list[tuple[int, int]]:
    """Token ranges ``[first, last)`` of fixed windows over ``n_tokens`` tokens (see the module doc)."""
    out = []
    step = size - overlap
    for first in range(0, n_tokens, step):
        last = min(first + size, n_tokens)
        out.append((first, last))
        if last == n_tokens:
            break
    return out


def _units(text: str, spans: list[Span], boundary: re.Pattern[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """Token ranges of the sentences or paragraphs within tokens ``[lo, hi)``: a boundary match
    ends a unit before the first token that starts at or after the match's end."""
    starts = [s for s, _ in spans]
    matches = boundary.finditer(text, spans[lo][0], spans[hi - 1][1])
    breaks = sorted({bisect_left(starts, m.end(), lo, hi) for m in matches} - {lo, hi})
    edges = [lo, *breaks, hi]
    return list(zip(edges[:-1], edges[1:]))


def _pack(
    units: list[tuple[int, int]], limit: int, split_long: Callable[[int, int], list[tuple[int, int]]]
) -> list[tuple[int, int]]:
    """Greedy packing of consecutive units into ranges of at most ``limit`` tokens; a unit longer
    than ``limit`` is flushed on its own through ``split_long``."""
    out: list[tuple[int, int]] = []
    first: int | None = None
    last = 0  # set with first
    for lo, hi in units:
        if hi - lo > limit:
            if first is not None:
                out.append((first, last))
                first = None
            out.extend(split_long(lo, hi))
        elif first is not None and hi - first <= limit:
            last = hi
        else:
            if first is not None:
                out.append((first, last))
            first, last = lo, hi
    if first is not None:
        out.append((first, last))
    return out


def token_ranges(chunking: Chunking, text: str, spans: list[Span]) -> list[tuple[int, int]]:
    """The chunks of one text as token ranges ``[first, last)``."""
    n = len(spans)
    if n == 0:
        return []
    if chunking.kind == "whole":
        return [(0, n)]
    size = chunking.size

    def by_words(lo: int, hi: int) -> list[tuple[int, int]]:
        return [(lo + a, lo + b) for a, b in windows(hi - lo, size)]

    def by_sentences(lo: int, hi: int) -> list[tuple[int, int]]:
        return _pack(_units(text, spans, _SENTENCE_END, lo, hi), size, by_words)

    if chunking.kind == "words":
        return windows(n, size, chunking.overlap)
    if chunking.kind == "sentences":
        return by_sentences(0, n)
    return _pack(_units(text, spans, _PARAGRAPH_END, 0, n), size, by_sentences)


def chunk_corpus(corpus: pd.DataFrame, chunking: str | Chunking, counter: TokenCounter = WHITESPACE) -> pd.DataFrame:
    """The chunk table (columns :data:`CHUNK_COLUMNS`) of every document's ``text``, in corpus order."""
    return chunk_corpus_many(corpus, [chunking], counter)[0]


def chunk_corpus_many(
    corpus: pd.DataFrame, chunkings: Sequence[str | Chunking], counter: TokenCounter = WHITESPACE
) -> list[pd.DataFrame]:
    """:func:`chunk_corpus` for each chunking, each document's tokens counted once for all of them
    (``rag`` compares several chunkings of one corpus: the token spans are most of the work)."""
    parsed = [parse_chunking(c) if isinstance(c, str) else c for c in chunkings]
    corpus = validate(corpus, "corpus", "chunk_corpus")
    rows: list[list[tuple]] = [[] for _ in parsed]
    for doc_id, title, text in zip(corpus["doc_id"], corpus["title"], corpus["text"]):
        spans = counter.spans(text)
        for chunking, found in zip(parsed, rows):
            for position, (first, last) in enumerate(token_ranges(chunking, text, spans)):
                start, end = spans[first][0], spans[last - 1][1]
                found.append(
                    (chunk_id(doc_id, position), doc_id, position, start, end, last - first, title, text[start:end])
                )
    return [
        pd.DataFrame(found, columns=list(CHUNK_COLUMNS)).astype(
            {"position": "int64", "start": "int64", "end": "int64", "tokens": "int64"}
        )
        for found in rows
    ]


def chunks_as_corpus(chunks: pd.DataFrame) -> pd.DataFrame:
    """The chunk table as a corpus a retriever can index: ``doc_id`` is the chunk id, the title
    is the parent's (retrievers index title and text, as DPR's passages carry their title)."""
    return pd.DataFrame({"doc_id": chunks["chunk_id"], "title": chunks["title"], "text": chunks["text"]})
