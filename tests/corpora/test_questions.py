"""One questions file, one reading (issue 42 item 3): ``collection init --queries``, ``rag --answers``,
``search --queries`` and a BEIR ``queries.jsonl`` (what ``judge --dataset`` loads) take the same fields
and refuse a bad file with the same error, file and line."""

from __future__ import annotations

import json
import pydoc
from collections.abc import Callable
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError, RankscopeError
from rankscope.corpora.beir import read_beir_queries
from rankscope.corpora.qa_files import read_questions
from rankscope.corpora.questions import read_questions_file, read_questions_table
from rankscope.corpora.trec import read_trec_run
from rankscope.workflows.collection.queries import read_queries

MIXED = [  # the fields other tools write, one question each
    {"id": "json-1", "question": "How does json encode a float?", "answers": ["float"]},
    {"_id": "csv-2", "query": "Which dialect does csv use?", "answers": ["excel"]},
    {"query_id": 7, "text": "What does heapq push?", "answers": ["heappush"]},
    {"text": "How is textwrap used to fill a paragraph?", "answers": ["fill"]},
]
EXPECTED = [
    ("json-1", "How does json encode a float?"),
    ("csv-2", "Which dialect does csv use?"),
    ("7", "What does heapq push?"),
    ("q4", "How is textwrap used to fill a paragraph?"),
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _beir_folder(root: Path) -> Path:
    """A BEIR folder of the standard library's pydoc pages (read at test time), one document a module."""
    folder = root / "stdlib"
    (folder / "qrels").mkdir(parents=True)
    modules = ("json", "csv", "heapq", "textwrap")
    _write(folder / "corpus.jsonl", [{"_id": m, "text": pydoc.plain(pydoc.render_doc(m))} for m in modules])
    _write(folder / "queries.jsonl", [{"_id": "x", "text": "json"}])
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nx\tjson\t1\n")
    return folder


def test_every_reader_takes_the_same_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "questions.jsonl", MIXED)
    assert [(q.query_id, q.text) for q in read_questions_file(path)] == EXPECTED
    assert [(row["_id"], row["text"]) for row in read_queries(path)] == EXPECTED  # collection init
    answered = read_questions(path)  # rag --answers
    assert list(zip(answered["query_id"], answered["text"])) == EXPECTED
    assert list(answered["answers"]) == [("float",), ("excel",), ("heappush",), ("fill",)]
    run = tmp_path / "run.trec"
    argv = ["search", "--dataset", str(_beir_folder(tmp_path)), "--retriever", "bm25", "--queries", str(path)]
    assert main([*argv, "--out", str(run), "--k", "2"]) == 0
    assert sorted(set(read_trec_run(run)["query_id"])) == sorted(query_id for query_id, _ in EXPECTED)


def test_tables_and_lines_give_the_same_questions(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text('qid,question\njson-1,"How does json encode a float?"\n', encoding="utf-8")
    (tmp_path / "q.tsv").write_text("json-1\tHow does json encode a float?\n", encoding="utf-8")  # MS MARCO's
    (tmp_path / "q.txt").write_text("\nHow does json encode a float?\n", encoding="utf-8")
    read = {name: read_questions_table(tmp_path / name) for name in ("q.csv", "q.tsv", "q.txt")}
    assert [list(zip(frame["query_id"], frame["text"])) for frame in read.values()] == [
        [("json-1", "How does json encode a float?")],
        [("json-1", "How does json encode a float?")],
        [("q2", "How does json encode a float?")],
    ]


TREC = "; a TREC run or qrels line could not hold it"
BAD = {
    "id with a space": ({"_id": "a b", "text": "t"}, "line 2: query id 'a b' contains whitespace" + TREC),
    "id with a newline": ({"_id": "a\nb", "text": "t"}, "line 2: query id 'a\\nb' contains whitespace" + TREC),
    "empty id": ({"_id": "", "text": "t"}, "line 2: query id is empty"),
    "float id": ({"_id": 1.5, "text": "t"}, "line 2: field '_id' must be a string, found 1.5"),
    "number as text": ({"_id": "q", "text": 5}, "line 2: field 'text' must be a string, found 5"),
    "null text": ({"_id": "q", "text": None}, "line 2: field 'text' must be a string, found null"),
    "blank text": ({"_id": "q", "text": "  "}, "line 2: empty question"),
    "no text": (
        {"_id": "q"},
        "line 2: no question: expected a field 'text' or 'query' or 'question'; found ['_id', 'answers']",
    ),
    "repeated id": ({"_id": "q0", "text": "t"}, "line 2: duplicate query id 'q0' (first at line 1)"),
}
READERS: dict[str, Callable[[Path], object]] = {
    "questions": read_questions_file,
    "collection init": read_queries,
    "rag --answers": read_questions,
    "beir (judge --dataset)": read_beir_queries,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_reader_refuses_a_bad_question_with_one_error(tmp_path: Path, name: str) -> None:
    bad, problem = BAD[name]
    path = _write(tmp_path / "q.jsonl", [{"_id": "q0", "text": "first", "answers": ["a"]}, {**bad, "answers": ["a"]}])
    errors = {}
    for reader, read in READERS.items():
        with pytest.raises(FormatError) as raised:
            read(path)
        errors[reader] = str(raised.value)
    assert set(errors.values()) == {f"{path}, line {problem.removeprefix('line ')}"}, errors


def test_cli_commands_print_the_same_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "q.jsonl", [{"id": "q0", "text": "first"}, {"id": "a b", "text": "second"}])
    folder = _beir_folder(tmp_path)
    commands = {
        "search": ["search", "--dataset", str(folder), "--retriever", "bm25", "--queries", str(path), "--out", "r"],
        "collection": ["collection", "init", str(tmp_path / "c"), "--docs", str(folder), "--queries", str(path)],
    }
    problem = f"{path}, line 2: query id 'a b' contains whitespace; a TREC run or qrels line could not hold it"
    for command, argv in commands.items():
        assert main(argv) == 2
        assert capsys.readouterr().err == f"rankscope {command}: error: {problem}\n"


def test_two_ids_in_one_line_are_ambiguous(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", [{"id": "a", "_id": "b", "text": "t"}])
    with pytest.raises(RankscopeError, match=r"q.jsonl, line 1: columns \['_id', 'id'\] could each be"):
        read_questions_file(path)


def test_a_folder_of_tables_reads_its_queries_the_same_way(tmp_path: Path) -> None:
    """A TREC-style folder (corpus, queries table, TREC qrels), what ``judge --dataset DIR`` loads."""
    from rankscope.corpora.load import load_dataset

    folder = tmp_path / "tables"
    folder.mkdir()
    modules = ("json", "csv", "heapq", "textwrap")
    _write(folder / "corpus.jsonl", [{"_id": m, "text": pydoc.plain(pydoc.render_doc(m))} for m in modules])
    _write(folder / "queries.jsonl", MIXED)
    (folder / "qrels").write_text("json-1 0 json 1\ncsv-2 0 csv 1\n7 0 heapq 1\nq4 0 textwrap 1\n")
    queries = load_dataset(str(folder)).queries
    assert list(zip(queries["query_id"], queries["text"])) == EXPECTED
    _write(folder / "queries.jsonl", [MIXED[0], {"id": "a b", "text": "t"}])
    with pytest.raises(FormatError) as raised:
        load_dataset(str(folder))
    assert str(raised.value) == f"{folder / 'queries.jsonl'}, line 2: query id 'a b' contains whitespace{TREC}"
