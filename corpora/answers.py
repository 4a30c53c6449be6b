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
  nothing.
- ``"substring"``: the looser rule FlashRAG's retrieval recall and KILT use: both texts are
  lowercased, stripped of ASCII punctuation (``string.punctuation``), of the words a/an/the,
  and of extra whitespace (SQuAD's answer normalisation), and the answer must be a substring
  of the passage. It matches inside words: ``art`` is found in ``party``, ``U.S.`` in ``bus``.
  Numbers from the two rules are not comparable.

The ``\\p{..}`` classes need the ``regex`` package (``pip install "rankscope[rag]"``).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import pandas as pd

from rankscope.core.errors import RankscopeError

MODES = ("string", "regex", "substring")

_DPR_TOKEN = r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _regex():
    try:
        import regex
    except ImportError:
        raise ImportError('answer matching needs the regex package: pip install "rankscope[rag]"') from None
    return regex


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


def has_answer(answers: Iterable[str], text: str, mode: str = "string") -> bool:
    """Whether ``text`` contains any of ``answers`` under ``mode`` (see the module doc)."""
    if mode == "string":
        tokens = dpr_tokens(_nfd(text))
        for answer in answers:
            wanted = dpr_tokens(_nfd(answer))
            n = len(wanted)
            if any(tokens[i : i + n] == wanted for i in range(len(tokens) - n + 1)):
                return True
        return False
    if mode == "regex":
        regex = _regex()
        text = _nfd(text)
        for answer in answers:
            try:
                pattern = regex.compile(_nfd(answer), flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)
            except regex.error:
                continue
            if pattern.search(text) is not None:
                return True
        return False
    if mode == "substring":
        passage = squad_normalize(text)
        return any(squad_normalize(answer) in passage for answer in answers)
    raise RankscopeError(f"unknown answer matching mode {mode!r}; expected one of {list(MODES)}")


def answer_matches(pairs: pd.DataFrame, answers: Mapping[str, Sequence[str]], mode: str = "string") -> pd.DataFrame:
    """Which answers each (query, passage) pair contains.

    ``pairs`` has ``query_id``, ``doc_id`` and the passage ``text`` (e.g. the retrieved chunks
    of each query); ``answers`` maps a query id to its answer strings. Returns one row
    ``query_id, doc_id, answer`` per answer found (each answer tested on its own).
    """
    rows = []
    for query_id, doc_id, text in zip(pairs["query_id"], pairs["doc_id"], pairs["text"]):
        for answer in answers.get(query_id, ()):
            if has_answer([answer], text, mode):
                rows.append((query_id, doc_id, answer))
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
