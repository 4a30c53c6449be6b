"""The collection's labels: people's (``human:NAME``) and judges', all in the judges' cache format.

Labels live in ``DIR/judgments.sqlite`` (:class:`rankscope.judging.cache.JudgmentCache`), so a
person's label and an LLM judge's are stored, keyed and exported alike. A person is the judge
``JudgeIdentity("human", NAME)``, shown as ``human:NAME``; each label's ``raw`` holds what the
page recorded with it (the note, the seconds spent, the time it was saved) as JSON.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from rankscope.judging.base import OK, JudgeIdentity, Judgment, Pair
from rankscope.judging.cache import FILE_NAME, JudgmentCache, pair_key
from rankscope.workflows.collection.layout import CollectionError

HUMAN = "human"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
LABEL_COLUMNS = ("query_id", "doc_id", "relevance", "source", "raw")


def person(name: str) -> JudgeIdentity:
    """The judge identity of an annotator (letters, digits, ``.``, ``_``, ``-``; up to 64)."""
    if not _NAME.fullmatch(name):
        raise CollectionError(
            f"annotator name {name!r}: use letters, digits, '.', '_' or '-' (up to 64), e.g. --name alice"
        )
    return JudgeIdentity(HUMAN, name)


def save_label(cache: JudgmentCache, who: JudgeIdentity, pair: Pair, grade: int, note: str, seconds: float) -> None:
    """One person's grade of one pair, committed now (a second grade of the pair replaces the first)."""
    key = pair_key(who, pair, reads_ids=True)  # a person labels this document for this query, by id
    at = datetime.now(UTC).isoformat(timespec="seconds")
    raw = json.dumps({"note": note, "seconds": round(seconds, 1), "at": at}, ensure_ascii=False)
    cache.add_judge(who)
    cache.record(who.key, key, Judgment(grade, OK, raw), asked_for=(pair.query_id, pair.doc_id))


def all_labels(folder: Path) -> pd.DataFrame:
    """Every ``ok`` label in the collection: ``query_id, doc_id, relevance, source, raw`` (source
    ``human:NAME`` or the judge's identity, e.g. ``openai:MODEL``), sorted by source and ids."""
    rows: list[tuple[Any, ...]] = []
    if (folder / FILE_NAME).exists():  # a folder or a damaged file there is an error, not no labels
        with JudgmentCache(folder) as cache:
            for key, identity in cache.judges().items():
                source = f"{identity['kind']}:{identity['model']}"
                rows += [
                    (r["query_id"], r["doc_id"], r["label"], source, r["raw"])
                    for r in cache.labelled(key)
                    if r["status"] == OK
                ]
    frame = pd.DataFrame(rows, columns=list(LABEL_COLUMNS))
    frame["relevance"] = frame["relevance"].astype("int64")
    return frame.sort_values(["source", "query_id", "doc_id"], kind="stable").reset_index(drop=True)


def is_human(source: pd.Series) -> pd.Series:
    return source.str.startswith(f"{HUMAN}:")
