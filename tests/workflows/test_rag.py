"""``rankscope rag`` on a hand-made collection whose budget numbers are worked out by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.dataset import Dataset
from rankscope.workflows.options import Execution
from rankscope.workflows.rag import Budgets, rag

# q1's evidence (grape) sits in the second half of an 8-word document: whole, the document needs
# 8 tokens of context; in 4-word chunks the chunk holding "grape" comes first and needs 4.
# q2's document has 3 words: 3 tokens either way.
DATA = Dataset.from_dicts(
    "fruit",
    corpus={
        "d1": "apple banana cherry date elderberry fig grape honeydew",
        "d2": "kiwi lemon mango",
        "d3": "nectarine orange papaya quince",
    },
    queries={"q1": "grape", "q2": "mango"},
    qrels={"q1": {"d1": 1}, "q2": {"d2": 1}},
)


def test_budgets_by_hand():
    result = rag(DATA, ["words:4"], ["bm25"], [5, 10], execution=Execution(test="t"))
    assert list(result.summary.index) == ["whole / bm25", "words:4:0 / bm25"]
    assert result.baseline == "whole / bm25"
    # whole: q1's 8-token document crosses a 5-token budget (left out), q2 fits
    assert result.summary.loc["whole / bm25", ["hit@5tok", "hit@10tok"]].tolist() == [0.5, 1.0]
    assert result.summary.loc["words:4:0 / bm25", ["hit@5tok", "hit@10tok"]].tolist() == [1.0, 1.0]
    tokens = result.tokens.set_index(["system", "query_id"])["tokens_to_first"]
    assert tokens[("whole / bm25", "q1")] == 8 and tokens[("words:4:0 / bm25", "q1")] == 4
    assert tokens[("whole / bm25", "q2")] == 3 and tokens[("words:4:0 / bm25", "q2")] == 3
    assert result.chunks.loc["words:4:0 / bm25", "chunks"] == 4  # 2 + 1 + 1
    # MaxP gives back the document ranking: the relevant document first for both queries
    assert result.summary["maxp ndcg@10"].tolist() == [1.0, 1.0]
    assert result.counter == "whitespace words"
    assert any("Within 5 tokens, words:4:0 / bm25" in f and "100%" in f and "50%" in f for f in result.findings)


def test_answers_are_the_evidence(tmp_path):
    pytest.importorskip("regex")
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"query_id": "a1", "text": "grape", "answers": ["Grape", "fig grape"]}) + "\n")
    result = rag(DATA, ["words:4"], ["bm25"], [4, 8], answers=path)
    # whole: d1 (8 tokens) holds both answers; chunks: d1#1 "elderberry fig grape honeydew" holds both
    assert result.summary.loc["whole / bm25"].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert result.summary.loc["words:4:0 / bm25"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert "maxp ndcg@10" not in result.summary.columns
    assert "answers of" in result.evidence


def test_refuses_bad_requests():
    with pytest.raises(RankscopeError, match="repeat"):
        rag(DATA, ["words:4", "words:4:0"], ["bm25"], [5])
    with pytest.raises(RankscopeError, match="positive whole numbers"):
        rag(DATA, ["words:4"], ["bm25"], [0])


@pytest.mark.slow
def test_cli_writes_the_report(tmp_path, capsys):
    folder = tmp_path / "fruit"
    (folder / "qrels").mkdir(parents=True)
    corpus = DATA.corpus
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in zip(corpus["doc_id"], corpus["text"]))
    )
    (folder / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "text": t}) + "\n" for q, t in zip(DATA.queries["query_id"], DATA.queries["text"])
        )
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    out = tmp_path / "out"
    args = ["rag", "--dataset", str(folder), "--chunking", "words:4", "sentences:3", "--budget", "5", "10"]
    code = main([*args, "--test", "t", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("token counts: whitespace words")
    summary = pd.read_csv(out / "summary.csv", index_col="system")
    assert summary.loc["words:4:0 / bm25", "hit@5tok"] == 1.0 and summary.loc["whole / bm25", "hit@5tok"] == 0.5
    for name in ("report.html", "report.md", "budget_curves.svg", "tokens_to_first.svg", "tokens.csv", "chunks.csv"):
        assert (out / name).stat().st_size > 0, name
    assert main(["rag", "--dataset", str(folder), "--chunking", "lines:3", "--quiet"]) == 2
    assert "unknown chunking 'lines:3'" in capsys.readouterr().err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("x")
    assert main(["rag", "--dataset", str(folder), "--out", str(tmp_path / "notes"), "--quiet"]) == 2
    assert "a folder of other files" in capsys.readouterr().err


def test_token_count_choice_is_reported():
    # the analyzer's \w\w+ pattern: same words here, so the numbers match the whitespace run
    result = rag(DATA, ["words:4"], ["bm25"], Budgets((5,), "analyzer"), execution=Execution(test="t"))
    assert result.counter == r"analyzer tokens (\w\w+)"
    assert result.to_text().startswith(r"token counts: analyzer tokens (\w\w+)")
    assert result.summary["hit@5tok"].tolist() == [0.5, 1.0]
