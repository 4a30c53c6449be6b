"""A table validated before is validated again at the cost of a column selection: the same frame (values,
types, index, columns) as validating it column by column, and the same error for every table that is not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import SchemaError
from rankscope.corpora import schema
from rankscope.corpora.schema import validate


def outcome(function, frame: pd.DataFrame, kind: str) -> pd.DataFrame | str:
    try:
        return function(frame, kind, "t")
    except (SchemaError, ValueError) as error:  # a duplicated column is pandas' ValueError, as it was
        return f"{type(error).__name__}: {error}"


def assert_same(fast: pd.DataFrame | str, slow: pd.DataFrame | str) -> None:
    if isinstance(slow, str):
        assert fast == slow
        return
    pd.testing.assert_frame_equal(fast, slow, check_index_type=True, check_column_type=True, check_exact=True)
    assert fast.columns.name is None and fast.attrs == {} and list(fast.columns) == list(slow.columns)
    assert [str(t) for t in fast.dtypes] == [str(t) for t in slow.dtypes]


def variants(kind: str, rng: np.random.Generator) -> list[pd.DataFrame]:
    """A validated table of ``kind`` and tables that differ from one in one way each."""
    n = 30
    ids = [f"x{i % 7}" for i in range(n)]
    columns = {
        "query_id": ids,
        "doc_id": [f"d{i}" for i in range(n)],
        "title": ["a title"] * n,
        "text": [f"text {i}" for i in range(n)],
        "relevance": rng.integers(-1, 3, n),
        "score": rng.normal(size=n),
        "rank": np.arange(1, n + 1),
    }
    normal = validate(pd.DataFrame({c: columns[c] for c in schema.KINDS[kind]}), kind)
    first = schema.KINDS[kind][0]
    number = "score" if kind == "run" else ("relevance" if kind == "qrels" else None)
    out = [
        normal,
        normal.assign(extra=1),  # a column more
        normal[list(reversed(normal.columns))],  # another order
        normal.iloc[::-1],  # an index not 0..n-1
        normal.set_axis(range(5, 5 + n)),
        normal.rename_axis("row"),  # a named index
        normal.rename_axis(columns="what"),  # named columns
        normal.astype({first: object}),  # ids as objects
        normal.assign(**{first: [7] * n}),  # ids as numbers
        normal.assign(**{first: [None] + list(normal[first][1:])}),  # a missing id
        normal.assign(**{first: normal[first].where(normal.index != 2)}),  # a missing id of the same type
        normal.assign(**{first: pd.array(list(normal[first]), dtype="string[python]")}),  # pandas' NA string type
        normal.iloc[:0],  # no rows
    ]
    with_attrs = normal.copy()
    with_attrs.attrs["source"] = "somewhere"
    out.append(with_attrs)
    if kind == "run":
        out += [
            normal.assign(rank=normal["rank"].astype(np.int32)),
            normal.assign(rank=normal["rank"].astype(float)),
            normal.drop(columns="rank"),
        ]
    if number is not None:
        values = normal[number].astype(float)
        out += [
            normal.assign(**{number: values.where(values.index != 3, np.nan)}),
            normal.assign(**{number: values.where(values.index != 4, np.inf)}),
            normal.assign(**{number: values.astype(np.float32)}),
            normal.assign(**{number: values.astype(str)}),
        ]
    if kind == "corpus":
        out += [normal.drop(columns="title"), normal.assign(title=[None] * n)]
    duplicated = pd.concat([normal, normal[[first]]], axis=1)
    return [*out, duplicated]


@pytest.mark.parametrize("kind", sorted(schema.KINDS))
def test_an_already_validated_table_gives_what_validation_column_by_column_gives(kind: str) -> None:
    rng = np.random.default_rng(5)
    shortcuts = 0
    for frame in variants(kind, rng):
        before = frame.copy()
        assert_same(outcome(validate, frame, kind), outcome(schema._validated, frame, kind))
        pd.testing.assert_frame_equal(frame, before)  # never modified
        shortcuts += schema._already_normal(frame, kind) is not None
    if isinstance(schema.string_dtype(), pd.StringDtype):  # the shortcut is taken for the normal ones only
        assert shortcuts == 7  # validated; a column more; another order; three other indexes; no rows


def test_a_table_validated_by_the_shortcut_is_a_new_frame() -> None:
    frame = validate(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), "qrels")
    again = validate(frame, "qrels")
    again.loc[0, "relevance"] = 5
    assert frame.loc[0, "relevance"] == 1 and again is not frame
