"""rankscope's tables are the same whether or not pyarrow is installed (corpora.schema.string_dtype).

pandas 3 stores inferred ``str`` columns in Arrow when pyarrow is importable (``mode.string_storage``
``auto``), which is what installing ``datasets`` changes. Here Arrow storage is forced, as a user with
pyarrow gets it, and every table rankscope makes must still be Python-object ``str`` with equal ids one
object (evaluation codes rows by object), and the numbers those of the same tables made without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import rankscope as rs
from rankscope.corpora.schema import as_strings, string_dtype, validate
from rankscope.evaluation.ranking import _code_objects
from tests.needs import needs

pytestmark = needs("pyarrow")


def arrow() -> object:
    """pandas' string storage set to Arrow for the block (what ``auto`` picks with pyarrow installed)."""
    return pd.option_context("mode.string_storage", "pyarrow")


def _one_object_per_id(column: pd.Series) -> bool:
    values = column.to_numpy(dtype=object)
    return all(len({id(v) for v in values[values == value]}) == 1 for value in set(values))


def test_forced_arrow_storage_is_what_a_user_with_pyarrow_gets() -> None:
    with arrow():
        assert pd.Series(["a"]).dtype.storage == "pyarrow"  # the setting the tables below must not follow


def test_tables_keep_python_storage_and_one_object_per_id_under_arrow(tmp_path: Path, data_dir: Path) -> None:
    run_file, qrels_file = tmp_path / "run", tmp_path / "qrels"
    run_file.write_text("".join(f"q{q} Q0 d{d} 1 {1 / (1 + d)} t\n" for q in range(3) for d in range(50)))
    qrels_file.write_text("".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(0, 80, 4)))
    plain = rs.evaluate(rs.read_trec_qrels(qrels_file), rs.read_trec_run(run_file), ["map", "ndcg@10"])
    with arrow():
        run, qrels = rs.read_trec_run(run_file), rs.read_trec_qrels(qrels_file)
        cisi = rs.load_dataset(data_dir / "cisi")
        searched = rs.make_retriever("bm25").index(cisi.corpus).search(cisi.queries.head(3), k=20)
        result = rs.evaluate(qrels, run, ["map", "ndcg@10"])
    tables = {"run": run, "qrels": qrels, "corpus": cisi.corpus, "queries": cisi.queries, "searched": searched}
    tables["per_query"] = result.per_query
    for name, table in tables.items():
        for column in table.columns:
            if table[column].dtype.kind not in "fiu":
                assert table[column].dtype == string_dtype(), (name, column)
    for column in ("query_id", "doc_id"):
        assert _one_object_per_id(run[column]) and _one_object_per_id(searched[column])
    assert _code_objects(run["doc_id"].to_numpy(dtype=object)) is not None  # the fast coding applies
    assert result.mean == plain.mean
    pd.testing.assert_frame_equal(result.per_query, plain.per_query)


def test_an_arrow_column_given_by_a_user_is_read_as_the_same_strings() -> None:
    with arrow():
        given = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": [7, 8, 7], "relevance": [1, 0, 2]})
        given["doc_id"] = given["doc_id"].astype(str)
        assert given["query_id"].dtype.storage == "pyarrow"
        checked = validate(given, "qrels")
    assert checked["query_id"].tolist() == ["q1", "q1", "q2"] and checked["doc_id"].tolist() == ["7", "8", "7"]
    assert checked["query_id"].dtype == string_dtype() and _one_object_per_id(checked["query_id"])
    assert as_strings(np.array([1, 2.5, "x"], dtype=object)).tolist() == ["1", "2.5", "x"]  # str() of each
