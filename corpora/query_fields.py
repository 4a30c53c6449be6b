"""A field of the queries file beside the id and the text, read when a command asks for it.

The loaders keep each query's id and text only (the schema's ``queries`` table), but a folder's
queries file may say more about each query: a TSV/CSV column, a JSONL field, a key of BEIR's
``metadata`` object. :class:`QueriesFile` records where a dataset's queries were read from; its
:meth:`~QueriesFile.column` reads one field of every query again, with the readers' own rules,
when a command groups queries by it (``--groups column:NAME``, issue 26). Read on request, not at
load: loading stays as fast as it was, and a file's other fields stay unchecked unless used.

``NAME`` is a column of a TSV/CSV file or a field of a JSON object; in JSON Lines, when no query
has a field of that exact name, ``a.b`` is the field ``b`` of the object ``a`` (``metadata.domain``).
A file whose queries have no such field, or a query of the dataset without a value (absent or
empty), is one :class:`~rankscope.core.errors.FormatError` naming the file (and the query's line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import FormatError

if TYPE_CHECKING:
    import pandas as pd

LAYOUTS = ("beir", "table")
"""``beir``: BEIR's queries.jsonl (``_id``, ``text``, optional ``metadata``); ``table``: a JSONL/CSV/TSV
table read by :func:`rankscope.corpora.tabular.read_table` with the queries' column mapping."""


@dataclass(frozen=True)
class QueriesFile:
    """Where a dataset's queries were read from: ``path``, its ``layout`` (:data:`LAYOUTS`) and, for a
    table, the ``--fields`` mapping of its queries' columns (how its ids are named)."""

    path: Path
    layout: str
    columns: Mapping[str, str] = field(default_factory=dict)

    def column(self, name: str, query_ids: Iterable[str]) -> pd.Series:
        """``name``'s value for each of ``query_ids`` as text (a series, index query id)."""
        import pandas as pd

        rows = self._rows()
        values = {query: _value(obj, name) for query, (_, obj) in rows.items()}
        if all(value is None for value in values.values()):
            raise FormatError(self.path, None, f"no query has a field {name!r}; fields found: {_fields(rows)}")
        wanted = list(query_ids)
        found: dict[str, str] = {}
        for query in wanted:
            line, obj = rows.get(query, (None, {}))
            value = values.get(query)
            if value is None or (isinstance(value, str) and not value.strip()):
                raise FormatError(self.path, line, f"query {query!r} has no value for {name!r}; every query needs one")
            found[query] = self._text(value, name, line)
        return pd.Series(found, name=name, dtype=object).rename_axis("query_id")

    def _rows(self) -> dict[str, tuple[int, dict[str, Any]]]:
        """Each query's (line, fields) by its id, as the dataset's reader read the file."""
        if self.layout == "beir":
            from rankscope.corpora.jsonl import read_jsonl, string_field

            return {string_field(self.path, n, obj, "_id"): (n, obj) for n, obj in read_jsonl(self.path)}
        from rankscope.corpora.tabular import table_records

        records, lines, mapping = table_records(self.path, "queries", self.columns)
        key = mapping["query_id"]
        return {str(obj[key]): (n, obj) for n, obj in zip(lines, records) if key in obj}

    def _text(self, value: Any, name: str, line: int | None) -> str:
        """The value as a group's label: text as written; a number as the table readers write it; in a
        BEIR file a string or an integer, as every JSON reader takes ids and texts."""
        from rankscope.corpora.jsonl import string_problem

        problem = string_problem(name, value) if self.layout == "beir" else None
        if problem is None and isinstance(value, (dict, list, bool)):
            problem = f"field {name!r} must be a string or a number, found a JSON {type(value).__name__}"
        if problem:
            raise FormatError(self.path, line, problem)
        return value.strip() if isinstance(value, str) else str(value)


def _value(obj: Mapping[str, Any], name: str) -> Any:
    """The field ``name`` of one query, else the dotted path ``a.b`` through nested objects, else None."""
    if name in obj:
        return obj[name]
    value: Any = obj
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _fields(rows: Mapping[str, tuple[int, Mapping[str, Any]]]) -> str:
    """Every field the queries have, nested objects' fields as ``a.b``, in the order first met."""
    names: dict[str, None] = {}
    for _, obj in rows.values():
        for key, value in obj.items():
            names[key] = None
            if isinstance(value, Mapping):
                names.update(dict.fromkeys(f"{key}.{inner}" for inner in value))
    return ", ".join(names) or "none"
