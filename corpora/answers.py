"""Relevance from answer strings and from gold character spans.

Three answer matchers, named by ``mode``:

- ``"string"``: DPR's ``has_answer`` (Karpukhin et al. 2020; the rule Pyserini's
  ``evaluate_dpr_retrieval`` also applies). Passage and answer are put in Unicode NFD,
  split by DPR's SimpleTokenizer (a token is a run of letters, digits and combining marks,
  ``[\\p{L}\\p{N}\\p{M}]+``, or any single other character that is neither a separator nor a
  control character, ``[^\\p{Z}\\p{C}]``), and lowercased; the passage has the answer when the
  answer's tokens occur as a contiguous sub-list of its tokens. So ``art`` is not found in
  ``party``, ``U.S.`` is found in ``the U.S. army`` but not in ``US army``, and an answer
  without any token (``""``, ``"  "``) is found in every passage, as in DPR (the readers refuse
  such answers, see :mod:`rankscope.corpora.qa_files`).
- ``"regex"``: DPR's regex mode. The NFD answer is a pattern searched in the NFD passage,
  case-insensitively, with ``^``/``$`` at line breaks; a pattern that does not compile matches
  nothing, as in DPR (a syntax error, flags that contradict the Unicode mode such as ``(?a)`` or
  ``(?L)``, nesting too deep to compile), and a warning names it once. A pattern still searching one passage after
  :data:`PATTERN_SECONDS` (catastrophic backtracking, ``(.*){1,32000}[!?]``) is refused with an
  :class:`AnswerPatternError` naming it: a time limit per search, so no pattern hangs a run.
- ``"substring"``: the looser rule FlashRAG's retrieval recall and KILT use: both texts are
  lowercased, stripped of ASCII punctuation (``string.punctuation``), of the words a/an/the,
  and of extra whitespace (SQuAD's answer normalisation), and the answer must be a substring
  of the passage. It matches inside words: ``art`` is found in ``party``, ``U.S.`` in ``bus``.
  Numbers from the two rules are not comparable.

The ``\\p{..}`` classes need the ``regex`` package (``pip install "rankscope[rag]"``).
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import require_extra
from rankscope.core.printable import printable

MODES = ("string", "regex", "substring")

_DPR_TOKEN = r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _regex():
    return require_extra("regex", "rag", "answer matching")


@lru_cache(maxsize=1)
def _dpr_tokenizer():
    regex = _regex()
    return regex.compile(_DPR_TOKEN, flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def dpr_tokens(text: str) -> list[str]:
    """DPR's SimpleTokenizer words of an already normalised text, lowercased."""
    return [m.group().lower() for m in _dpr_tokenizer().finditer(text)]


def squad_normalize(text: str) -> str:
    """Lowercase, drop ASCII punctuation, drop the articles a/an/the, collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


PATTERN_SECONDS = 1.0
"""regex mode: the longest one answer pattern may search one passage before it is refused."""


class AnswerPatternError(RankscopeError):
    """A regex-mode answer pattern ran longer than :data:`PATTERN_SECONDS` on one passage."""


def has_answer(answers: Iterable[str], text: str, mode: str = "string") -> bool:
    """Whether ``text`` contains any of ``answers`` under ``mode`` (see the module doc)."""
    return bool(AnswerMatcher(tuple(answers), mode).found(text, first=True))


class AnswerMatcher:
    """One question's answers prepared once (tokenised, normalised or compiled), then looked for in
    passage after passage: each passage is read once for all answers, so a question with many answers
    costs one pass over each passage plus one look-up per answer."""

    def __init__(self, answers: Sequence[str], mode: str = "string") -> None:
        if mode not in MODES:
            raise RankscopeError(f"unknown answer matching mode {mode!r}; expected one of {list(MODES)}")
        self.answers, self.mode = tuple(answers), mode
        if mode == "string":
            self.prepared: list[Any] = [tuple(dpr_tokens(_nfd(answer))) for answer in self.answers]
            self.lengths = {len(tokens) for tokens in self.prepared}
        elif mode == "regex":
            self.prepared = [_compiled(answer) for answer in self.answers]
        else:
            self.prepared = [squad_normalize(answer) for answer in self.answers]

    def found(self, text: str, *, first: bool = False) -> list[str]:
        """The answers found in ``text``, in the order given (only the first with ``first``)."""
        pairs = zip(self.answers, self.prepared)
        if self.mode == "string":
            tokens = dpr_tokens(_nfd(text))
            grams = {tuple(tokens[i : i + n]) for n in self.lengths for i in range(len(tokens) - n + 1)}
            hits = (answer for answer, wanted in pairs if wanted in grams)
        elif self.mode == "regex":
            text = _nfd(text)
            hits = (answer for answer, pattern in pairs if _searched(answer, pattern, text))
        else:
            passage = squad_normalize(text)
            hits = (answer for answer, wanted in pairs if wanted in passage)
        return list(itertools.islice(hits, 1) if first else hits)


def _compiled(answer: str) -> Any:
    """The compiled answer pattern, or None for one that does not compile: it matches nothing (DPR's numbers),
    and a warning names it, once per pattern in a process (:data:`_WARNED`; a forked worker inherits it)."""
    regex = _regex()
    try:
        return regex.compile(_nfd(answer), flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)
    except (regex.error, ValueError, RecursionError, OverflowError, MemoryError) as exc:
        # ValueError: (?a) or (?L) against the Unicode flag; RecursionError: nested too deep
        if answer not in _WARNED:
            _WARNED.add(answer)
            reason = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:120]
            warnings.warn(
                f"answer pattern {printable(answer[:60])!r} does not compile ({reason}): it matches no passage, "
                "as in DPR's regex mode",
                stacklevel=3,
            )
        return None


_WARNED: set[str] = set()
"""The answer patterns already said not to compile (each system of a rag run compiles its questions' again)."""


def _searched(answer: str, pattern: Any, text: str) -> bool:
    if pattern is None:
        return False
    try:
        return pattern.search(text, timeout=PATTERN_SECONDS) is not None
    except TimeoutError:
        raise AnswerPatternError(
            f"answer pattern {answer[:60]!r} searched a passage of {len(text):,} characters for more than "
            f"{PATTERN_SECONDS:g} s (catastrophic backtracking?): rewrite it or use --answer-mode string"
        ) from None


def answer_matches(pairs: pd.DataFrame, answers: Mapping[str, Sequence[str]], mode: str = "string") -> pd.DataFrame:
    """Which answers each (query, passage) pair contains.

    ``pairs`` has ``query_id``, ``doc_id`` and the passage ``text`` (e.g. the retrieved chunks
    of each query); ``answers`` maps a query id to its answer strings. Returns one row
    ``query_id, doc_id, answer`` per answer found (each answer tested on its own).
    """
    rows: list[tuple[str, str, str]] = []
    matchers: dict[str, AnswerMatcher] = {}
    for query_id, doc_id, text in zip(pairs["query_id"], pairs["doc_id"], pairs["text"]):
        if query_id not in answers:
            continue
        if query_id not in matchers:
            matchers[query_id] = AnswerMatcher(answers[query_id], mode)
        try:
            found = matchers[query_id].found(text)
        except AnswerPatternError as exc:
            raise AnswerPatternError(f"question {query_id!r}, passage {doc_id!r}: {exc}") from None
        rows.extend((query_id, doc_id, answer) for answer in found)
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "answer"])


def answer_qrels(pairs: pd.DataFrame, answers: Mapping[str, Sequence[str]], mode: str = "string") -> pd.DataFrame:
    """Judgments of the given (query, passage) pairs: 1 when the passage has an answer, else 0.

    Top-k accuracy as DPR and Pyserini report it is ``hit@k`` of the run on these qrels.
    """
    found = answer_matches(pairs, answers, mode)[["query_id", "doc_id"]].drop_duplicates()
    keys = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]])
    relevant = keys.isin(pd.MultiIndex.from_frame(found)) if len(found) else [False] * len(pairs)
    return pd.DataFrame(
        {"query_id": pairs["query_id"].to_numpy(), "doc_id": pairs["doc_id"].to_numpy(), "relevance": relevant}
    ).astype({"relevance": "int64"})


def span_matches(spans: pd.DataFrame, chunks: pd.DataFrame, min_coverage: float = 0.0) -> pd.DataFrame:
    """Chunks that cover gold character spans of their parent.

    ``spans`` has ``query_id, doc_id, start, end`` (offsets in the document's text, end
    exclusive). A chunk covers a span when they share at least one character and the shared
    characters are at least ``min_coverage`` of the span (0: any overlap; 1: the whole span
    lies inside the chunk). Returns ``query_id, doc_id`` (the chunk id), ``span``
    (``DOC:START-END``, one evidence unit per span) and ``coverage``.
    """
    if not 0.0 <= min_coverage <= 1.0:
        raise RankscopeError(f"min_coverage must be within [0, 1], got {min_coverage}")
    bad = spans[spans["end"] <= spans["start"]]
    if len(bad):
        row = bad.iloc[0]
        raise RankscopeError(f"gold span {row['start']}-{row['end']} of {row['doc_id']!r} is empty or reversed")
    merged = spans.merge(chunks[["chunk_id", "doc_id", "start", "end"]], on="doc_id", suffixes=("", "_chunk"))
    shared = merged[["end", "end_chunk"]].min(axis=1) - merged[["start", "start_chunk"]].max(axis=1)
    coverage = shared / (merged["end"] - merged["start"])
    keep = (shared > 0) & (coverage >= min_coverage)
    found = merged[keep]
    return pd.DataFrame(
        {
            "query_id": found["query_id"].astype(str).to_numpy(),
            "doc_id": found["chunk_id"].to_numpy(),
            "span": (
                found["doc_id"].astype(str) + ":" + found["start"].astype(str) + "-" + found["end"].astype(str)
            ).to_numpy(),
            "coverage": coverage[keep].to_numpy(),
        }
    )
