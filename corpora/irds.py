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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from rankscope.core.errors import DatasetNotFoundError, SchemaError
from rankscope.core.progress import progress
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.tabular import Columns

_ROLES = {"corpus": ("title", "text"), "queries": ("text",)}


def load_irds(name: str, split: str | None = None, columns: Mapping[str, Columns] | None = None) -> Dataset:
    """The ir_datasets collection ``name`` (docs, queries and qrels) as a Dataset (see the module doc)."""
    if split is not None:
        raise DatasetNotFoundError(
            f"irds:{name}: ir_datasets names its splits in the dataset name (irds:beir/scifact/test), not with a split"
        )
    _check_columns(name, columns or {})
    try:
        import ir_datasets
    except ImportError:
        raise DatasetNotFoundError(f"irds:{name} needs ir_datasets: pip install 'rankscope[irds]'") from None
    try:
        found = ir_datasets.load(name)
    except KeyError:
        raise DatasetNotFoundError(
            f"irds:{name}: ir_datasets knows no dataset {name!r} (its catalogue: `ir_datasets list`; your own: "
            "ir_datasets.registry.register)"
        ) from None
    parts = [part for part in ("docs", "queries", "qrels") if not getattr(found, f"has_{part}")()]
    if parts:
        raise DatasetNotFoundError(f"irds:{name} has no {', no '.join(parts)}: a test collection needs all three")
    given = columns or {}
    corpus = _table(name, found.docs_iter(), "doc_id", _ROLES["corpus"], given.get("corpus", {}), "documents")
    queries = _table(name, found.queries_iter(), "query_id", _ROLES["queries"], given.get("queries", {}), "queries")
    qrels = pd.DataFrame(
        [(str(q.query_id), str(q.doc_id), int(q.relevance)) for q in found.qrels_iter()],
        columns=["query_id", "doc_id", "relevance"],
    )
    return Dataset(name=f"irds:{name}", corpus=corpus, queries=queries[["query_id", "text"]], qrels=qrels)


def _check_columns(name: str, columns: Mapping[str, Columns]) -> None:
    for kind, mapping in columns.items():
        allowed = _ROLES.get(kind)
        unknown = [role for role in mapping if allowed is None or role not in allowed]
        if unknown:
            raise SchemaError(
                f"irds:{name}: columns {kind}.{unknown[0]} is not a field rankscope takes; it takes "
                "corpus.title, corpus.text and queries.text (each naming a field of the ir_datasets type)"
            )


def _table(
    name: str, records: Iterable[Any], id_field: str, roles: tuple[str, ...], mapping: Columns, what: str
) -> pd.DataFrame:
    """One row per record: its id and each role's text, read by :func:`_reader`."""
    rows: list[tuple[str, ...]] = []
    readers: list[Callable[[Any], str]] | None = None
    for record in progress(records, desc=f"irds:{name} {what}", unit=what[:-1] if what.endswith("s") else what):
        if readers is None:
            readers = [_reader(name, type(record), role, mapping.get(role), what) for role in roles]
        rows.append((str(getattr(record, id_field)), *(read(record) for read in readers)))
    return pd.DataFrame(rows, columns=[id_field, *roles])


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
