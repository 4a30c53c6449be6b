"""The format table (rankscope.corpora.formats): every row writes files its own sniff recognises and its
reader reads back to the same table; sniffing keeps the order the old suffix ladder had; docs and --help
list the rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError
from rankscope.corpora.foreign import read_qrels, read_run
from rankscope.corpora.formats import FORMATS, columns_help, formats, sniff, write_file
from rankscope.corpora.schema import sort_run
from tests.evaluation.trec_reference import random_case

DOCS = Path(__file__).resolve().parents[2] / "docs" / "corpora.md"


def _rows(kind: str) -> list[str]:
    return [f.name for f in formats(kind)]


@pytest.mark.parametrize(
    ("row", "gz"),
    [(row, gz) for row in FORMATS for gz in (False, True) if not (gz and row.name == "parquet")],  # Parquet: not .gz
    ids=lambda value: f"{value.kind}-{value.name}" if hasattr(value, "kind") else ("gz" if value else "plain"),
)
def test_each_format_reads_back_what_it_writes(row, gz: bool, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_case(3)
    table = run if row.kind == "run" else qrels
    path = tmp_path / (row.example + (".gz" if gz else ""))
    write_file(table, path, row.kind, row.name)
    assert sniff(path, row.kind) is row
    back = (read_run if row.kind == "run" else read_qrels)(path)
    if row.kind == "qrels":
        pd.testing.assert_frame_equal(back.reset_index(drop=True), qrels.reset_index(drop=True))
        return
    expected = sort_run(run)
    if row.name == "msmarco":  # no scores in the format: the order and ranks survive, the score is minus the rank
        expected = expected.assign(score=-expected["rank"].astype(np.float64))
    pd.testing.assert_frame_equal(back.reset_index(drop=True), expected.reset_index(drop=True))


@pytest.mark.parametrize(
    ("name", "first_line", "mapped", "kind", "expected"),
    [
        ("run.tsv", "q1 Q0 d1 1 2.5 tag", False, "run", "trec"),  # TREC-shaped .tsv
        ("run.tsv", "q1\td1\t1", False, "run", "msmarco"),
        ("run.tsv", "query_id\tdoc_id\tscore", False, "run", "tsv"),
        ("run.tsv", "q1 Q0 d1 1 2.5 tag", True, "run", "tsv"),  # mapped: a table whatever its shape
        ("run.csv", "q1 Q0 d1 1 2.5 tag", False, "run", "csv"),  # the suffix decides first
        ("run.txt", "query_id doc_id score", False, "run", "trec"),  # TREC's reader then names the line
        ("qrels.txt", "query-id\tcorpus-id\tscore", False, "qrels", "beir"),  # BEIR by its header, any suffix
        ("qrels.tsv", "query-id\tcorpus-id\tscore", False, "qrels", "beir"),
        ("qrels.tsv", "q1 0 d1 1", False, "qrels", "trec"),
        ("qrels.tsv", "query_id\tdoc_id\trelevance", False, "qrels", "tsv"),
        ("qrels.jsonl", "query-id\tcorpus-id\tscore", False, "qrels", "jsonl"),
    ],
)
def test_sniffing_keeps_the_ladders_order(  # type: ignore[no-untyped-def]
    name, first_line, mapped, kind, expected, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_text(f"\n{first_line}\nmore\n")
    found = sniff(path, kind, {"query_id": "query_id"} if mapped else None)
    assert (found.kind, found.name) == (kind, expected)


def test_a_fixed_field_format_refuses_a_column_mapping(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(FormatError, match="is BEIR qrels file, whose fields are fixed"):
        read_qrels(path, {"query_id": "qid"})


def test_writing_an_unknown_format_names_the_known_ones(tmp_path: Path) -> None:
    qrels, _ = random_case(1)
    with pytest.raises(ValueError, match="unknown qrels format 'msmarco'; known: parquet, jsonl, csv, tsv, beir, trec"):
        write_file(qrels, tmp_path / "q.tsv", "qrels", "msmarco")


def test_docs_list_every_format_of_the_table() -> None:
    """docs/corpora.md's format table has one line per row of FORMATS, in order, and no other row."""
    text = DOCS.read_text()
    rows = [f"| `{f.name}` | {f.kind} | {f.fields} | `{f.example}` |" for f in FORMATS]
    assert "| name | kind | fields | example file |\n|---|---|---|---|\n" + "\n".join(rows) + "\n\n" in text
    for kind in ("run", "qrels"):
        assert f"{kind}: `{columns_help(kind)}`" in text


def test_evaluate_help_lists_every_format(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind in ("run", "qrels"):
        for name in _rows(kind):
            assert f"{name}: " in text
