"""Question/answer JSONL and DPR/Pyserini retrieval-results files."""

from __future__ import annotations

import json

import pytest

from rankscope.core.errors import FormatError
from rankscope.corpora.qa_files import read_questions, read_retrieval_results


def test_questions_jsonl(tmp_path):
    path = tmp_path / "qa.jsonl"
    lines = [
        {"query_id": "q1", "text": "who?", "answers": ["Ann", "Anne"]},
        {"query_id": 7, "text": "when?", "answers": ["1984"]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    frame = read_questions(path)
    assert frame["query_id"].tolist() == ["q1", "7"]
    assert frame["answers"].tolist() == [("Ann", "Anne"), ("1984",)]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query_id": "q", "text": "t", "answers": [""]}', "line 2: empty answer ''"),
        ('{"query_id": "q", "text": "t", "answers": []}', "line 2: 'answers' must be a non-empty list"),
        ('{"query_id": "q", "text": "t", "answers": [3]}', "line 2: answer 3 is not a string"),
        ('{"query_id": "q", "text": "t"}', "line 2: missing field 'answers'"),
        ('{"query_id": "q0", "text": "t", "answers": ["a"]}', r"line 2: duplicate query id 'q0' \(first at line 1\)"),
    ],
)
def test_questions_jsonl_errors_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"query_id": "q0", "text": "t", "answers": ["a"]}\n' + line + "\n")
    with pytest.raises(FormatError, match=message):
        read_questions(path)


def test_dpr_results_list_order_is_the_ranking(tmp_path):
    pytest.importorskip("regex")
    from rankscope.corpora.answers import answer_qrels
    from rankscope.evaluation import evaluate

    data = [
        {
            "question": "who wrote it?",
            "answers": ["Orwell"],
            "ctxs": [
                {"id": "p9", "title": "A", "text": "a party", "score": "80.5", "has_answer": False},
                {"id": "p2", "title": "B", "text": "George Orwell wrote", "score": "80.5", "has_answer": True},
            ],
        },
        {
            "question": "what?",
            "answers": ["x"],
            "ctxs": [{"id": "p1", "title": "C", "text": "y", "score": 3, "has_answer": False}],
        },
    ]
    path = tmp_path / "dpr.json"
    path.write_text(json.dumps(data))
    results = read_retrieval_results(path)
    assert results.questions["query_id"].tolist() == ["0", "1"]
    assert results.run.values.tolist() == [["0", "p9", 2.0], ["0", "p2", 1.0], ["1", "p1", 1.0]]
    hits = evaluate(results.qrels, results.run, ["hit@1", "hit@2"]).mean
    assert hits == {"hit@1": 0.0, "hit@2": 0.5}  # top-1 accuracy 0/2, top-2 accuracy 1/2
    pairs = results.run.merge(results.passages, on="doc_id")[["query_id", "doc_id", "text"]]
    answers = dict(zip(results.questions["query_id"], results.questions["answers"]))
    recomputed = answer_qrels(pairs, answers).sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    stated = results.qrels.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    assert recomputed.equals(stated)


def test_pyserini_results_object(tmp_path):
    data = {"3": {"question": "q", "answers": ["a"], "contexts": [{"docid": "d1", "score": "1.0", "has_answer": True}]}}
    path = tmp_path / "pyserini.json"
    path.write_text(json.dumps(data))
    results = read_retrieval_results(path)
    assert results.qrels.values.tolist() == [["3", "d1", 1]]
    assert results.passages.empty


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"1": {"question": "q", "answers": ["a"]}}, "question '1': missing field 'contexts'"),
        ({"1": {"question": "q", "answers": ["a"], "contexts": [{"docid": "d"}]}}, "context 0: expected an object"),
        (
            {"1": {"question": "q", "answers": ["a"], "contexts": [{"docid": "d", "has_answer": "yes"}]}},
            "'has_answer' must be true or false",
        ),
        ("text", "expected a JSON list"),
    ],
)
def test_results_errors(tmp_path, data, message):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=message):
        read_retrieval_results(path)
