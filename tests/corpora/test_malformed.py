"""Malformed input across formats: a clear error naming file and line, or a counted warning."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from rankscope.core.errors import FormatError
from rankscope.corpora import load_dataset
from rankscope.corpora.beir import read_beir
from rankscope.corpora.trec import read_trec_qrels, read_trec_run


def _beir(folder: Path, qrels_rows: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels_rows, encoding="utf-8")
    return folder


def test_judgments_of_unknown_documents_are_kept_and_counted(tmp_path: Path) -> None:
    ds = read_beir(_beir(tmp_path / "b", "q1\td1\t1\nq1\tgone\t1\nq2\tgone\t2\nq2\tlost\t0\n"))
    assert len(ds.qrels) == 4
    assert ds.warnings == ("3 judgment(s) name 2 document(s) not in the corpus (kept; e.g. ['gone', 'lost'])",)
    # q2's only relevant document is missing from the corpus: still a judged query, scored 0 by any system
    assert ds.judged_query_ids == ["q1", "q2"]


def test_truncated_gzip_names_the_file(tmp_path: Path) -> None:
    packed = gzip.compress(b"".join(b"q%d 0 d%d 1\n" % (i, i) for i in range(1000)))
    path = tmp_path / "qrels.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(FormatError) as info:
        read_trec_qrels(path)
    assert info.value.path == str(path) and "not a valid gzip file" in str(info.value)


def test_binary_garbage_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(b"q Q0 d 1 0.5 t\n\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(FormatError) as info:
        read_trec_run(path)
    assert info.value.line == 2


def test_tab_and_space_mixed_trec_lines_are_fine_but_a_missing_field_is_not(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_text("1\t0 d1\t 1\n  2 0 d2 0  \n", encoding="utf-8")
    assert read_trec_qrels(path).values.tolist() == [["1", "d1", 1], ["2", "d2", 0]]
    path.write_text("1 0 d1 1\n2 d2 0\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"line 2: expected 4 fields 'query_id iteration doc_id relevance'"):
        read_trec_qrels(path)


def test_trec_style_folder_with_bad_qrels_names_the_qrels_line(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"doc_id": "d1", "text": "a"}\n', encoding="utf-8")
    (tmp_path / "queries.tsv").write_text("query_id\ttext\nq1\ta\n", encoding="utf-8")
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 maybe\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_dataset(tmp_path)
    assert info.value.path == str(tmp_path / "qrels") and info.value.line == 2
    assert "relevance must be an integer, found 'maybe'" in str(info.value)
