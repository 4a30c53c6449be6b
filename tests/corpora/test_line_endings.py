"""Files saved with old Mac line endings (a lone carriage return) read as with ``\\n`` and ``\\r\\n``, in every
reader, and a lone ``\\r`` inside a line is a line break, never part of an id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.fileio import read_lines
from rankscope.corpora.beir import read_beir_corpus, read_beir_qrels
from rankscope.corpora.interactions import read_interactions
from rankscope.corpora.smart import read_cranfield_qrels
from rankscope.corpora.tabular import read_table
from rankscope.corpora.trec import read_trec_qrels, read_trec_run

CASES: dict[str, tuple[str, str, Callable[[Path], object]]] = {
    "trec run": ("run.trec", "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 0.5 t\n", read_trec_run),
    "trec qrels": ("q.qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", read_trec_qrels),
    "beir corpus": (
        "corpus.jsonl",
        '{"_id": "d1", "title": "t", "text": "a"}\n{"_id": "d2", "text": "b"}\n',
        read_beir_corpus,
    ),
    "beir qrels": ("test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\n", read_beir_qrels),
    "tsv table": ("corpus.tsv", "doc_id\ttext\nd1\tone\nd2\ttwo\n", lambda p: read_table(p, "corpus")),
    "cranfield qrels": ("cranqrel", "1 184 2\n1 29 2\n2 12 3\n", read_cranfield_qrels),
    "interactions": ("ratings.tsv", "u1\ti1\t5\t10\nu1\ti2\t3\t11\nu2\ti1\t4\t12\n", read_interactions),
}


def _as_frame(value: object) -> pd.DataFrame:
    return (
        value
        if isinstance(value, pd.DataFrame)
        else pd.DataFrame([vars(v) if hasattr(v, "__dict__") else v for v in value])
    )


@pytest.mark.parametrize("case", CASES)
def test_lone_carriage_returns_read_like_newlines(case: str, tmp_path: Path) -> None:
    name, text, read = CASES[case]
    results = []
    for ending in ("\n", "\r\n", "\r"):
        folder = tmp_path / repr(ending).strip("'").replace("\\", "")
        folder.mkdir()
        path = folder / name
        path.write_bytes(text.replace("\n", ending).encode())
        results.append(_as_frame(read(path)))
    assert len(results[0]) == text.count("\n") - text.startswith(("query-id", "doc_id"))
    for other in results[1:]:
        pd.testing.assert_frame_equal(other, results[0])
    for column in results[0].columns:
        if results[0][column].dtype == object:
            assert not results[2][column].astype(str).str.contains("\r").any()


def test_read_lines_treats_a_lone_carriage_return_as_a_line_break(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"a\rb\r\nc\nd\r")
    assert read_lines(path) == ["a", "b", "c", "d"]
