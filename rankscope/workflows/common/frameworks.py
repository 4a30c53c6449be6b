"""Retrievers of other frameworks as systems: LangChain, LlamaIndex, Haystack, PyTerrier (docs/frameworks.md).

A RAG team's retriever is an object of its framework, already holding the collection. Passed
to ``compare``, ``diagnose`` or ``judge`` as a system (or wrapped by :func:`adapt` to choose
its fields), it is asked every query of the dataset and its results become a checked run:

- which field of a result holds the collection's document id is ``id_field``, with a default
  per framework (:data:`FRAMEWORKS`); a name the result object has as an attribute is read
  there, any other from its metadata (a PyTerrier result frame's column). A result without
  it, or naming a document the corpus lacks, is a one-line error naming the query and the
  result: never a silent drop, which would score the system on fewer results than it gave;
- several results naming one document (chunks of it) become one row scored by ``aggregate``
  (MaxP by default: the best chunk's score), said in the run's notes;
- the framework's scores are kept; a framework that gives none (LangChain) gets ``1/rank``,
  which keeps its order exactly. Equal framework scores are ordered by rankscope's tie rule
  (score descending, then doc_id descending, as trec_eval), and the notes count them;
- only the queries with judgments are asked (a framework's call may cost money or time; the
  others would not be scored);
- queries go in batches, ``concurrency`` at a time (LangChain's own ``batch``, a thread pool
  for LlamaIndex's and Haystack's ``retrieve``/``run``, one PyTerrier ``transform`` per batch),
  with a progress bar.

No framework is imported here: an object is recognised by the modules of its classes
(duck typing over ``type(obj).__mro__``), so none is a dependency of rankscope.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.progress import progress_slices
from rankscope.corpora.dataset import Dataset

BATCH = 32  # queries per call or progress step


@dataclass(frozen=True)
class Framework:
    """How one framework's retriever is asked and read: its defaults and what a result is."""

    label: str
    module: str  # the top package of the framework's classes
    id_field: str
    score_field: str | None  # None: the framework gives no scores


FRAMEWORKS: dict[str, Framework] = {
    "langchain": Framework("LangChain", "langchain_core", "id", None),
    "llamaindex": Framework("LlamaIndex", "llama_index", "ref_doc_id", "score"),
    "haystack": Framework("Haystack", "haystack", "id", "score"),
    "pyterrier": Framework("PyTerrier", "pyterrier", "docno", "score"),
}
AGGREGATIONS = ("maxp", "sump", "meanp")


class FrameworkError(RankscopeError):
    """A framework retriever's result that cannot become a run row (no id, an id the corpus lacks)."""


@dataclass(frozen=True)
class Adapted:
    """A framework retriever with the fields its results are read from (see the module doc)."""

    retriever: Any
    framework: str
    id_field: str
    score_field: str | None
    aggregate: str = "maxp"
    concurrency: int = 4

    @property
    def label(self) -> str:
        return FRAMEWORKS[self.framework].label

    def describe(self) -> str:
        """What reports show: the framework, the object's class and the fields read."""
        scores = f"scores from {self.score_field!r}" if self.score_field else "no scores (1/rank)"
        return (
            f"{self.label} {type(self.retriever).__name__}: ids from {self.id_field!r}, {scores}, "
            f"chunks of a document by {self.aggregate}"
        )


def framework_of(obj: Any) -> str | None:
    """The :data:`FRAMEWORKS` key of a framework retriever, from its classes' modules; None for anything else."""
    if isinstance(obj, Adapted):
        return obj.framework
    modules = {cls.__module__.split(".")[0] for cls in type(obj).__mro__}
    if "langchain_core" in modules and callable(getattr(obj, "batch", None)):
        return "langchain"
    if "llama_index" in modules and callable(getattr(obj, "retrieve", None)):
        return "llamaindex"
    if hasattr(obj, "__haystack_input__") and callable(getattr(obj, "run", None)):
        return "haystack"
    if "pyterrier" in modules and callable(getattr(obj, "transform", None)):
        return "pyterrier"
    return None


def adapt(
    retriever: Any,
    *,
    id_field: str | None = None,
    score_field: str | None = "",
    aggregate: str = "maxp",
    concurrency: int = 4,
) -> Adapted:
    """A framework retriever as a system, with its fields chosen (defaults: :data:`FRAMEWORKS`).

    ``id_field``: where a result's document id is (``"doc_id"``: a metadata key). ``score_field``:
    where its score is; None ignores the framework's scores (``1/rank``); ``""`` the default.
    ``aggregate``: ``maxp``, ``sump`` or ``meanp`` over several results of one document.
    ``concurrency``: queries asked at once (1: one after another).
    """
    if isinstance(retriever, Adapted):
        retriever = retriever.retriever
    name = framework_of(retriever)
    if name is None:
        raise RankscopeError(
            f"a {type(retriever).__name__} is not a retriever of a framework rankscope reads "
            "(a LangChain retriever, a LlamaIndex retriever, a Haystack retriever component, a PyTerrier transformer)"
        )
    if aggregate not in AGGREGATIONS:
        raise RankscopeError(
            f"aggregate={aggregate!r}: expected one of {', '.join(AGGREGATIONS)} (firstp needs each chunk's "
            "position in its document, which framework results do not carry)"
        )
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise RankscopeError(f"concurrency={concurrency!r}: expected a positive integer")
    framework = FRAMEWORKS[name]
    return Adapted(
        retriever,
        name,
        id_field or framework.id_field,
        framework.score_field if score_field == "" else score_field,
        aggregate,
        concurrency,
    )


# -- asking the queries ------------------------------------------------------------------------
# Each asker takes the retriever and a batch of query texts (ids for PyTerrier) and gives, per
# query, its results in the framework's order as (object, metadata) pairs.
Result = tuple[Any, Mapping[str, Any]]


def _langchain(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    batches = adapted.retriever.batch(list(texts), config={"max_concurrency": adapted.concurrency})
    return [[(doc, doc.metadata or {}) for doc in docs] for docs in batches]


def _llamaindex(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    found = _threaded(adapted.retriever.retrieve, texts, adapted.concurrency)
    return [[(hit, {**(hit.node.metadata or {})}) for hit in hits] for hits in found]


def _haystack(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    run = adapted.retriever.run
    takes_top_k = "top_k" in inspect.signature(run).parameters

    def ask(text: str) -> list[Any]:
        answer = run(query=text, top_k=depth) if takes_top_k else run(query=text)
        if not isinstance(answer, Mapping) or "documents" not in answer:
            raise FrameworkError(f"{type(adapted.retriever).__name__}.run(query=...) gave no 'documents'")
        return list(answer["documents"])

    return [[(doc, doc.meta or {}) for doc in docs] for docs in _threaded(ask, texts, adapted.concurrency)]


def _pyterrier(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    topics = pd.DataFrame({"qid": list(ids), "query": list(texts)})
    frame = adapted.retriever.transform(topics)
    if not isinstance(frame, pd.DataFrame) or "qid" not in frame.columns:
        raise FrameworkError(f"{type(adapted.retriever).__name__}.transform(topics) gave no results frame with qid")
    rows = frame.astype({"qid": str}).to_dict("records")
    by_query: dict[str, list[Result]] = {qid: [] for qid in ids}
    if "rank" in frame.columns:  # PyTerrier's own order; else the frame's
        rows.sort(key=lambda row: row["rank"])
    for row in rows:
        by_query.setdefault(row["qid"], []).append((None, row))
    return [by_query[qid] for qid in ids]


ASKERS: dict[str, Callable[[Adapted, Sequence[str], Sequence[str], int], list[list[Result]]]] = {
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "haystack": _haystack,
    "pyterrier": _pyterrier,
}


def _threaded(call: Callable[[str], Any], texts: Sequence[str], workers: int) -> list[Any]:
    if workers == 1:
        return [call(text) for text in texts]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(call, texts))


# -- results into a run ----------------------------------------------------------------------------


def _field(result: Result, field: str) -> Any:
    """A result's ``field``: an attribute of the result object (or of a LlamaIndex hit's node), else a metadata key."""
    obj, metadata = result
    for holder in (obj, getattr(obj, "node", None)):
        if holder is not None and field in _attributes(holder):
            return getattr(holder, field)
    return metadata.get(field)


def _attributes(obj: Any) -> set[str]:
    names = set(getattr(type(obj), "model_fields", {})) | set(getattr(obj, "__dict__", {}))
    return names | {n for n in dir(type(obj)) if isinstance(getattr(type(obj), n, None), property)}


def _what_it_has(result: Result) -> str:
    """The fields and metadata keys a result has, for the message that says its id is not where expected."""
    obj, metadata = result
    holder = getattr(obj, "node", obj)
    declared = getattr(type(holder), "model_fields", None) or getattr(holder, "__dict__", {})
    fields = sorted(n for n in declared if not n.startswith("_") and n not in ("metadata", "meta")) if holder else []
    keys = ", ".join(sorted(map(str, metadata))) or "(none)"
    return (f"fields {', '.join(fields)}; " if fields else "") + f"metadata {keys}"


def framework_run(name: str, adapted: Adapted, dataset: Dataset, depth: int) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The run of a framework retriever on every query of ``dataset`` (rows ``query_id, doc_id, score``),
    one row per document, and the notes a reader must see (see the module doc)."""
    if not dataset.has_corpus:
        raise FrameworkError(
            f"system {name!r} is a {adapted.label} retriever: it needs the queries and the corpus of a "
            f"collection to check its results against; {dataset.name!r} holds judgments only"
        )
    queries = dataset.queries[dataset.queries["query_id"].isin(dataset.qrels["query_id"])]
    ids = queries["query_id"].astype(str).tolist()
    texts = queries["text"].astype(str).tolist()
    ask = ASKERS[adapted.framework]
    answers: list[list[Result]] = []
    for start in progress_slices(range(len(ids)), BATCH, desc=f"{name}: queries", unit="query"):
        found = ask(adapted, ids[start.start : start.stop], texts[start.start : start.stop], depth)
        answers += found
    known = set(dataset.corpus["doc_id"].astype(str))
    rows, scored = _rows(name, adapted, ids, answers, known, dataset.name)
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score", "order"])
    notes = []
    if len(queries) < len(dataset.queries):
        notes.append(f"asked the {len(queries)} queries with judgments (of {len(dataset.queries)})")
    if not scored:
        notes.append("the framework gave no scores: score = 1/rank, its own order (no ties)")
    most = int(run.groupby("query_id").size().max()) if len(run) else 0
    if most < depth:
        notes.append(
            f"at most {most} results per query, fewer than the depth {depth}: all it found, or its own k "
            "(LangChain's and LlamaIndex's retrievers take theirs when built)"
        )
    run, chunked = _one_row_per_document(run, adapted.aggregate)
    if chunked:
        notes.append(
            f"{chunked} results were further chunks of a document already retrieved for the query: one score "
            f"per document by {adapted.aggregate} ({_AGGREGATE_SAYS[adapted.aggregate]})"
        )
    tied = int(run.duplicated(["query_id", "score"], keep=False).sum())
    if tied:
        notes.append(
            f"{tied} rows tie on score with another of their query: ordered by the tie rule (doc_id descending, "
            "as trec_eval), not the framework's order"
        )
    return run[["query_id", "doc_id", "score"]], tuple(notes)


_AGGREGATE_SAYS = {"maxp": "its best chunk's score", "sump": "the sum of its chunks' scores", "meanp": "their mean"}


def _rows(
    name: str, adapted: Adapted, ids: Sequence[str], answers: Sequence[list[Result]], known: set[str], dataset: str
) -> tuple[list[tuple[str, str, float, int]], bool]:
    """(query_id, doc_id, score, order) rows, and whether the framework gave scores; one-line errors naming
    the query and the result for a missing id or score and an id the corpus lacks."""
    rows: list[tuple[str, str, float, int]] = []
    scored = None
    for query_id, results in zip(ids, answers):
        for position, result in enumerate(results, start=1):
            where = f"system {name!r}: query {query_id!r}, result {position}"
            doc_id = _field(result, adapted.id_field)
            if doc_id is None or doc_id == "":
                raise FrameworkError(
                    f"{where} has no {adapted.id_field!r} ({_what_it_has(result)}): pass "
                    f"adapt(retriever, id_field=...) naming the field that holds the collection's document id"
                )
            doc_id = str(doc_id)
            if doc_id not in known:
                raise FrameworkError(
                    f"{where} names {doc_id!r} (field {adapted.id_field!r}), which is not a document of {dataset!r}: "
                    "the retriever indexed another collection, or its ids are in another field (adapt(..., id_field=...))"
                )
            score = _field(result, adapted.score_field) if adapted.score_field else None
            has_score = score is not None and not (isinstance(score, float) and np.isnan(score))
            if scored is None:
                scored = has_score
            elif has_score != scored:
                raise FrameworkError(
                    f"{where} {'has' if has_score else 'lacks'} a score in {adapted.score_field!r} while the first "
                    f"result {'lacked' if has_score else 'had'} one: pass adapt(retriever, score_field=None) to rank by order"
                )
            value = _number(score, f"{where}: its score in {adapted.score_field!r}") if has_score else 1.0 / position
            rows.append((query_id, doc_id, value, position))
    return rows, bool(scored)


def _number(score: Any, where: str) -> float:
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise FrameworkError(f"{where} is {score!r}, not a number") from None
    if not np.isfinite(value):
        raise FrameworkError(f"{where} is {score!r}, not a finite number")
    return value


def _one_row_per_document(run: pd.DataFrame, method: str) -> tuple[pd.DataFrame, int]:
    """One row per (query, document), scored by ``method`` over its results (the chunk rules of
    :func:`rankscope.evaluation.chunk_runs.aggregate_run`, a document's n-th result its chunk ``DOC#n``);
    and how many rows were merged."""
    from rankscope.evaluation.chunk_runs import aggregate_run

    keys = ["query_id", "doc_id"]
    extra = int(run.duplicated(keys).sum())
    if not extra:
        return run, 0
    ordered = run.sort_values(["query_id", "order"], kind="stable")
    position = ordered.groupby(keys, sort=False).cumcount()
    chunk_ids = ordered["doc_id"] + "#" + position.astype(str)
    chunks = pd.DataFrame({"chunk_id": chunk_ids, "doc_id": ordered["doc_id"], "position": position})
    chunk_run = ordered.assign(doc_id=chunk_ids)[["query_id", "doc_id", "score"]]
    return aggregate_run(chunk_run, chunks.drop_duplicates("chunk_id"), method), extra
