"""``irds:NAME``: a collection of ir_datasets (the catalogue of IR test collections), read through its iterators.

ir_datasets' own download and cache rules apply (``IR_DATASETS_HOME``; offline once its cache holds the
files), and any dataset registered with ``ir_datasets.registry.register`` is found like a built-in one.
NAME includes the split, as ir_datasets names them (``beir/scifact/test``), so ``split`` is refused.

Which fields form a document's title and text (docs/frameworks.md lists the defaults per family):

- title: the field ``title`` when the document type has one, else empty;
- text: the field ``text`` when it has one (BEIR, MS MARCO, TREC's documents), else the type's own
  ``default_text()`` (ir_datasets' choice for that family);
- a query's text: the field ``text``, else ``default_text()`` (TREC topics: their title).

``columns={"corpus": {"title": F, "text": G}, "queries": {"text": H}}`` names other fields; a name the
type lacks is a one-line error listing the fields it has.

:func:`iter_irds_documents` gives the documents one at a time by the same rules, never as a frame: what
``rankscope index --dataset irds:NAME`` streams into the bounded-memory index (docs/scale.md).

While rankscope reads through ir_datasets, ir_datasets' own log lines below WARNING are left out (they
would come before rankscope's one-line error); ``--verbose`` shows them. With ``RANKSCOPE_OFFLINE`` set,
a file ir_datasets would download is refused before any connection, in one line naming the variable
(what its cache holds is read as usual); a download that fails is one line with its first reason,
instead of ir_datasets' warnings and traceback.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

import pandas as pd

from rankscope.core.errors import DatasetNotFoundError, RankscopeError, SchemaError
from rankscope.core.extras import require_extra
from rankscope.core.notices import is_verbose
from rankscope.core.printable import printable
from rankscope.core.progress import progress, shows_bars
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.remote_sources import OFFLINE, catalogue_name, downloads_off
from rankscope.corpora.tabular import Columns

_ROLES = {"corpus": ("title", "text"), "queries": ("text",)}
FORM = "irds:NAME, NAME as ir_datasets names it (irds:beir/scifact/test; `ir_datasets list`)"
T = TypeVar("T")


def load_irds(name: str, split: str | None = None, columns: Mapping[str, Columns] | None = None) -> Dataset:
    """The ir_datasets collection ``name`` (docs, queries and qrels) as a Dataset (see the module doc)."""
    if split is not None:
        raise DatasetNotFoundError(
            f"irds:{name}: ir_datasets names its splits in the dataset name (irds:beir/scifact/test), not with a split"
        )
    catalogue_name("irds:", name, FORM)
    _check_columns(name, columns or {})
    given = columns or {}
    with _through_irds(name):
        found = _found(name, ("docs", "queries", "qrels"), "a test collection needs all three")
        read = _readers(name, found.queries_cls(), _ROLES["queries"], given.get("queries", {}), "queries")
        documents = _documents(name, found, given.get("corpus", {}))  # every field checked before any record is read
        corpus = pd.DataFrame(list(documents), columns=["doc_id", "title", "text"])
        queries = pd.DataFrame(
            list(_records(name, found.queries_iter(), "query_id", read, "queries")), columns=["query_id", "text"]
        )
        qrels = pd.DataFrame(
            [(str(q.query_id), str(q.doc_id), int(q.relevance)) for q in found.qrels_iter()],
            columns=["query_id", "doc_id", "relevance"],
        )
    return Dataset(name=f"irds:{name}", corpus=corpus, queries=queries[["query_id", "text"]], qrels=qrels)


def iter_irds_documents(name: str, columns: Columns | None = None) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of each document of the ir_datasets collection ``name``, one at a time from
    its ``docs_iter`` (ir_datasets reads its files as it goes), fields chosen as :func:`load_irds` chooses
    them (``columns``: the corpus mapping, ``{"title": F, "text": G}``). The dataset and the mapping are
    checked here, before the first document is asked for."""
    catalogue_name("irds:", name, FORM)
    _check_columns(name, {"corpus": columns or {}})
    with _through_irds(name):
        documents = _documents(name, _found(name, ("docs",), "an index needs its documents"), columns or {})
    return _quietly(name, documents)


@contextlib.contextmanager
def _own_lines_only() -> Iterator[None]:
    """While rankscope reads through ir_datasets, ir_datasets' log lines below WARNING ("[INFO] [starting]
    building docstore", "[INFO] Opening ...") are left out, so a bad dataset or field is rankscope's one line
    alone; its warnings, and with ``--verbose`` all its lines, still show. Scoped to the call (a filter on its
    logger, removed after), not set at import: outside rankscope's calls ir_datasets logs as it always does."""
    if is_verbose():
        yield
        return
    logger = logging.getLogger("ir_datasets")  # the one logger of ir_datasets.log.easy()

    def keep(record: logging.LogRecord) -> bool:  # a filter of this call's own: a nested call removes only its own
        return record.levelno >= logging.WARNING

    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


def _quietly(name: str, records: Iterator[T]) -> Iterator[T]:
    """``records`` read through :func:`_through_irds` (ir_datasets opens its files when the first is asked for)."""
    with _through_irds(name):
        yield from records


class _Refused(BaseException):
    """A download ir_datasets began while downloads are off: a BaseException, so that ir_datasets' handlers
    of Exception (which would try its other mirrors and log each failure) let it through at once."""


@contextlib.contextmanager
def _through_irds(name: str) -> Iterator[None]:
    """Reading through ir_datasets: its log lines below WARNING left out (:func:`_own_lines_only`), its
    progress bars only where rankscope's show (a terminal, not --quiet); with
    ``RANKSCOPE_OFFLINE`` set, its first attempt at the network (every download of ir_datasets gets the
    ``requests`` module from ``ir_datasets.lazy_libs``) refused before any connection; a failed download,
    or a failure of ir_datasets' reading (a file it downloaded that is an error page: it does not check
    the status), one line naming the dataset and the first reason."""
    lazy_libs = require_extra("ir_datasets", "irds", f"irds:{name}").lazy_libs
    try:
        with _own_lines_only(), _logged_failures() as failures, _network_and_bars(lazy_libs):
            yield
    except _Refused:
        raise DatasetNotFoundError(
            f"irds:{name}: ir_datasets would download its files (not in its cache, {_home()}), and {OFFLINE}"
        ) from None
    except RankscopeError:
        raise
    except Exception as exc:  # noqa: BLE001 - ir_datasets' own failures, said in one line
        downloading = bool(failures) or _is_download_error(exc)
        reason = printable(failures[0] if failures else f"{type(exc).__name__}: {exc}")[:300]
        what = "could not download its files" if downloading else "failed reading its files"
        raise DatasetNotFoundError(f"irds:{name}: ir_datasets {what} ({reason}); its cache: {_home()}") from None


_HELD: list[Any] = []
"""While reads through ir_datasets are open: ir_datasets' own ``requests`` and ``tqdm`` getters, and how many
reads hold them swapped (two document streams may be open at once, closed in any order)."""


@contextlib.contextmanager
def _network_and_bars(lazy_libs: Any) -> Iterator[None]:
    """ir_datasets' getters of ``requests`` and ``tqdm`` (``ir_datasets.lazy_libs``, through which every one
    of its downloads and bars goes) swapped while the first read is open, put back when the last closes:
    ``requests`` refused with ``RANKSCOPE_OFFLINE`` set, the bars off where rankscope's are."""
    if not _HELD:
        _HELD[:] = [lazy_libs.requests, lazy_libs.tqdm, 0]
        if downloads_off():

            def refused() -> Any:
                raise _Refused

            lazy_libs.requests = refused
        if not shows_bars():  # ir_datasets' own bars: on a terminal only
            quiet = types.SimpleNamespace(tqdm=functools.partial(_HELD[1]().tqdm, disable=True))
            lazy_libs.tqdm = lambda: quiet
    _HELD[2] += 1
    try:
        yield
    finally:
        _HELD[2] -= 1
        if _HELD[2] == 0:
            lazy_libs.requests, lazy_libs.tqdm = _HELD[:2]
            _HELD.clear()


def _home() -> str:
    """ir_datasets' cache folder (``IR_DATASETS_HOME``)."""
    from ir_datasets import util

    return str(util.home_path())


def _is_download_error(exc: Exception) -> bool:
    """An exception of the ``requests`` library (one mirror's failure, raised as it was)."""
    return type(exc).__module__.split(".")[0] in ("requests", "urllib3")


@contextlib.contextmanager
def _logged_failures() -> Iterator[list[str]]:
    """ir_datasets' "Download failed: ..." warnings (one per mirror tried), kept from the log to be said in
    rankscope's one line instead."""
    failures: list[str] = []

    def keep(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith("Download failed: "):
            failures.append(message.removeprefix("Download failed: "))
            return False
        return True

    logger = logging.getLogger("ir_datasets")
    logger.addFilter(keep)
    try:
        yield failures
    finally:
        logger.removeFilter(keep)


def _documents(name: str, found: Any, mapping: Columns) -> Iterator[tuple[str, str, str]]:
    """The documents of ``found`` as ``(doc_id, title, text)`` (the fields checked before the first is read;
    the bar counts up to ir_datasets' own count when it knows one)."""
    read = _readers(name, found.docs_cls(), _ROLES["corpus"], mapping, "documents")
    records = _records(name, found.docs_iter(), "doc_id", read, "documents", _count(found))
    return cast("Iterator[tuple[str, str, str]]", records)


def _count(found: Any) -> int | None:
    """ir_datasets' count of the documents, None when it has none yet (a document store not built)."""
    try:
        count = found.docs_count()
    except NotImplementedError:  # a handler of one's own need not count
        return None
    return count if isinstance(count, int) else None


def _found(name: str, parts: tuple[str, ...], why: str) -> Any:
    """The ir_datasets dataset ``name``, refused in one line when unknown or lacking one of ``parts``."""
    ir_datasets = require_extra("ir_datasets", "irds", f"irds:{name}")
    try:
        found = ir_datasets.load(name)
    except KeyError:
        raise DatasetNotFoundError(
            f"irds:{name}: ir_datasets knows no dataset {name!r} (its catalogue: `ir_datasets list`; your own: "
            "ir_datasets.registry.register)"
        ) from None
    missing = [part for part in parts if not getattr(found, f"has_{part}")()]
    if missing:
        raise DatasetNotFoundError(f"irds:{name} has no {', no '.join(missing)}: {why}")
    return found


def _check_columns(name: str, columns: Mapping[str, Columns]) -> None:
    for kind, mapping in columns.items():
        allowed = _ROLES.get(kind)
        unknown = [role for role in mapping if allowed is None or role not in allowed]
        if unknown:
            raise SchemaError(
                f"irds:{name}: columns {kind}.{unknown[0]} is not a field rankscope takes; it takes "
                "corpus.title, corpus.text and queries.text (each naming a field of the ir_datasets type)"
            )


def _readers(name: str, kind: type, roles: tuple[str, ...], mapping: Columns, what: str) -> list[Callable[[Any], str]]:
    """How each role's text is read from a record of type ``kind`` (ir_datasets' ``docs_cls()``, ``queries_cls()``)."""
    return [_reader(name, kind, role, mapping.get(role), what) for role in roles]


def _records(
    name: str,
    records: Iterable[Any],
    id_field: str,
    readers: list[Callable[[Any], str]],
    what: str,
    total: int | None = None,
) -> Iterator[tuple[str, ...]]:
    """One tuple per record, as it is read: its id and each role's text."""
    unit = what[:-1] if what.endswith("s") else what
    for record in progress(records, desc=f"irds:{name} {what}", total=total, unit=unit):
        yield (str(getattr(record, id_field)), *(read(record) for read in readers))


def _reader(name: str, kind: type, role: str, field: str | None, what: str) -> Callable[[Any], str]:
    """How one role's text is read from a record of type ``kind``: the named field, else the defaults."""
    fields = tuple(getattr(kind, "_fields", ()))
    if field is not None:
        if field not in fields:
            raise SchemaError(
                f"irds:{name}: its {what} ({kind.__name__}) have no field {field!r}; they have {', '.join(fields)}"
            )
        return lambda record: _text(getattr(record, field))
    if role in fields:
        return lambda record: _text(getattr(record, role))
    if role == "title":
        return lambda record: ""
    if callable(getattr(kind, "default_text", None)):
        return lambda record: _text(record.default_text())
    raise SchemaError(
        f"irds:{name}: its {what} ({kind.__name__}) have no field 'text' and no default_text(); name one of "
        f"{', '.join(fields)} with columns={{{'corpus' if what == 'documents' else 'queries'!r}: {{'text': FIELD}}}}"
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)
