"""Every refusal of a repeated key, across the packages, in the one wording of core.errors.duplicate_message:
``<where>: duplicate <what> <key>`` (and ``(first at line N)`` when read from a file)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError, duplicate_message
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import read_trec_run, write_trec_run
from rankscope.evaluation import evaluate
from rankscope.evaluation.significance import align
from rankscope.retrieval.base import document_texts
from rankscope.retrieval.fusion import rrf

RUN = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 0.5]})
QRELS = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
CORPUS = pd.DataFrame({"doc_id": ["a", "a"], "text": ["x", "y"]})
QUERIES = pd.DataFrame({"query_id": ["q"], "text": ["t"]})


def test_the_wording() -> None:
    assert duplicate_message("doc_id", "a") == "duplicate doc_id 'a'"
    assert duplicate_message("query, document", ("q", "a"), 3) == "duplicate query, document 'q', 'a' (first at line 3)"


def _read_run(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 a 2 0.5 t\n")
    read_trec_run(path)


CASES = {
    "reading a run file": (
        _read_run,
        "r.trec, line 2: duplicate run entry for query, document 'q', 'a' (first at line 1)",
    ),
    "writing a run file": (
        lambda tmp: write_trec_run(RUN, tmp / "out.trec"),
        "run to write: duplicate query, document 'q', 'a'",
    ),
    "a Dataset's corpus": (
        lambda tmp: Dataset("d", CORPUS, QUERIES, QRELS),
        "dataset 'd' corpus: duplicate doc_id 'a'; 2 rows share a repeated doc_id",
    ),
    "a Dataset's qrels": (
        lambda tmp: Dataset("d", CORPUS.iloc[:1], QUERIES, pd.concat([QRELS, QRELS.assign(relevance=2)])),
        "dataset 'd' qrels: duplicate query_id, doc_id 'q', 'a' with grades [1, 2]; 2 rows share a repeated query_id, doc_id",
    ),
    "evaluate's run": (lambda tmp: evaluate(QRELS, RUN), "run: duplicate query, document 'q', 'a'"),
    "evaluate's qrels": (
        lambda tmp: evaluate(pd.concat([QRELS, QRELS]), RUN.iloc[:1]),
        "qrels: duplicate query, document 'q', 'a'",
    ),
    "fusion": (lambda tmp: rrf([RUN.iloc[:1], RUN]), "runs[1]: duplicate query, document 'q', 'a'"),
    "indexing": (lambda tmp: document_texts(CORPUS), "corpus given to index(): duplicate doc_id 'a'"),
    "significance": (
        lambda tmp: align({"x": pd.Series([1.0, 2.0], index=["q", "q"]), "y": pd.Series([1.0], index=["q"])}),
        "system 'x': duplicate query 'q'",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_every_duplicate_refusal_uses_the_wording(case: str, tmp_path: Path) -> None:
    action, message = CASES[case]
    with pytest.raises(RankscopeError) as caught:
        action(tmp_path)
    assert str(caught.value).endswith(message) and "duplicate " in str(caught.value)
    if not case.startswith("reading"):
        assert str(caught.value) == message
