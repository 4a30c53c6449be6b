"""What the labelling page does, without the web: the queue of sampled pairs one person works through,
each label saved the moment it is given, skip, undo, progress and the query's words to highlight.

The queue is ``sample.tsv``'s drawn pairs in their order, less those this person labelled (another
person's labels do not hide a pair: two people's labels of one pair give their agreement). Skipped
pairs come back after the others; an undone pair is shown next. Labels go to the collection's
judgments cache as the judge ``human:NAME`` (:mod:`.labels`), so killing the page loses nothing.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.corpora.jsonl import read_jsonl
from rankscope.judging.base import LABELS, Pair
from rankscope.judging.cache import JudgmentCache
from rankscope.workflows.collection.labels import person, save_label
from rankscope.workflows.collection.layout import CORPUS, QUERIES, CollectionError, require_collection
from rankscope.workflows.collection.sample import LABELLED, read_sample

NOTE_LIMIT = 2000
BUSY_SECONDS = 2.0
"""How long a request waits for a store another process holds locked before the page answers "busy, try again"."""
_WORD = re.compile(r"\w+")


class LabelRequestError(CollectionError):
    """A request the page should never send (an unknown pair, a grade outside 0-3): refused, nothing saved."""


def highlight_spans(query: str, text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text`` that the english analyzer turns into one of the query's
    terms (``closures`` matches a query saying ``closure``), as ``rankscope search --query`` marks them."""
    from rankscope.retrieval.analysis import get_analyzer
    from rankscope.retrieval.snippets import word_terms

    analyzer = get_analyzer("english")
    wanted = set(analyzer.tokenize(query))
    terms = word_terms([text], analyzer)
    return [m.span() for m in _WORD.finditer(text) if terms.get(m.group()) in wanted]


@dataclass
class LabelSession:
    """One person's work on a collection's sample; thread-safe (the web server calls it from threads)."""

    folder: Path
    name: str
    pairs: list[tuple[str, str]] = field(init=False)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    undone: list[tuple[str, str]] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)  # labels given in this session, for undo
    _documents: dict[str, dict[str, Any]] = field(init=False, repr=False)
    _queries: dict[str, str] = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        require_collection(self.folder)
        self.who = person(self.name)
        sample, _ = read_sample(self.folder)
        drawn = sample[sample["band"] != LABELLED].sort_values("position")
        self.pairs = list(zip(drawn["query_id"], drawn["doc_id"]))
        self._sampled = set(self.pairs)
        self._documents = {row["_id"]: row for _, row in read_jsonl(self.folder / CORPUS)}
        self._queries = {row["_id"]: row["text"] for _, row in read_jsonl(self.folder / QUERIES)}
        self.cache = JudgmentCache(self.folder, busy_seconds=BUSY_SECONDS)
        self.cache.add_judge(self.who)

    def close(self) -> None:
        self.cache.close()

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The ingested document (title, text, source, page), or None for an id the collection lacks."""
        return self._documents.get(doc_id)

    def _mine(self) -> dict[tuple[str, str], dict[str, Any]]:
        return {(r["query_id"], r["doc_id"]): r for r in self.cache.labelled(self.who.key)}

    def state(self) -> dict[str, Any]:
        """What the page shows: the pair to label (texts, spans to highlight) and the progress."""
        with self._lock:
            mine = self._mine()
            sampled = set(self.pairs)
            done = [r for pair, r in mine.items() if pair in sampled]
            waiting = [p for p in self.pairs if p not in mine and p not in self.skipped]
            order = [p for p in self.undone if p not in mine] + waiting + [p for p in self.skipped if p not in mine]
            seconds = [json.loads(r["raw"]).get("seconds", 0.0) for r in done]
            shown = self._pair(order[0]) if order else None
            return {
                "annotator": str(self.who),
                "done": len(done),
                "total": len(self.pairs),
                "skipped": len([p for p in self.skipped if p not in mine]),
                "can_undo": bool(self._undo_stack(mine)),
                "mean_seconds": round(sum(seconds) / len(seconds), 1) if seconds else None,
                "pair": shown,
            }

    def _pair(self, pair: tuple[str, str]) -> dict[str, Any]:
        query_id, doc_id = pair
        doc = self._documents[doc_id]
        query = self._queries[query_id]
        return {
            "query_id": query_id,
            "doc_id": doc_id,
            "query": query,
            "title": doc.get("title", ""),
            "text": doc["text"],
            "source": doc.get("source", ""),
            "page": doc.get("page", 0),
            "spans": highlight_spans(query, doc["text"]),
        }

    def _checked(self, query_id: Any, doc_id: Any) -> tuple[str, str]:
        if not isinstance(query_id, str) or not isinstance(doc_id, str):
            raise LabelRequestError("query_id and doc_id must be strings")
        pair = (query_id, doc_id)
        if pair not in self._sampled:
            shown = f"({query_id[:80]!r}, {doc_id[:80]!r})"
            raise LabelRequestError(f"{shown} is not a pair of this collection's sample")
        return pair

    def label(self, query_id: Any, doc_id: Any, grade: Any, note: Any = "", seconds: Any = 0.0) -> None:
        """Save this person's grade of a sampled pair now (a grade given again replaces the first)."""
        pair = self._checked(query_id, doc_id)
        if isinstance(grade, bool) or grade not in LABELS:
            raise LabelRequestError(f"grade must be one of {LABELS}, got {grade!r}")
        if not isinstance(note, str) or len(note) > NOTE_LIMIT:
            raise LabelRequestError(f"a note is text of at most {NOTE_LIMIT} characters")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < 1e6:
            raise LabelRequestError(f"seconds must be a number of seconds, got {seconds!r}")
        with self._lock:
            doc = self._documents[pair[1]]
            save_label(self.cache, self.who, Pair(*pair, self._queries[pair[0]], doc["text"]), grade, note, seconds)
            self.history.append(pair)
            self.undone[:] = [p for p in self.undone if p != pair]

    def skip(self, query_id: Any, doc_id: Any) -> None:
        """Put a pair after the others (it comes back once they are labelled)."""
        pair = self._checked(query_id, doc_id)
        with self._lock:
            self.undone[:] = [p for p in self.undone if p != pair]
            self.skipped[:] = [p for p in self.skipped if p != pair] + [pair]

    def undo(self) -> bool:
        """Remove this person's last label given in this session (shown again next); False if none."""
        with self._lock:
            stack = self._undo_stack(self._mine())
            if not stack:
                return False
            pair = stack[-1]
            self.history[:] = [p for p in self.history if p != pair]
            self.cache.forget(self.who.key, *pair)
            self.undone.insert(0, pair)
            return True

    def _undo_stack(self, mine: dict[tuple[str, str], dict[str, Any]]) -> list[tuple[str, str]]:
        return [p for p in self.history if p in mine]
