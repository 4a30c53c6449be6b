"""A field of the queries file (``--groups column:NAME``): read from a BEIR queries.jsonl (top-level or
under ``metadata``) and from a TSV table (with its --fields id mapping); a missing field, a query without
a value, or a value that is no label, is one line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.corpora import load_dataset
from rankscope.corpora.beir import write_beir
from rankscope.corpora.trec import write_trec_qrels
from rankscope.evaluation.groups import query_groups
from tests.workflows.tiny_collection import DATA

TOPICS = {"q1": "aero", "q2": "heat", "q3": "aero"}


def beir_folder(folder: Path, rows: dict[str, dict]) -> Path:
    """DATA as a BEIR folder whose queries.jsonl carries ``rows[query]``'s extra fields."""
    write_beir(DATA, folder)
    lines = [
        json.dumps({"_id": q, "text": t, **rows.get(q, {})})
        for q, t in zip(DATA.queries["query_id"], DATA.queries["text"])
    ]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_beir_field_and_a_metadata_key(tmp_path: Path) -> None:
    rows = {q: {"topic": topic, "metadata": {"year": 1960 + i}} for i, (q, topic) in enumerate(TOPICS.items())}
    data = load_dataset(beir_folder(tmp_path, rows))
    assert query_groups("column:topic", data.queries, data.queries_file).to_dict() == TOPICS
    years = query_groups("column:metadata.year", data.queries, data.queries_file)
    assert years.to_dict() == {"q1": "1960", "q2": "1961", "q3": "1962"}
    with pytest.raises(FormatError) as missing:
        query_groups("column:domain", data.queries, data.queries_file)
    assert str(missing.value) == (
        f"{tmp_path / 'queries.jsonl'}: no query has a field 'domain'; fields found: _id, text, topic, metadata, "
        "metadata.year"
    )


def test_a_query_without_a_value_or_with_a_list_names_its_line(tmp_path: Path) -> None:
    data = load_dataset(beir_folder(tmp_path, {"q1": {"topic": "aero"}, "q3": {"topic": " "}}))
    with pytest.raises(FormatError, match=r"queries.jsonl, line 2: query 'q2' has no value for 'topic'"):
        query_groups("column:topic", data.queries, data.queries_file)
    data = load_dataset(beir_folder(tmp_path, {q: {"topic": [t]} for q, t in TOPICS.items()}))
    with pytest.raises(FormatError, match=r"queries.jsonl, line 1: field 'topic' must be a string, found \[\"aero\"\]"):
        query_groups("column:topic", data.queries, data.queries_file)


def test_a_tsv_column_with_the_id_mapped(tmp_path: Path) -> None:
    pd.DataFrame({"doc_id": DATA.corpus["doc_id"], "text": DATA.corpus["text"]}).to_csv(
        tmp_path / "corpus.tsv", sep="\t", index=False
    )
    queries = pd.DataFrame({"qid": list(TOPICS), "text": DATA.queries["text"], "area": list(TOPICS.values())})
    queries.to_csv(tmp_path / "queries.tsv", sep="\t", index=False)
    write_trec_qrels(DATA.qrels, tmp_path / "qrels.txt")
    data = load_dataset(tmp_path, columns={"queries": {"query_id": "qid"}})
    assert query_groups("column:area", data.queries, data.queries_file).to_dict() == TOPICS
    with pytest.raises(FormatError, match=r"queries.tsv: no query has a field 'topic'; fields found: qid, text, area"):
        query_groups("column:topic", data.queries, data.queries_file)


def test_queries_read_from_no_table_have_no_column() -> None:
    with pytest.raises(RankscopeError, match="column:topic: these queries were not read from a JSONL/TSV/CSV"):
        query_groups("column:topic", DATA.queries, DATA.queries_file)
    with pytest.raises(RankscopeError, match="name the column"):
        query_groups("column:", DATA.queries, None)
