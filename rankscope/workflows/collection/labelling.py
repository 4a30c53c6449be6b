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
from concurrent.futures import Future, ThreadPoolExecutor
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
AHEAD_SCAN = 8
"""How many pairs of the sample's order past the shown one are looked at for the one to make ahead."""
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
    """One person's work on a collection's sample; thread-safe (the web server calls it from threads).

    The person's labels are read from the store once, when the session starts; from then on the session
    keeps its queue and counts itself (the labels, their seconds, a cursor over the sample's order) and
    only appends to the store, so a post costs the same after 10,000 labels as after none."""

    folder: Path
    name: str
    pairs: list[tuple[str, str]] = field(init=False)
    skipped: dict[tuple[str, str], None] = field(default_factory=dict)  # in the order skipped, none labelled
    undone: list[tuple[str, str]] = field(default_factory=list)  # shown first, the last undone first
    history: dict[tuple[str, str], None] = field(default_factory=dict)  # labels given in this session, for undo
    _documents: dict[str, dict[str, Any]] = field(init=False, repr=False)
    _queries: dict[str, str] = field(init=False, repr=False)
    _tenths: dict[tuple[str, str], int] = field(init=False, repr=False)  # this person's labelled pairs: seconds x 10
    _total_tenths: int = field(default=0, repr=False)
    _cursor: int = field(default=0, repr=False)  # every pair before it is labelled, skipped or undone
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _ahead: dict[tuple[str, str], Future[dict[str, Any]]] = field(default_factory=dict, repr=False)
    _maker: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="rankscope-label-ahead"), repr=False
    )

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
        self._tenths = {}
        for r in self.cache.labelled(self.who.key):
            pair = (r["query_id"], r["doc_id"])
            if pair in self._sampled:
                self._tenths[pair] = _tenths(json.loads(r["raw"]).get("seconds", 0.0))
        self._total_tenths = sum(self._tenths.values())

    def close(self) -> None:
        self._maker.shutdown(wait=False, cancel_futures=True)
        self.cache.close()

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The ingested document (title, text, source, page), or None for an id the collection lacks."""
        return self._documents.get(doc_id)

    def state(self) -> dict[str, Any]:
        """What the page shows: the pair to label (texts, spans to highlight) and the progress."""
        with self._lock:
            shown = self._next()
            done = len(self._tenths)
            state = {
                "annotator": str(self.who),
                "done": done,
                "total": len(self.pairs),
                "skipped": len(self.skipped),
                "can_undo": bool(self.history),
                "mean_seconds": round(self._total_tenths / done / 10, 1) if done else None,
                "pair": self._pair(shown) if shown else None,
            }
            self._make_ahead(shown)
            return state

    def _make_ahead(self, shown: tuple[str, str] | None) -> None:
        """Start making the pair the sample's order shows after ``shown`` (its highlights cost milliseconds on a
        long document), so it is ready when the key is pressed; what was made ahead for another pair is dropped."""
        following = next(
            (
                p
                for p in self.pairs[self._cursor : self._cursor + AHEAD_SCAN]
                if p != shown and p not in self._tenths and p not in self.skipped
            ),
            None,
        )
        for pair in [pair for pair in self._ahead if pair != following]:
            self._ahead.pop(pair).cancel()
        if following is not None and following not in self._ahead:
            self._ahead[following] = self._maker.submit(self._made, following)

    def _next(self) -> tuple[str, str] | None:
        """The pair to show: the last one undone, else the next of the sample's order, else the first skipped."""
        if self.undone:
            return self.undone[0]
        while self._cursor < len(self.pairs) and (
            self.pairs[self._cursor] in self._tenths or self.pairs[self._cursor] in self.skipped
        ):
            self._cursor += 1
        if self._cursor < len(self.pairs):
            return self.pairs[self._cursor]
        return next(iter(self.skipped), None)

    def _pair(self, pair: tuple[str, str]) -> dict[str, Any]:
        """The pair as the page shows it: made ahead if it was (:meth:`_make_ahead`), else now."""
        ahead = self._ahead.pop(pair, None)
        return ahead.result() if ahead is not None and not ahead.cancelled() else self._made(pair)

    def _made(self, pair: tuple[str, str]) -> dict[str, Any]:
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
            self._total_tenths += _tenths(seconds) - self._tenths.get(pair, 0)
            self._tenths[pair] = _tenths(seconds)
            self.history.pop(pair, None)
            self.history[pair] = None
            self.skipped.pop(pair, None)
            if pair in self.undone:
                self.undone.remove(pair)

    def skip(self, query_id: Any, doc_id: Any) -> None:
        """Put a pair after the others (it comes back once they are labelled)."""
        pair = self._checked(query_id, doc_id)
        with self._lock:
            if pair in self.undone:
                self.undone.remove(pair)
            self.skipped.pop(pair, None)
            if pair not in self._tenths:
                self.skipped[pair] = None

    def undo(self) -> bool:
        """Remove this person's last label given in this session (shown again next); False if none."""
        with self._lock:
            if not self.history:
                return False
            pair = next(reversed(self.history))
            self.cache.forget(self.who.key, *pair)
            del self.history[pair]
            self._total_tenths -= self._tenths.pop(pair)
            self.undone.insert(0, pair)
            return True


def _tenths(seconds: float) -> int:
    """Seconds as whole tenths, as a label's ``raw`` keeps them: sums of them are exact."""
    return round(seconds * 10)
