"""``collection init``: a folder of a team's files becomes a BEIR-layout collection, file by file.

Each file under the ``--docs`` paths is read by :mod:`.readers` (a PDF one document per page) and
optionally chunked with a chunking of :mod:`rankscope.corpora.chunking`. Every document keeps its
``source`` (the file's absolute path), ``page`` (PDF) and ``sha256`` (the file's content hash), and
its id is the file's path below the ``--docs`` folder, prefixed by that folder's name (``docs/a.md``;
``:pN`` for a PDF page, ``#N`` for a chunk). Files that give no document are listed in
``unreadable.tsv`` with the reason. A re-run reads only new files and files whose hash changed,
keeps the documents of the others as they were, and never drops a file that has gone missing
(it is counted and kept).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.core.fileio import atomic_write
from rankscope.corpora.jsonl import read_jsonl, write_jsonl
from rankscope.workflows.collection.layout import (
    CORPUS,
    GENERATED_DROPPED,
    INGEST,
    QUERIES,
    UNREADABLE,
    CollectionError,
    read_state,
    write_state,
)
from rankscope.workflows.collection.queries import merge_queries, read_queries
from rankscope.workflows.collection.readers import Extracted, TextRules, Unreadable, extract, most_bytes
from rankscope.workflows.collection.walk import read_file, walk_docs


@dataclass(frozen=True)
class IngestResult:
    """What a run of ``collection init`` did; ``unreadable`` maps each file that gave nothing to why."""

    folder: Path
    added: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: int
    missing: tuple[str, ...]
    unreadable: dict[str, str]
    documents: int
    queries: int
    notes: tuple[str, ...] = field(default=())

    def to_text(self) -> str:
        lines = [
            f"{self.folder}: {self.documents} documents, {self.queries} queries",
            f"files: {len(self.added)} new, {len(self.changed)} changed, {self.unchanged} unchanged (not read again), "
            f"{len(self.missing)} no longer found (their documents kept), {len(self.unreadable)} unreadable",
        ]
        reasons: dict[str, int] = {}
        for reason in self.unreadable.values():
            kind = reason.split(" (")[0].split(" '")[0]  # "unsupported file type '.c'": counted as one reason
            reasons[kind] = reasons.get(kind, 0) + 1
        lines += [f"  unreadable: {n} x {reason}" for reason, n in sorted(reasons.items(), key=lambda x: -x[1])]
        if self.unreadable:
            lines.append(f"  each file and its reason: {self.folder / UNREADABLE}")
        return "\n".join(lines + list(self.notes))


def init_collection(
    folder: str | Path,
    docs: Sequence[str | Path],
    *,
    queries: str | Path | None = None,
    chunking: str | None = None,
    generate: int | None = None,
    judge_model: str | None = None,
    seed: int = 0,
    text: TextRules | None = None,
) -> IngestResult:
    """Ingest the files under ``docs`` into the collection ``folder`` (made or updated; see the module doc).

    ``queries`` is the team's own questions (text lines, JSONL or CSV: :mod:`.queries`); ``chunking`` a
    chunking spec (``words:200:50``, ``sentences:300``, ``paragraphs:500``), fixed at the first run;
    ``generate`` questions are written by the model ``judge_model`` from documents drawn with ``seed``
    (:mod:`.generate`). ``text`` says which other suffixes are text and the encoding of legacy texts
    (:class:`~.readers.TextRules`); kept by the collection, so a re-run without it reads as the last did.
    """
    from rankscope.corpora.chunking import parse_chunking

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CollectionError(f"{folder}: exists and is not a folder")
    if chunking is not None:
        chunking = parse_chunking(chunking).spec
    state = (
        read_state(folder / INGEST)
        if (folder / INGEST).is_file()
        else {"chunking": chunking, "files": {}, "unreadable": {}}
    )
    if state["chunking"] != chunking:
        raise CollectionError(
            f"{folder}: the collection was chunked with {state['chunking'] or 'no chunking'}, not {chunking or 'none'}"
        )
    if not docs:
        raise CollectionError("no --docs given: name the files or folders to read")
    if text is None:
        text = text_rules(folder)
    walked = walk_docs(docs)
    known: dict[str, Any] = state["files"]
    documents = {row["_id"]: row for row in _rows(folder / CORPUS)}
    added: list[str] = []
    changed: list[str] = []
    unchanged = 0
    unreadable = dict(walked.refused)  # made again each run: every entry not read is tried again
    for found in walked.files:
        source = found.source
        try:
            data = read_file(found, most_bytes(Path(source), text))
        except Unreadable as exc:
            unreadable[source] = str(exc)
            continue
        digest = hashlib.sha256(data).hexdigest()
        before = known.get(source)
        if before is not None and before["sha256"] == digest:
            unchanged += 1
            continue
        try:
            rows = _documents(found.prefix, source, digest, extract(Path(source), data, text), chunking)
        except Unreadable as exc:
            unreadable[source] = str(exc)
            continue
        _refuse_collisions(rows, documents, source)
        for old in before["documents"] if before else []:
            documents.pop(old, None)
        documents.update((row["_id"], row) for row in rows)
        known[source] = {"sha256": digest, "documents": [row["_id"] for row in rows]}
        (changed if before else added).append(source)
    seen = {found.source for found in walked.files}
    missing = tuple(source for source in known if source not in seen)
    notes: list[str] = []
    query_rows = list(_rows(folder / QUERIES))
    if queries is not None:
        query_rows, notes = merge_queries(query_rows, read_queries(queries))
    if generate is not None:
        ordered = sorted(documents.values(), key=lambda row: row["_id"])
        query_rows, made = _generated(folder, query_rows, ordered, generate, judge_model, seed)
        notes += made
    if not documents:
        raise CollectionError(
            f"no document could be read from {', '.join(map(str, docs))} ({len(unreadable)} unreadable)"
        )
    write_jsonl(sorted(documents.values(), key=lambda row: row["_id"]), folder / CORPUS)
    write_jsonl(query_rows, folder / QUERIES)
    with atomic_write(folder / UNREADABLE) as out:
        out.write("path\treason\n")
        out.writelines(f"{path}\t{' '.join(reason.split())}\n" for path, reason in sorted(unreadable.items()))
    write_state(
        folder / INGEST,
        {
            "chunking": chunking,
            "files": dict(sorted(known.items())),
            "unreadable": dict(sorted(unreadable.items())),
            "text_suffixes": list(text.suffixes),
            "encoding": text.encoding,
        },
    )
    return IngestResult(
        folder,
        tuple(added),
        tuple(changed),
        unchanged,
        missing,
        unreadable,
        len(documents),
        len(query_rows),
        tuple(notes),
    )


def text_rules(folder: str | Path, suffixes: Sequence[str] | None = None, encoding: str | None = None) -> TextRules:
    """The collection's text rules (``--text-suffixes``, ``--encoding`` of its last run), each one given
    here replacing the kept one: a re-run reads files as the run before it did."""
    state = read_state(Path(folder) / INGEST) if (Path(folder) / INGEST).is_file() else {}
    kept = state.get("text_suffixes", [])
    return TextRules(
        tuple(kept if suffixes is None else suffixes), state.get("encoding") if encoding is None else encoding
    )


def _documents(
    prefix: str, source: str, digest: str, extracted: list[Extracted], chunking: str | None
) -> list[dict[str, Any]]:
    """The corpus rows of one file's documents (chunked when asked), each with its provenance."""
    base = "_".join(prefix.split())  # ids are written bare in TREC files: no whitespace
    rows = []
    for item in extracted:
        doc_id = f"{base}:p{item.page}" if item.page else base
        rows.append({"_id": doc_id, "title": item.title, "text": item.text, "source": source, "page": item.page})
    if chunking is None:
        return [{**row, "sha256": digest} for row in rows]
    import pandas as pd

    from rankscope.corpora.chunking import chunk_corpus

    parents = {row["_id"]: row for row in rows}
    frame = pd.DataFrame(
        {"doc_id": list(parents), "title": [r["title"] for r in rows], "text": [r["text"] for r in rows]}
    )
    chunks = chunk_corpus(frame, chunking)
    return [
        {
            **parents[c.doc_id],
            "_id": c.chunk_id,
            "text": c.text,
            "parent": c.doc_id,
            "start": int(c.start),
            "sha256": digest,
        }
        for c in chunks.itertuples(index=False)
    ]


def _refuse_collisions(rows: list[dict[str, Any]], documents: dict[str, Any], source: str) -> None:
    """Two files must never give one id (a folder name used twice under --docs): refuse, naming both."""
    for row in rows:
        other = documents.get(row["_id"])
        if other is not None and other["source"] != source:
            raise CollectionError(
                f"{source} and {other['source']} both give the document id {row['_id']!r}: "
                "pass folders with different names under --docs"
            )


def _rows(path: Path) -> list[dict[str, Any]]:
    return [row for _, row in read_jsonl(path)] if path.is_file() else []


def _generated(
    folder: Path,
    query_rows: list[dict[str, Any]],
    documents: list[dict[str, Any]],
    count: int,
    spec: str | None,
    seed: int,
) -> tuple[list[dict[str, Any]], list[str]]:
    """``query_rows`` with ``count`` generated questions added (their targets saved as labels), and the
    notes saying what was dropped (also in ``generated_dropped.jsonl``)."""
    from rankscope.workflows.collection.generate import generate_questions, record_targets

    if spec is None:
        raise CollectionError("--generate needs --judge-model openai:model=M,base_url=U")
    made = generate_questions(documents, count, spec, seed)
    known = {row["_id"] for row in query_rows}
    rows = query_rows + [row for row in made.queries if row["_id"] not in known]
    folder.mkdir(parents=True, exist_ok=True)
    record_targets(folder, made.queries, {row["_id"]: row["text"] for row in documents})
    write_jsonl(made.dropped, folder / GENERATED_DROPPED)
    notes = [f"generated {len(made.queries)} questions from {count} documents ({len(made.dropped)} dropped)"]
    return rows, notes + [f"  dropped: {row['question'][:60]!r}: {row['reason']}" for row in made.dropped]
