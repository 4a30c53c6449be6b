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

Several processes may share one file and still ask each key once in all (:meth:`JudgmentCache.share`):
a process claims the keys it is about to ask (rows in ``claims`` taken in a write transaction, under
its row in ``owners``: host, pid and a lease), and the others wait for those labels instead of asking. A claim
whose process has died (same host, pid gone) or whose lease ran out is taken over, so a ``kill -9``
delays nothing; a call that failed leaves its reason in the claim, which the processes that waited
for it take as their answer (a later run asks again).

The file is checked when opened (an SQLite file holding these tables) and as it is read (labels
rankscope writes: 0-3 with ``ok``, none with ``invalid``); a damaged, foreign, read-only, locked or
full file is a :class:`CacheError` naming the file and the problem in one line, never a raw
``sqlite3`` exception, and since every write is one transaction nothing committed before is lost.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.core.fileio import atomic_write, read_lines
from rankscope.core.jsonstrict import loads
from rankscope.corpora.paths import cache_root
from rankscope.judging.base import FAILED, OK, STATUSES, JudgeIdentity, Judgment, Pair

FILE_NAME = "judgments.sqlite"

BUSY_SECONDS = 60.0
"""How long a write waits for another process's lock before the cache is reported busy."""
LEASE_SECONDS = 30.0
"""How long a claim holds unless renewed; a thread of the asking process renews it every third of this while
it asks. A claim of a dead process on the same host is taken over at once; one whose process stopped
renewing it (another host's, on a shared file system; a run that ended in an error) once this has run out."""
POLL_SECONDS = 0.05
"""How often a process waiting for keys another process claimed looks for their labels."""

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
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, failed TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS owners (owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, until REAL NOT NULL);
"""

JSONL_FIELDS = ("query_id", "doc_id", "label", "status", "raw", "key", "judge_id", "prompt_hash", "judge")
"""The fields of each line of an exported labels JSONL, in order."""

_HOST = socket.gethostname()
_CLAIMS = "SELECT key, c.owner, host, pid, until, failed FROM claims c LEFT JOIN owners o ON o.owner = c.owner"
_PROBLEMS = (
    ("not a database", "is not a judgments cache: not an SQLite file (damaged, or another kind of file)"),
    ("malformed", "is damaged (SQLite: database disk image is malformed); move it aside to start a new one"),
    ("readonly", "is read-only: labels cannot be saved there"),
    ("read-only", "is read-only: labels cannot be saved there"),
    ("full", "cannot grow: the disk is full (every label committed before is kept)"),
    ("unable to open", "cannot be opened: is its folder there and writable?"),
    ("disk I/O error", "cannot be written (disk I/O error; a full disk or a file size limit?)"),
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


class CacheError(RankscopeError):
    """The judgments file cannot be used (damaged, foreign, read-only, full, locked): one line naming it."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"{path}: {problem}")


class CacheBusy(CacheError):
    """Another process held the file's write lock longer than this one would wait: try again later."""


def default_folder() -> Path:
    """``<user cache>/rankscope/judgments``: where labels are kept unless a folder is given."""
    return cache_root() / "judgments"


def pair_key(identity: JudgeIdentity, pair: Pair, reads_ids: bool) -> str:
    """SHA-256 of the judge's identity and the pair's texts (or ids, for a judge that reads ids)."""
    first, second = (f"ids\0{pair.query_id}", pair.doc_id) if reads_ids else (f"texts\0{pair.query}", pair.document)
    return hashlib.sha256(f"{identity.key}\0{first}\0{second}".encode()).hexdigest()


def _guarded(
    method: Callable[Concatenate[JudgmentCache, _P], _R],
) -> Callable[Concatenate[JudgmentCache, _P], _R]:
    """The method, with any SQLite error turned into the :class:`CacheError` that says what is wrong."""

    @functools.wraps(method)
    def wrapper(self: JudgmentCache, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    return wrapper


@functools.cache
def _columns() -> dict[str, tuple[str, ...]]:
    """Each table of a judgments cache and its columns, as :data:`_SCHEMA` makes them."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(_SCHEMA)
        return _tables(db)


def _tables(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    return {name: tuple(c for (c,) in db.execute("SELECT name FROM pragma_table_info(?)", (name,))) for name in names}


def _alive(host: object, pid: object) -> bool:
    """False for a process of this host that is gone; True otherwise (another host's cannot be seen)."""
    if host != _HOST or not isinstance(pid, int) or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _asking(host: object, pid: object, until: object, failed: object, now: float) -> bool:
    """A claim still being asked: no failure recorded, its owner's lease running and its process alive."""
    return failed is None and isinstance(until, float | int) and until > now and _alive(host, pid)


class JudgmentCache:
    """One SQLite file of labels; safe to share between processes (WAL, a busy timeout, claims).

    ``busy_seconds`` is how long a write waits for another process's lock before :class:`CacheBusy`
    (default :data:`BUSY_SECONDS`; the labelling page waits briefly and answers "busy, try again")."""

    def __init__(self, folder: str | Path | None = None, busy_seconds: float | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_folder()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / FILE_NAME
        self.busy_seconds = BUSY_SECONDS if busy_seconds is None else busy_seconds
        self._owner = secrets.token_hex(8)  # this object's claims, apart from another's in the same process
        self._judges: set[str] = set()
        if self.path.is_dir():
            raise CacheError(self.path, "is a folder, not a judgments file")
        self._db = self._open()

    def error(self, exc: sqlite3.Error) -> CacheError:
        """The one-line :class:`CacheError` an SQLite error on this file means."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            return CacheBusy(
                self.path, f"busy: another process held its lock for {self.busy_seconds:g} s; try again later"
            )
        if "unable to open" in text and not os.access(self.folder, os.W_OK):
            return CacheError(self.path, "is in a folder that cannot be written (read-only): labels cannot be saved")
        problem = next((problem for fragment, problem in _PROBLEMS if fragment in text), f"SQLite error: {text}")
        return CacheError(self.path, problem)

    @_guarded
    def _open(self) -> sqlite3.Connection:
        db = self._connect()
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses no commit
            if self._checked_tables(db):
                db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None, check_same_thread=False)

    def _checked_tables(self, db: sqlite3.Connection) -> bool:
        """Refuse a foreign SQLite file or another schema; True when tables are to be made (a new file, an older one)."""
        found, expected = _tables(db), _columns()
        if found and "labels" not in found:
            raise CacheError(self.path, f"is not a judgments cache: it holds the tables {', '.join(sorted(found))}")
        for name, columns in expected.items():
            if name in found and found[name] != columns:
                raise CacheError(
                    self.path,
                    f"is not a judgments cache rankscope reads: its table {name} has the columns "
                    f"{', '.join(found[name])}, not {', '.join(columns)}",
                )
        return any(name not in found for name in expected)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, select: str, keys: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Rows of ``select ... WHERE key IN keys``, 500 keys a statement."""
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            yield from self._db.execute(f"{select} WHERE key IN ({','.join('?' * len(chunk))})", chunk).fetchall()

    def _judgment(self, key: str, label: object, status: object, raw: object) -> Judgment:
        """A stored label as a Judgment, or a CacheError for a row rankscope never writes (a forged or damaged file)."""
        try:
            if not isinstance(raw, str):
                raise ValueError(f"a reply that is not text ({type(raw).__name__})")
            if status not in STATUSES[:2]:
                raise ValueError(f"status {status!r}")
            return Judgment(label, str(status), raw)  # type: ignore[arg-type]  # Judgment checks the label
        except ValueError as exc:
            raise CacheError(
                self.path, f"holds a label rankscope never writes (key {key[:16]}...: {exc}); was it changed by hand?"
            ) from None

    def _identity(self, judge_key: str, text: str) -> dict[str, Any]:
        try:
            identity = json.loads(text)
        except (TypeError, ValueError):
            identity = None
        if not isinstance(identity, dict) or not all(isinstance(identity.get(k), str) for k in ("kind", "model")):
            raise CacheError(self.path, f"holds a judge {judge_key[:16]}... whose identity is not one rankscope writes")
        return identity

    @_guarded
    def add_judge(self, identity: JudgeIdentity) -> None:
        if identity.key in self._judges:  # once per cache object: a person's every label passes here
            return
        text = json.dumps(identity.to_dict(), sort_keys=True)
        self._db.execute("INSERT OR IGNORE INTO judges VALUES (?, ?)", (identity.key, text))
        self._judges.add(identity.key)

    @_guarded
    def lookup(self, keys: Iterable[str]) -> dict[str, Judgment]:
        """The cached judgment of each key that has one."""
        rows = self._rows("SELECT key, label, status, raw FROM labels", list(keys))
        return {row[0]: self._judgment(*row) for row in rows}

    @_guarded
    def record(self, judge_key: str, key: str, judgment: Judgment, asked_for: tuple[str, str] | None = None) -> None:
        """One answer, committed now: the call always, the label unless the call failed, and with it the
        (query_id, doc_id) it was ``asked_for`` if given (:meth:`link` in the same transaction). The key's
        claim ends (a failed call leaves its reason there for the processes waiting)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO calls VALUES (?, ?, ?)", (key, judge_key, judgment.status))
            if asked_for is not None:
                self._db.execute("INSERT OR REPLACE INTO pairs VALUES (?, ?, ?, ?)", (judge_key, *asked_for, key))
            if judgment.status == FAILED:
                self._db.execute("UPDATE claims SET failed = ? WHERE key = ?", (judgment.raw, key))
            else:
                self._db.execute("DELETE FROM claims WHERE key = ?", (key,))
                self._db.execute(
                    "INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?)",
                    (key, judge_key, judgment.label, judgment.status, judgment.raw),
                )

    def share(
        self,
        judge_key: str,
        keys: Sequence[str],
        ask: Callable[[list[str]], Iterable[tuple[str, Judgment]]],
        commit: bool = True,
    ) -> Iterator[tuple[str, Judgment, bool]]:
        """(key, judgment, asked here) for every key, each asked by one of the processes sharing this file.

        The keys no live process is asking are claimed and given to ``ask`` (which yields (key, judgment)
        as answers arrive; each is committed here unless ``commit`` is False, when ``ask`` commits them
        itself); the others come as their processes commit them, or are claimed once those processes die.
        Claims still open when this ends (an error, an interrupt) are given up."""
        pending, seen = list(keys), dict[str, str]()
        renewing: threading.Event | None = None  # set: stop renewing this object's lease (once it claimed keys)
        try:
            while pending:
                answered, free = self._poll(pending, seen)
                yield from ((key, judgment, False) for key, judgment in answered.items())
                mine = self.claim(free) if free else []
                if mine and renewing is None:
                    renewing = threading.Event()
                    threading.Thread(target=self._renew, args=(renewing,), daemon=True, name="rankscope-claims").start()
                for key, judgment in ask(mine) if mine else ():
                    if commit:
                        self.record(judge_key, key, judgment)
                    yield key, judgment, True
                done = answered.keys() | set(mine)
                pending = [key for key in pending if key not in done]
                if pending and not done:
                    time.sleep(POLL_SECONDS)
        finally:
            if renewing is not None:
                renewing.set()
                with contextlib.suppress(CacheError):
                    self.release()

    def _renew(self, stop: threading.Event) -> None:
        """Until ``stop``: renew this object's lease every third of :data:`LEASE_SECONDS`, on a connection of
        its own (a call may take longer than a lease). If the file cannot be written, the lease runs out."""
        with contextlib.suppress(sqlite3.Error), contextlib.closing(self._connect()) as db:
            while not stop.wait(LEASE_SECONDS / 3):
                db.execute("UPDATE owners SET until = ? WHERE owner = ?", (time.time() + LEASE_SECONDS, self._owner))

    @_guarded
    def _poll(self, keys: Sequence[str], seen: dict[str, str]) -> tuple[dict[str, Judgment], list[str]]:
        """The keys answered (a label, or the failure of the process ``seen`` asking it) and the keys free to claim;
        ``seen`` learns who asks each key still claimed."""
        answered = self.lookup(keys)
        rest = [key for key in keys if key not in answered]
        claims = {row[0]: row[1:] for row in self._rows(_CLAIMS, rest)}
        now, free = time.time(), []
        for key in rest:
            owner, host, pid, until, failed = claims.get(key, ("", None, None, None, None))
            if failed is not None and seen.get(key) == owner:
                answered[key] = Judgment(None, FAILED, str(failed))
            elif _asking(host, pid, until, failed, now):
                seen[key] = owner
            else:
                free.append(key)
        return answered, free

    @_guarded
    def claim(self, keys: Sequence[str]) -> list[str]:
        """Of ``keys``, those without a label that no live process is asking, now claimed by this cache object."""
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            labelled = {key for (key,) in self._rows("SELECT key FROM labels", keys)}
            rows = self._rows(_CLAIMS, keys)
            held = {key for key, _, host, pid, until, failed in rows if _asking(host, pid, until, failed, now)}
            free = [key for key in keys if key not in labelled and key not in held]
            self._db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, NULL)", [(key, self._owner) for key in free]
            )
            self._db.execute("DELETE FROM owners WHERE until < ?", (now,))  # processes gone without a word
            self._db.execute(
                "INSERT OR REPLACE INTO owners VALUES (?, ?, ?, ?)",
                (self._owner, _HOST, os.getpid(), now + LEASE_SECONDS),
            )
        return free

    @_guarded
    def release(self) -> None:
        """Give up this cache object's claims still unanswered, so another process asks them."""
        with self._db:
            self._db.execute("DELETE FROM claims WHERE owner = ? AND failed IS NULL", (self._owner,))
            self._db.execute("DELETE FROM owners WHERE owner = ?", (self._owner,))

    @_guarded
    def link(self, judge_key: str, rows: Sequence[tuple[str, str, str]]) -> None:
        """Remember which (query_id, doc_id) each key was asked for, so labels export by id."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO pairs VALUES (?, ?, ?, ?)", [(judge_key, q, d, k) for q, d, k in rows]
            )

    @_guarded
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

    @_guarded
    def judges(self) -> dict[str, dict[str, Any]]:
        """Every judge with labels here: its key and identity (as :meth:`JudgeIdentity.to_dict` gives it)."""
        rows = self._db.execute("SELECT judge_key, identity FROM judges ORDER BY judge_key").fetchall()
        return {key: self._identity(key, identity) for key, identity in rows}

    @_guarded
    def call_counts(self, judge_key: str | None = None) -> dict[str, int]:
        """How many calls were made for each key (all statuses), for one judge or all."""
        where, args = ("WHERE judge_key = ?", (judge_key,)) if judge_key else ("", ())
        rows = self._db.execute(f"SELECT key, COUNT(*) FROM calls {where} GROUP BY key", args)
        return dict(rows.fetchall())

    @_guarded
    def labelled(self, judge_key: str) -> list[dict[str, Any]]:
        """Every (query_id, doc_id) with a label of this judge, sorted by ids, as export lines."""
        identity = self._db.execute("SELECT identity FROM judges WHERE judge_key = ?", (judge_key,)).fetchone()
        judge = self._identity(judge_key, identity[0]) if identity else {}
        rows = self._db.execute(
            "SELECT p.query_id, p.doc_id, l.label, l.status, l.raw, l.key FROM pairs p JOIN labels l ON l.key = p.key "
            "WHERE p.judge_key = ? ORDER BY p.query_id, p.doc_id",
            (judge_key,),
        )
        lines = []
        for query_id, doc_id, label, status, raw, key in rows.fetchall():
            judgment = self._judgment(key, label, status, raw)
            values = (query_id, doc_id, judgment.label, judgment.status, raw, key)
            lines.append(dict(zip(JSONL_FIELDS, (*values, judge_key, judge.get("prompt_hash", ""), judge))))
        return lines

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
        self._import(records)
        return len(records)

    @_guarded
    def _import(self, records: Sequence[dict[str, Any]]) -> None:
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
