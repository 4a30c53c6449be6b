"""Run assembly and the shared input helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import SchemaError
from rankscope.corpora.schema import validate
from rankscope.retrieval.base import as_queries, check_k, document_texts, make_run, ordered_run, query_texts
from rankscope.retrieval.bm25 import BM25


def test_make_run_orders_by_score_then_doc_id_descending() -> None:
    run = make_run(
        ["q1", "q2", "q3"],
        [np.array(["d1", "d10", "d2", "d9"]), np.array([], dtype=object), np.array(["x"])],
        [np.array([1.0, 2.0, 2.0, 0.5]), np.array([]), np.array([3.0])],
    )
    # "d2" > "d10" in byte order, so d2 comes first among the 2.0 ties
    assert list(run["doc_id"]) == ["d2", "d10", "d1", "d9", "x"]
    assert list(run["query_id"]) == ["q1"] * 4 + ["q3"]
    assert list(run["rank"]) == [1, 2, 3, 4, 1]
    assert run["score"].dtype == np.float64 and run["rank"].dtype == np.int64


def test_ordered_input_is_kept_as_given_and_equals_the_sorted_result() -> None:
    rng = np.random.default_rng(5)
    ids = [np.array([f"d{i}" for i in rng.permutation(30)[:12]], dtype=object) for _ in range(4)]
    scores = [rng.integers(0, 4, size=12).astype(float) for _ in range(4)]
    sorted_run = make_run(["a", "b", "c", "d"], ids, scores)
    per_query = [sorted_run[sorted_run["query_id"] == q] for q in "abcd"]
    again = make_run(
        ["a", "b", "c", "d"],
        [g["doc_id"].to_numpy() for g in per_query],
        [g["score"].to_numpy() for g in per_query],
        ordered=True,
    )
    pd.testing.assert_frame_equal(again, sorted_run)


def test_ordered_rows_are_cut_by_their_counts_and_a_query_without_rows_is_skipped() -> None:
    run = ordered_run(
        ["a", "b", "c"], np.array([2, 0, 3]), np.array(["d3", "d1", "d2", "d9", "d1"], dtype=object), np.arange(5.0)
    )
    assert list(run["query_id"]) == ["a", "a", "c", "c", "c"]
    assert list(run["rank"]) == [1, 2, 1, 2, 3]
    assert list(run["doc_id"]) == ["d3", "d1", "d2", "d9", "d1"] and list(run["score"]) == [0, 1, 2, 3, 4]
    by_lists = make_run(
        ["a", "b", "c"],
        [np.array(["d3", "d1"]), np.array([]), np.array(["d2", "d9", "d1"])],
        [np.arange(2.0), np.array([]), np.arange(2.0, 5.0)],
        ordered=True,
    )
    pd.testing.assert_frame_equal(run, by_lists)


@pytest.mark.parametrize(
    "queries",
    [
        {"q1": "heat flow", "q2": "wing"},
        {"q1": "heat flow", 7: "wing"},  # an id not a str: the table's check writes it "7"
        ["heat flow", "wing"],
        ("heat flow", "wing"),
        "heat flow",
        {"q1": "heat", "q2": np.str_("wing")},  # a str subclass: checked as a table
    ],
)
def test_query_texts_of_plain_strings_equal_the_checked_table(queries: object) -> None:
    ids, texts = query_texts(queries)  # type: ignore[arg-type]
    table = validate(as_queries(queries), "queries")  # type: ignore[arg-type]
    assert (ids, texts) == (table["query_id"].tolist(), table["text"].tolist())
    assert [type(value) for value in ids + texts] == [type(value) for value in table.to_numpy().T.ravel()]


@pytest.mark.parametrize(
    ("queries", "expected"),
    [
        ("heat flow", (["1"], ["heat flow"])),  # one text: ids by as_queries' rule, no table
        ({"q1": "heat", 7: "wing"}, (["q1", "7"], ["heat", "wing"])),  # an id written with str, as as_queries does
        (("heat", "wing"), (["1", "2"], ["heat", "wing"])),
    ],
)
def test_query_texts_build_no_table_for_plain_text(queries: object, expected: object, monkeypatch) -> None:
    """The fast path and :func:`as_queries` share one rule for ids and texts, so whatever its ids, plain text
    is never made a table only to be checked."""
    import rankscope.corpora.schema

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a queries table was built and checked")

    monkeypatch.setattr(rankscope.corpora.schema, "validate", refused)
    assert query_texts(queries) == expected  # type: ignore[arg-type]


def test_query_texts_read_an_iterable_once() -> None:
    assert query_texts(text for text in ["heat", "wing"]) == (["1", "2"], ["heat", "wing"])  # type: ignore[arg-type]


@pytest.mark.parametrize("queries", [{"q1": "heat", "q2": None}, ["heat", None], {"q1": float("nan")}])
def test_query_texts_refuse_a_missing_text(queries: object) -> None:
    with pytest.raises(SchemaError, match="has a missing value at row"):
        query_texts(queries)  # type: ignore[arg-type]


def test_empty_run_has_the_schema() -> None:
    run = make_run(["q"], [np.array([], dtype=object)], [np.array([])])
    assert list(run.columns) == ["query_id", "doc_id", "score", "rank"] and len(run) == 0


def test_document_texts_joins_title_and_refuses_duplicate_ids() -> None:
    ids, texts = document_texts(pd.DataFrame({"doc_id": [1, 2], "title": ["T", ""], "text": ["body", "only"]}))
    assert ids == ["1", "2"] and texts == ["T\nbody", "only"]
    with pytest.raises(SchemaError, match=r"^corpus given to index\(\): duplicate doc_id '1'$"):
        document_texts(pd.DataFrame({"doc_id": ["1", "1"], "text": ["a", "b"]}))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10", 2**63])
def test_check_k_refuses_non_positive_integers(bad: object) -> None:
    """Up to 2**63-1, the C kernel's index type (2**63 was an OverflowError there)."""
    with pytest.raises(
        ValueError, match=r"^search: k=.* is not allowed; k must be an int in \[1, 9223372036854775807\]$"
    ):
        check_k(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("queries", "ids"),
    [
        ("wing flutter", ["1"]),
        (["wing flutter", "heat transfer"], ["1", "2"]),
        ({"q7": "wing flutter", "q2": "heat transfer"}, ["q7", "q2"]),
    ],
)
def test_search_takes_a_text_a_list_or_a_dict(queries, ids) -> None:
    corpus = pd.DataFrame(
        {"doc_id": ["a", "b", "c"], "title": "", "text": ["wing flutter tests", "heat transfer", "wing heat"]}
    )
    bm25 = BM25().index(corpus)
    texts = [queries] if isinstance(queries, str) else list(queries.values() if isinstance(queries, dict) else queries)
    expected = bm25.search(pd.DataFrame({"query_id": ids, "text": texts}), k=2)
    pd.testing.assert_frame_equal(bm25.search(queries, k=2), expected)
    assert expected["query_id"].unique().tolist() == ids
