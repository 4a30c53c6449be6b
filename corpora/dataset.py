"""A Dataset bundles a corpus, its queries and its relevance judgments (qrels)."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from rankscope.core.errors import SchemaError, duplicate_message
from rankscope.corpora.label_sources import LabelSources
from rankscope.corpora.query_fields import QueriesFile
from rankscope.corpora.schema import validate


@dataclass(frozen=True)
class Dataset:
    """Corpus, queries and qrels of one collection, validated against the schema.

    The tables are normalised copies (see :func:`corpora.schema.validate`); the
    frames passed in are never modified. Duplicate document or query ids are an
    error, as are duplicate judgments of one (query, document) pair: a silently
    dropped duplicate would change the numbers.

    Judgments naming a document missing from the corpus or a query missing from
    the queries are kept (a retriever can never find such a document, which is
    the honest score) and counted in ``warnings``, as are queries without any
    relevant document (kept, listed by :attr:`unjudged_query_ids`).
    """

    name: str
    corpus: pd.DataFrame
    queries: pd.DataFrame
    qrels: pd.DataFrame
    split: str = "test"
    warnings: tuple[str, ...] = field(default=(), compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What a reader may want to know but need not act on (a known collection's handled quirks)."""
    label_sources: LabelSources | None = field(default=None, compare=False)
    """Where the qrels were read from and who made them (:mod:`rankscope.corpora.label_sources`), when known."""
    queries_file: QueriesFile | None = field(default=None, compare=False, repr=False)
    """The file the queries were read from, whose other fields a command may group them by
    (:mod:`rankscope.corpora.query_fields`); None when they came from elsewhere (SMART, memory)."""

    def __post_init__(self) -> None:
        src = f"dataset {self.name!r}"
        corpus = validate(self.corpus, "corpus", f"{src} corpus")
        queries = validate(self.queries, "queries", f"{src} queries")
        qrels = validate(self.qrels, "qrels", f"{src} qrels")
        _refuse_duplicates(corpus, ["doc_id"], f"{src} corpus")
        _refuse_duplicates(queries, ["query_id"], f"{src} queries")
        _refuse_duplicates(qrels, ["query_id", "doc_id"], f"{src} qrels")
        object.__setattr__(self, "corpus", corpus)
        object.__setattr__(self, "queries", queries)
        object.__setattr__(self, "qrels", qrels)
        found = [w for w in _reference_warnings(corpus, queries, qrels) if w not in self.warnings]
        object.__setattr__(self, "warnings", tuple(self.warnings) + tuple(found))

    def with_label_sources(self, sources: LabelSources | None) -> Dataset:
        """The same dataset with ``sources`` recorded (the tables are not validated again: they are the same)."""
        made = copy.copy(self)
        object.__setattr__(made, "label_sources", sources)
        return made

    def check_references(self) -> None:
        """Raise SchemaError when a judgment names a document or query the dataset lacks (``--strict``)."""
        dangling = _dangling_notes(self.corpus, self.queries, self.qrels)
        if dangling:
            raise SchemaError(f"dataset {self.name!r}: {dangling[0]}")

    def __repr__(self) -> str:
        """Counts, not the corpus: a dataset in a notebook cell or a log line stays one line."""
        return (
            f"Dataset({self.name!r}, split={self.split!r}: {len(self.corpus)} documents, "
            f"{len(self.queries)} queries, {len(self.qrels)} judgments, {len(self.warnings)} warnings)"
        )

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the three tables as validated (ids, titles, texts, judgments, in their order):
        two datasets with the same fingerprint give the same numbers; reports record it."""
        digest = hashlib.sha256()
        for frame in (self.corpus, self.queries, self.qrels):
            for column in frame.columns:
                digest.update(f"\x1d{column}\x1d".encode())
                digest.update("\x1e".join(frame[column].astype(str)).encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    @classmethod
    def qrels_only(cls, qrels: pd.DataFrame, name: str = "qrels") -> Dataset:
        """Judgments without a corpus or queries: what scoring runs made elsewhere needs (``compare``
        with runs alone, as ranx's ``compare(qrels, runs)``); retrievers need a corpus, runs do not."""
        return cls(
            name=name,
            corpus=pd.DataFrame({"doc_id": [], "title": [], "text": []}, dtype=object),
            queries=pd.DataFrame({"query_id": [], "text": []}, dtype=object),
            qrels=qrels,
        )

    @classmethod
    def corpus_only(cls, corpus: pd.DataFrame, name: str) -> Dataset:
        """Documents without queries or judgments: ``rag --answers`` on QA data, whose questions file
        gives the queries and whose answers are the evidence."""
        return cls(
            name=name,
            corpus=corpus,
            queries=pd.DataFrame({"query_id": [], "text": []}, dtype=object),
            qrels=pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}, dtype=object),
        )

    @property
    def has_corpus(self) -> bool:
        """False for :meth:`qrels_only`: no document to index, no text to show."""
        return not self.corpus.empty

    # --- views -------------------------------------------------------------------
    @property
    def relevant(self) -> pd.DataFrame:
        """Judgments with relevance >= 1 (the relevant documents)."""
        return self.qrels[self.qrels["relevance"] > 0]

    @property
    def judged_query_ids(self) -> list[str]:
        """Queries with at least one relevant document, in query order."""
        judged = set(self.relevant["query_id"])
        return [q for q in self.queries["query_id"] if q in judged]

    @property
    def unjudged_query_ids(self) -> list[str]:
        """Queries kept in the dataset that have no relevant document."""
        judged = set(self.relevant["query_id"])
        return [q for q in self.queries["query_id"] if q not in judged]

    @property
    def is_single_target(self) -> bool:
        """True when every judged query has exactly one relevant document (leave-one-out style)."""
        counts = self.relevant.groupby("query_id").size()
        return bool(len(counts)) and bool((counts == 1).all())

    def stats(self) -> dict[str, object]:
        """Counts users quote: documents, queries, judged queries, judgments per level."""
        levels = self.qrels["relevance"].value_counts().sort_index()
        return {
            "name": self.name,
            "split": self.split,
            "documents": len(self.corpus),
            "queries": len(self.queries),
            "judged_queries": len(self.judged_query_ids),
            "judgments": len(self.qrels),
            "judgments_per_level": {int(k): int(v) for k, v in levels.items()},
            "single_target": self.is_single_target,
        }

    # --- conversions -------------------------------------------------------------
    def to_dicts(self) -> dict[str, dict]:
        """Plain dicts: ``corpus {doc_id: {title, text}}``, ``queries {qid: text}``,
        ``qrels {qid: {doc_id: relevance}}`` (the pytrec_eval / BEIR shape)."""
        corpus = {
            d: {"title": t, "text": x}
            for d, t, x in zip(self.corpus["doc_id"], self.corpus["title"], self.corpus["text"])
        }
        queries = dict(zip(self.queries["query_id"], self.queries["text"]))
        qrels: dict[str, dict[str, int]] = {}
        for q, d, r in zip(self.qrels["query_id"], self.qrels["doc_id"], self.qrels["relevance"]):
            qrels.setdefault(q, {})[d] = int(r)
        return {"corpus": corpus, "queries": queries, "qrels": qrels}

    @classmethod
    def from_dicts(
        cls,
        name: str,
        corpus: dict[str, dict[str, str] | str],
        queries: dict[str, str],
        qrels: dict[str, dict[str, int]],
        split: str = "test",
    ) -> Dataset:
        """Build from the dict shapes of :meth:`to_dicts` (a corpus value may be plain text).

        A document dict needs ``text`` (``title`` is optional, as in BEIR): a missing
        text is a mistake to report, not an empty document to index silently.
        """
        rows = []
        for doc_id, doc in corpus.items():
            if isinstance(doc, str):
                rows.append((doc_id, "", doc))
            elif "text" not in doc:
                raise SchemaError(f"from_dicts: document {doc_id!r} has no 'text' (keys: {sorted(doc)})")
            else:
                rows.append((doc_id, doc.get("title", ""), doc["text"]))
        corpus_df = pd.DataFrame(rows, columns=["doc_id", "title", "text"])
        queries_df = pd.DataFrame(list(queries.items()), columns=["query_id", "text"])
        qrels_df = pd.DataFrame(
            [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
            columns=["query_id", "doc_id", "relevance"],
        )
        return cls(name=name, corpus=corpus_df, queries=queries_df, qrels=qrels_df, split=split)


def _refuse_duplicates(frame: pd.DataFrame, key: list[str], source: str) -> None:
    dup = frame.duplicated(key, keep=False)
    if dup.any():
        rows = frame[dup]
        first = rows.iloc[0]
        extra = ""
        if "relevance" in frame.columns:
            grades = sorted(set(rows[(rows[key] == first[key]).all(axis=1)]["relevance"]))
            extra = f" with grades {grades}" if len(grades) > 1 else " (identical)"
        what = ", ".join(key)
        shown = duplicate_message(what, tuple(first[k] for k in key) if len(key) > 1 else first[key[0]])
        raise SchemaError(f"{source}: {shown}{extra}; {int(dup.sum())} rows share a repeated {what}")


def _reference_warnings(corpus: pd.DataFrame, queries: pd.DataFrame, qrels: pd.DataFrame) -> list[str]:
    """Counted, human-readable notes on judgments that point nowhere and queries never judged."""
    notes = _dangling_notes(corpus, queries, qrels)
    judged = queries["query_id"].isin(qrels.loc[qrels["relevance"] > 0, "query_id"])
    if not judged.all():
        notes.append(
            f"{int((~judged).sum())} of {len(queries)} queries have no relevant document "
            "(kept; see Dataset.unjudged_query_ids)"
        )
    return notes


def _dangling_notes(corpus: pd.DataFrame, queries: pd.DataFrame, qrels: pd.DataFrame) -> list[str]:
    """Notes on judgments naming a document or a query that the dataset does not hold (none against a
    table not given at all: :meth:`Dataset.qrels_only`)."""
    notes = []
    for column, known, what, where in (
        ("doc_id", corpus["doc_id"], "document(s)", "the corpus"),
        ("query_id", queries["query_id"], "query id(s)", "the queries"),
    ):
        if known.empty:
            continue
        unknown = qrels.loc[~qrels[column].isin(known), column]
        if len(unknown):
            notes.append(
                f"{len(unknown)} judgment(s) name {unknown.nunique()} {what} not in {where} "
                f"(kept; e.g. {sorted(set(unknown))[:3]})"
            )
    return notes
