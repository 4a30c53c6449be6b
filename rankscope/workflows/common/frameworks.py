"""Retrievers of other frameworks as systems: LangChain, LlamaIndex, Haystack, PyTerrier (docs/frameworks.md).

A RAG team's retriever is an object of its framework, already holding the collection. Passed
to ``compare``, ``diagnose`` or ``judge`` as a system (or wrapped by :func:`adapt` to choose
its fields), it is asked every query of the dataset and its results become a checked run:

- which field of a result holds the collection's document id is ``id_field``, with a default
  per framework (:data:`FRAMEWORKS`); a name the result object has as an attribute is read
  there, any other from its metadata (a PyTerrier result frame's column). A result without
  it, or naming a document the corpus lacks, is a one-line error naming the query and the
  result: never a silent drop, which would score the system on fewer results than it gave;
- several results naming one document (chunks of it) become one row scored by ``aggregate``, a
  rule of :func:`rankscope.evaluation.chunk_runs.aggregate_run` (MaxP by default: the best chunk's
  score; FirstP reads each chunk's position in its document from ``position_field``), said in the
  run's notes;
- the framework's scores are kept; a framework that gives none (LangChain) gets ``1/rank``,
  which keeps its order exactly. Equal framework scores are ordered by rankscope's tie rule
  (score descending, then doc_id descending, as trec_eval), and the notes count them;
- only the queries with judgments are asked (a framework's call may cost money or time; the
  others would not be scored);
- queries go in batches with a progress bar, ``concurrency`` at a time through the framework's
  asynchronous API (LangChain's ``ainvoke``, LlamaIndex's ``aretrieve``, Haystack's ``run_async``; a
  thread pool over ``run`` for a component without it), one after another with ``concurrency=1``
  (``invoke``, ``retrieve``, ``run``); one PyTerrier ``transform`` per batch. Answers keep the
  queries' order whatever order they arrive in.

No framework is imported here: an object is recognised by the modules of its classes
(duck typing over ``type(obj).__mro__``), so none is a dependency of rankscope.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.printable import printable
from rankscope.core.progress import progress_slices
from rankscope.corpora.dataset import Dataset

BATCH = 32  # queries per call or progress step
# Each asker takes the retriever and a batch of query texts (ids for PyTerrier) and gives, per
# query, its results in the framework's order as (object, metadata) pairs. A call that raises or
# answers something else than a list of results stops the run at that query (:class:`_Failed`):
# ask_queries words it as one line naming the system and the query.
Result = tuple[Any, Mapping[str, Any]]
Asker = Callable[["Adapted", Sequence[str], Sequence[str], int], list[list[Result]]]


@dataclass(frozen=True)
class Framework:
    """One framework rankscope reads, described once (a row of :data:`FRAMEWORKS`): how its retriever is
    recognised, how it is asked, and its results' default fields."""

    label: str
    module: str  # the top package of the framework's classes
    method: str  # what its retriever is asked through (recognised only when it has it)
    id_field: str
    score_field: str | None  # None: the framework gives no scores
    position_field: str | None  # where its splitters put a chunk's place in its document (FirstP)
    text_field: str  # a result's text (rag counts its tokens and looks for answers in it)
    ask: Asker  # each query's results, in the framework's order (a batch of queries)
    marker: str | None = None  # an attribute its objects have whatever their module (Haystack's @component)

    def recognises(self, obj: Any, modules: set[str]) -> bool:
        """Whether ``obj`` (whose classes' top modules are ``modules``) is a retriever of this framework."""
        found = hasattr(obj, self.marker) if self.marker else self.module in modules
        return found and callable(getattr(obj, self.method, None))


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
    position_field: str | None = None
    text_field: str = "text"

    @property
    def label(self) -> str:
        return FRAMEWORKS[self.framework].label

    def describe(self) -> str:
        """What reports show: the framework, the object's class and the fields read."""
        scores = f"scores from {self.score_field!r}" if self.score_field else "no scores (1/rank)"
        return (
            f"{self.label} {type(self.retriever).__name__}: ids from {self.id_field!r}, {scores}, "
            f"chunks of a document by {self.aggregate}"
            + (f" (their place from {self.position_field!r})" if self.position_field else "")
        )


def framework_of(obj: Any) -> str | None:
    """The :data:`FRAMEWORKS` key of a framework retriever, from its classes' modules; None for anything else."""
    if isinstance(obj, Adapted):
        return obj.framework
    modules = {cls.__module__.split(".")[0] for cls in type(obj).__mro__}
    return next((name for name, framework in FRAMEWORKS.items() if framework.recognises(obj, modules)), None)


def adapt(
    retriever: Any,
    *,
    id_field: str | None = None,
    score_field: str | None = "",
    aggregate: str = "maxp",
    concurrency: int = 4,
    position_field: str | None = None,
    text_field: str | None = None,
) -> Adapted:
    """A framework retriever as a system, with its fields chosen (defaults: :data:`FRAMEWORKS`).

    ``id_field``: where a result's document id is (``"doc_id"``: a metadata key). ``score_field``:
    where its score is; None ignores the framework's scores (``1/rank``); ``""`` the default.
    ``aggregate``: a rule of :func:`~rankscope.evaluation.chunk_runs.aggregate_run` over several
    results of one document (``maxp``, ``firstp``, ``sump``, ``meanp``, ``kmaxavgp:K``); ``firstp``
    reads each chunk's position in its document from ``position_field`` (default: where the
    framework's splitters put it). ``concurrency``: queries asked at once (1: one after another).
    ``text_field``: where a result's text is (``rag`` counts its tokens).
    """
    from rankscope.evaluation.chunk_runs import parse_aggregation

    if isinstance(retriever, Adapted):
        retriever = retriever.retriever
    name = framework_of(retriever)
    if name is None:
        raise RankscopeError(
            f"a {type(retriever).__name__} is not a retriever of a framework rankscope reads "
            "(a LangChain retriever, a LlamaIndex retriever, a Haystack retriever component, a PyTerrier transformer)"
        )
    parse_aggregation(aggregate)
    framework = FRAMEWORKS[name]
    position_field = position_field or framework.position_field
    if aggregate == "firstp" and position_field is None:
        raise RankscopeError(
            f"aggregate='firstp' needs each chunk's position in its document: pass position_field= naming the "
            f"field of a {framework.label} result that holds it"
        )
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise RankscopeError(f"concurrency={concurrency!r}: expected a positive integer")
    return Adapted(
        retriever,
        name,
        id_field or framework.id_field,
        framework.score_field if score_field == "" else score_field,
        aggregate,
        concurrency,
        position_field if aggregate == "firstp" else None,
        text_field or framework.text_field,
    )


# -- asking the queries ------------------------------------------------------------------------


class _Failed(Exception):
    """A framework call that raised or gave no list of results: the text's place in its batch (None:
    the whole batch, PyTerrier's one call) and the problem."""

    def __init__(self, index: int | None, problem: str) -> None:
        super().__init__(problem)
        self.index = index
        self.problem = problem


class _Unreadable(Exception):
    """An answer that is not a list of the framework's results (None, a string, a dict ...)."""


def _results(answer: Any, holds: str, what: str) -> list[Any]:
    """``answer`` as a list of results, each an object with the attribute ``holds`` (a ``what``)."""
    if answer is None or isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        raise _Unreadable(f"gave {_shown(answer)}, not a list of {what}s")
    found = list(answer)
    for position, result in enumerate(found, start=1):
        if not hasattr(result, holds):
            raise _Unreadable(f"gave {_shown(result)} as result {position}, not a {what}")
    return found


def _shown(value: Any) -> str:
    """A value a framework gave, in a few words: its type, and its start for a text."""
    if value is None:
        return "None"
    if isinstance(value, (str, bytes)):
        return f"a {type(value).__name__} ({printable(repr(value[:40]))})"
    return f"a {type(value).__name__}"


def _problem(exc: Exception, what: str) -> str:
    """What went wrong in ``what`` (the call), in one line."""
    if isinstance(exc, _Unreadable):
        return f"{what} {exc}"
    said = printable(str(exc)).strip()
    said = said if len(said) <= 300 else said[:300] + "..."
    return f"{what} raised {type(exc).__name__}" + (f": {said}" if said else "")


def _langchain(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    retriever = adapted.retriever

    def read(docs: Any) -> list[Result]:
        return [(doc, doc.metadata or {}) for doc in _results(docs, "metadata", "Document")]

    async def ask_async(text: str) -> list[Result]:
        return read(await retriever.ainvoke(text))

    what = f"{adapted.label} {type(retriever).__name__}.{{}}(query)"
    return _asked(
        lambda text: read(retriever.invoke(text)), ask_async, texts, adapted.concurrency, what, ("invoke", "ainvoke")
    )


def _llamaindex(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    retriever = adapted.retriever

    def read(hits: Any) -> list[Result]:
        return [(hit, {**(hit.node.metadata or {})}) for hit in _results(hits, "node", "NodeWithScore")]

    async def ask_async(text: str) -> list[Result]:
        return read(await retriever.aretrieve(text))

    has_async = callable(getattr(retriever, "aretrieve", None))
    what = f"{adapted.label} {type(retriever).__name__}.{{}}(query)"
    methods = ("retrieve", "aretrieve")
    return _asked(
        lambda text: read(retriever.retrieve(text)),
        ask_async if has_async else None,
        texts,
        adapted.concurrency,
        what,
        methods,
    )


def _haystack(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    component = adapted.retriever
    takes_top_k = "top_k" in inspect.signature(component.run).parameters
    kwargs = {"top_k": depth} if takes_top_k else {}

    def read(answer: Any) -> list[Result]:
        if not isinstance(answer, Mapping) or "documents" not in answer:
            raise _Unreadable(f"gave {_shown(answer)} without 'documents'")
        return [(doc, doc.meta or {}) for doc in _results(answer["documents"], "meta", "Document")]

    def ask(text: str) -> list[Result]:
        return read(component.run(query=text, **kwargs))

    async def ask_async(text: str) -> list[Result]:
        return read(await component.run_async(query=text, **kwargs))

    has_async = callable(getattr(component, "run_async", None))
    what = f"{adapted.label} {type(component).__name__}.{{}}(query=...)"
    return _asked(ask, ask_async if has_async else None, texts, adapted.concurrency, what, ("run", "run_async"))


def _pyterrier(adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int) -> list[list[Result]]:
    topics = pd.DataFrame({"qid": list(ids), "query": list(texts)})
    call = f"{adapted.label} {type(adapted.retriever).__name__}.transform(topics)"
    try:
        frame = adapted.retriever.transform(topics)
    except Exception as exc:  # noqa: BLE001 - any failure of the framework's code is the user's to see
        raise _Failed(None, _problem(exc, call)) from exc
    if not isinstance(frame, pd.DataFrame) or "qid" not in frame.columns:
        raise _Failed(None, f"{call} gave {_shown(frame)}, not a results frame with qid")
    rows = frame.astype({"qid": str}).to_dict("records")
    by_query: dict[str, list[Result]] = {qid: [] for qid in ids}
    if "rank" in frame.columns:  # PyTerrier's own order; else the frame's
        rows.sort(key=lambda row: row["rank"])
    for row in rows:
        by_query.setdefault(row["qid"], []).append((None, row))
    return [by_query[qid] for qid in ids]


FRAMEWORKS: dict[str, Framework] = {
    "langchain": Framework(
        "LangChain", "langchain_core", "batch", "id", None, "start_index", "page_content", _langchain
    ),
    "llamaindex": Framework(
        "LlamaIndex", "llama_index", "retrieve", "ref_doc_id", "score", "start_char_idx", "text", _llamaindex
    ),
    "haystack": Framework(
        "Haystack", "haystack", "run", "id", "score", "split_idx_start", "content", _haystack, "__haystack_input__"
    ),
    "pyterrier": Framework("PyTerrier", "pyterrier", "transform", "docno", "score", None, "text", _pyterrier),
}
"""The frameworks read, in the order an object is recognised."""


def _asked(
    call: Callable[[str], Any],
    call_async: Callable[[str], Any] | None,
    texts: Sequence[str],
    workers: int,
    what: str,
    methods: tuple[str, str],
) -> list[Any]:
    """``call(text)`` for each text in order: one after another with one worker, else ``workers`` at once
    through ``call_async`` (a thread pool over ``call`` without it); answers in the texts' order. The
    first call that fails is :class:`_Failed`, named by ``what`` formatted with the name of the method
    called (``methods``: the one and the asynchronous one); the calls not yet begun are dropped."""

    def checked(index: int, text: str) -> Any:
        try:
            return call(text)
        except Exception as exc:  # noqa: BLE001 - any failure of the framework's code is the user's to see
            raise _Failed(index, _problem(exc, what.format(methods[0]))) from exc

    if workers == 1:
        return [checked(index, text) for index, text in enumerate(texts)]
    if call_async is None:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            return list(pool.map(checked, range(len(texts)), texts))
        finally:
            pool.shutdown(cancel_futures=True)

    import asyncio  # only for a framework asked concurrently: every workflow imports this module

    async def bounded() -> list[Any]:
        gate = asyncio.Semaphore(workers)

        async def one(index: int, text: str) -> Any:
            async with gate:
                try:
                    return await call_async(text)
                except Exception as exc:  # noqa: BLE001 - as in checked
                    raise _Failed(index, _problem(exc, what.format(methods[1]))) from exc

        # every call is a task at once, so none is left a coroutine never awaited when one fails:
        # asyncio.run cancels the others
        return list(await asyncio.gather(*(one(index, text) for index, text in enumerate(texts))))

    return _run_async(bounded)


def _run_async(make: Callable[[], Any]) -> Any:
    """The result of the coroutine ``make()`` gives, run to its end: on an event loop of its own, on a
    thread of its own when this one already runs a loop (a notebook's)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


# -- results into a run ----------------------------------------------------------------------------


def field_of(result: Result, field: str) -> Any:
    """A result's ``field``: an attribute of the result object (or of a LlamaIndex hit's node), else a metadata key."""
    obj, metadata = result
    for holder in (obj, getattr(obj, "node", None)):
        if holder is not None and field in attributes(holder):
            return getattr(holder, field)
    return metadata.get(field)


def attributes(obj: Any) -> set[str]:
    """The names an object holds: its pydantic fields, its instance attributes, its class's properties."""
    names = set(getattr(type(obj), "model_fields", {})) | set(getattr(obj, "__dict__", {}))
    return names | {n for n in dir(type(obj)) if isinstance(getattr(type(obj), n, None), property)}


def what_it_has(result: Result) -> str:
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
    answers = ask_queries(name, adapted, ids, queries["text"].astype(str).tolist(), depth)
    known = set(dataset.corpus["doc_id"].astype(str))
    run, scored = result_rows(name, adapted, ids, answers, known, dataset.name)
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
        rule = _AGGREGATE_SAYS[adapted.aggregate.partition(":")[0]].format(
            k=adapted.aggregate.partition(":")[2], field=adapted.position_field
        )
        notes.append(
            f"{chunked} results were further chunks of a document already retrieved for the query: one score "
            f"per document by {adapted.aggregate} ({rule})"
        )
    tied = int(run.duplicated(["query_id", "score"], keep=False).sum())
    if tied:
        notes.append(
            f"{tied} rows tie on score with another of their query: ordered by the tie rule (doc_id descending, "
            "as trec_eval), not the framework's order"
        )
    return run[["query_id", "doc_id", "score"]], tuple(notes)


def ask_queries(
    name: str, adapted: Adapted, ids: Sequence[str], texts: Sequence[str], depth: int
) -> list[list[Result]]:
    """Each query's results in the framework's order, asked in batches with a progress bar."""
    ask = FRAMEWORKS[adapted.framework].ask
    answers: list[list[Result]] = []
    size = max(BATCH, adapted.concurrency)  # a batch keeps every worker busy
    for part in progress_slices(range(len(ids)), size, desc=f"{name}: queries", unit="query"):
        batch = ids[part.start : part.stop]
        try:
            answers += ask(adapted, batch, texts[part.start : part.stop], depth)
        except _Failed as failed:
            where = f"query {batch[failed.index]!r}" if failed.index is not None else _queries(batch)
            raise FrameworkError(f"system {name!r}: {where}: {failed.problem}") from failed
    return answers


def _queries(batch: Sequence[str]) -> str:
    """The queries of a batch, for a call that asked them all."""
    return f"query {batch[0]!r}" if len(batch) == 1 else f"queries {batch[0]!r} to {batch[-1]!r}"


_AGGREGATE_SAYS = {
    "maxp": "its best chunk's score",
    "firstp": "the score of its chunk first in the document, by {field!r}",
    "sump": "the sum of its chunks' scores",
    "meanp": "their mean",
    "kmaxavgp": "the mean of its {k} best chunks' scores",
}


def result_rows(
    name: str, adapted: Adapted, ids: Sequence[str], answers: Sequence[list[Result]], known: set[str], dataset: str
) -> tuple[pd.DataFrame, bool]:
    """Rows ``query_id, doc_id, score, order`` (and ``position``, a chunk's place in its document, for
    FirstP), and whether the framework gave scores; one-line errors naming the query and the result for
    a missing id, score or position and an id the corpus lacks."""
    rows: list[tuple[str, str, float, int, float]] = []
    scored = None
    for query_id, results in zip(ids, answers):
        for position, result in enumerate(results, start=1):
            where = f"system {name!r}: query {query_id!r}, result {position}"
            doc_id = field_of(result, adapted.id_field)
            if doc_id is None or doc_id == "":
                raise FrameworkError(
                    f"{where} has no {adapted.id_field!r} ({what_it_has(result)}): pass "
                    f"adapt(retriever, id_field=...) naming the field that holds the collection's document id"
                )
            doc_id = str(doc_id)
            if doc_id not in known:
                raise FrameworkError(
                    f"{where} names {doc_id!r} (field {adapted.id_field!r}), which is not a document of {dataset!r}: "
                    "the retriever indexed another collection, or its ids are in another field (adapt(..., id_field=...))"
                )
            score = field_of(result, adapted.score_field) if adapted.score_field else None
            has_score = score is not None and not (isinstance(score, float) and np.isnan(score))
            if scored is None:
                scored = has_score
            elif has_score != scored:
                raise FrameworkError(
                    f"{where} {'has' if has_score else 'lacks'} a score in {adapted.score_field!r} while the first "
                    f"result {'lacked' if has_score else 'had'} one: pass adapt(retriever, score_field=None) to rank by order"
                )
            value = _number(score, f"{where}: its score in {adapted.score_field!r}") if has_score else 1.0 / position
            rows.append((query_id, doc_id, value, position, _position(result, adapted, where)))
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score", "order", "position"])
    return (run if adapted.position_field else run.drop(columns="position")), bool(scored)


def _position(result: Result, adapted: Adapted, where: str) -> float:
    """The chunk's place in its document (FirstP), from ``position_field``; 0 when FirstP is not asked."""
    if adapted.position_field is None:
        return 0.0
    found = field_of(result, adapted.position_field)
    if found is None:
        raise FrameworkError(
            f"{where} has no position in {adapted.position_field!r} ({what_it_has(result)}): firstp needs each "
            "chunk's place in its document; pass adapt(retriever, position_field=...) naming the field that holds it"
        )
    return _number(found, f"{where}: its position in {adapted.position_field!r}")


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
    :func:`rankscope.evaluation.chunk_runs.aggregate_run`, each result a chunk of its own, at its
    ``position`` when the run has one, else at its place among the document's results); and how many
    rows were merged."""
    from rankscope.evaluation.chunk_runs import aggregate_run

    keys = ["query_id", "doc_id"]
    extra = int(run.duplicated(keys).sum())
    if not extra:
        return run, 0
    ordered = run.sort_values(["query_id", "order"], kind="stable")
    nth = ordered.groupby(keys, sort=False).cumcount()
    chunk_ids = ordered["query_id"] + "#" + ordered["doc_id"] + "#" + nth.astype(str)  # one per result
    position = ordered["position"] if "position" in ordered.columns else nth
    chunks = pd.DataFrame({"chunk_id": chunk_ids, "doc_id": ordered["doc_id"], "position": position})
    chunk_run = ordered.assign(doc_id=chunk_ids)[["query_id", "doc_id", "score"]]
    return aggregate_run(chunk_run, chunks, method), extra
