"""The judgments cache: SQLite in WAL mode, one row per label, committed the moment it arrives.

A label is keyed by :func:`pair_key`, the hash of the judge's identity and the two texts (the two
ids for a judge that reads ids), so identical (query, document) texts are judged once, a second
run of the same judge makes no call, and a run killed at any instant (``kill -9``) loses only
the calls still in flight: every answer received before was committed in its own transaction.
Failed calls are recorded in ``calls`` (each call made, for counting) but not as labels, so the
next run asks again; ``invalid`` replies are kept as labels (asking a deterministic judge again
would cost the same and say the same).

The file lives in ``<user cache>/rankscope/judgments/`` (:func:`rankscope.corpora.paths.cache_root`)
or a folder given (``--judgments DIR``). :meth:`JudgmentCache.export` writes a judge's labels as a
TREC qrels file plus a JSONL with the raw replies and provenance; :meth:`JudgmentCache.import_jsonl`
reads that JSONL back into any cache.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rankscope.core.errors import FormatError
from rankscope.core.fileio import atomic_write, read_lines
from rankscope.core.jsonstrict import loads
from rankscope.corpora.paths import cache_root
from rankscope.judging.base import FAILED, OK, STATUSES, JudgeIdentity, Judgment, Pair

FILE_NAME = "judgments.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judges (judge_key TEXT PRIMARY KEY, identity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    key TEXT PRIMARY KEY, judge_key TEXT NOT NULL, label INTEGER, status TEXT NOT NULL, raw TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pairs (
    judge_key TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL, key TEXT NOT NULL,
    PRIMARY KEY (judge_key, query_id, doc_id)
);
CREATE TABLE IF NOT EXISTS calls (key TEXT NOT NULL, judge_key TEXT NOT NULL, status TEXT NOT NULL);
"""

JSONL_FIELDS = ("query_id", "doc_id", "label", "status", "raw", "key", "judge_id", "prompt_hash", "judge")
"""The fields of each line of an exported labels JSONL, in order."""


def default_folder() -> Path:
    """``<user cache>/rankscope/judgments``: where labels are kept unless a folder is given."""
    return cache_root() / "judgments"


def pair_key(identity: JudgeIdentity, pair: Pair, reads_ids: bool) -> str:
    """SHA-256 of the judge's identity and the pair's texts (or ids, for a judge that reads ids)."""
    first, second = (f"ids\0{pair.query_id}", pair.doc_id) if reads_ids else (f"texts\0{pair.query}", pair.document)
    return hashlib.sha256(f"{identity.key}\0{first}\0{second}".encode()).hexdigest()


class JudgmentCache:
    """One SQLite file of labels; safe to share between processes (WAL, a 60 s busy timeout)."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / FILE_NAME
        self._db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses no commit
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_judge(self, identity: JudgeIdentity) -> None:
        text = json.dumps(identity.to_dict(), sort_keys=True)
        self._db.execute("INSERT OR IGNORE INTO judges VALUES (?, ?)", (identity.key, text))

    def lookup(self, keys: Iterable[str]) -> dict[str, Judgment]:
        """The cached judgment of each key that has one."""
        found: dict[str, Judgment] = {}
        keys = list(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = self._db.execute(
                f"SELECT key, label, status, raw FROM labels WHERE key IN ({','.join('?' * len(chunk))})", chunk
            )
            found.update((key, Judgment(label, status, raw)) for key, label, status, raw in rows)
        return found

    def record(self, judge_key: str, key: str, judgment: Judgment) -> None:
        """One answer, committed now: the call always, the label unless the call failed."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO calls VALUES (?, ?, ?)", (key, judge_key, judgment.status))
            if judgment.status != FAILED:
                self._db.execute(
                    "INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?)",
                    (key, judge_key, judgment.label, judgment.status, judgment.raw),
                )

    def link(self, judge_key: str, rows: Sequence[tuple[str, str, str]]) -> None:
        """Remember which (query_id, doc_id) each key was asked for, so labels export by id."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO pairs VALUES (?, ?, ?, ?)", [(judge_key, q, d, k) for q, d, k in rows]
            )

    def forget(self, judge_key: str, query_id: str, doc_id: str) -> bool:
        """Remove one (query_id, doc_id)'s label of this judge (a person's undo); True if there was one.
        Calls stay counted; a label another judge's pair shares (same key) is kept."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute(
                "SELECT key FROM pairs WHERE judge_key = ? AND query_id = ? AND doc_id = ?",
                (judge_key, query_id, doc_id),
            ).fetchone()
            if row is None:
                return False
            self._db.execute(
                "DELETE FROM pairs WHERE judge_key = ? AND query_id = ? AND doc_id = ?", (judge_key, query_id, doc_id)
            )
            if not self._db.execute("SELECT 1 FROM pairs WHERE key = ?", row).fetchone():
                self._db.execute("DELETE FROM labels WHERE key = ?", row)
        return True

    def judges(self) -> dict[str, dict[str, Any]]:
        """Every judge with labels here: its key and identity (as :meth:`JudgeIdentity.to_dict` gives it)."""
        rows = self._db.execute("SELECT judge_key, identity FROM judges ORDER BY judge_key").fetchall()
        return {key: json.loads(identity) for key, identity in rows}

    def call_counts(self, judge_key: str | None = None) -> dict[str, int]:
        """How many calls were made for each key (all statuses), for one judge or all."""
        where, args = ("WHERE judge_key = ?", (judge_key,)) if judge_key else ("", ())
        rows = self._db.execute(f"SELECT key, COUNT(*) FROM calls {where} GROUP BY key", args)
        return dict(rows.fetchall())

    def labelled(self, judge_key: str) -> list[dict[str, Any]]:
        """Every (query_id, doc_id) with a label of this judge, sorted by ids, as export lines."""
        identity = self._db.execute("SELECT identity FROM judges WHERE judge_key = ?", (judge_key,)).fetchone()
        judge = json.loads(identity[0]) if identity else {}
        rows = self._db.execute(
            "SELECT p.query_id, p.doc_id, l.label, l.status, l.raw, l.key FROM pairs p JOIN labels l ON l.key = p.key "
            "WHERE p.judge_key = ? ORDER BY p.query_id, p.doc_id",
            (judge_key,),
        )
        return [
            dict(zip(JSONL_FIELDS, (*row, judge_key, judge.get("prompt_hash", ""), judge))) for row in rows.fetchall()
        ]

    def export(self, identity: JudgeIdentity, qrels_path: str | Path, jsonl_path: str | Path) -> int:
        """Write the judge's ``ok`` labels as TREC qrels and all its labels as JSONL; the number of lines."""
        lines = self.labelled(identity.key)
        with atomic_write(qrels_path) as out:
            out.writelines(f"{r['query_id']} 0 {r['doc_id']} {r['label']}\n" for r in lines if r["status"] == OK)
        with atomic_write(jsonl_path) as out:
            out.writelines(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in lines)
        return len(lines)

    def import_jsonl(self, path: str | Path) -> int:
        """Read an exported JSONL back (all lines checked before any is kept); the number of lines."""
        records = [_checked(path, number, line) for number, line in enumerate(read_lines(path), 1) if line.strip()]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for r in records:
                self._db.execute(
                    "INSERT OR IGNORE INTO judges VALUES (?, ?)",
                    (r["judge_id"], json.dumps(r["judge"], sort_keys=True)),
                )
                self._db.execute(
                    "INSERT OR IGNORE INTO labels VALUES (?, ?, ?, ?, ?)",
                    (r["key"], r["judge_id"], r["label"], r["status"], r["raw"]),
                )
                self._db.execute(
                    "INSERT OR REPLACE INTO pairs VALUES (?, ?, ?, ?)",
                    (r["judge_id"], r["query_id"], r["doc_id"], r["key"]),
                )
        return len(records)


def _checked(path: str | Path, number: int, line: str) -> dict[str, Any]:
    """One JSONL line as a record, or a FormatError naming the file, the line and the problem."""
    try:
        record = loads(line)
    except ValueError as exc:
        raise FormatError(path, number, f"not a JSON object: {exc}") from None
    if not isinstance(record, dict) or sorted(record) != sorted(JSONL_FIELDS):
        raise FormatError(path, number, f"expected the fields {', '.join(JSONL_FIELDS)}")
    texts = ("query_id", "doc_id", "raw", "key", "judge_id", "prompt_hash")
    if not all(isinstance(record[name], str) for name in texts) or not isinstance(record["judge"], dict):
        raise FormatError(path, number, "query_id, doc_id, raw, key, judge_id and prompt_hash must be strings")
    try:
        Judgment(record["label"], record["status"], record["raw"])
    except ValueError as exc:
        raise FormatError(path, number, str(exc)) from None
    if record["status"] not in STATUSES[:2]:
        raise FormatError(path, number, f"status {record['status']!r} is not a label (ok or invalid)")
    return record
