"""Say when a default is weak (issue 29 item 11): the default dense model is the static model2vec one;
`rankscope retrievers dense`, compare's systems notes and composites holding it say so, and what to install
for a neural encoder (or that MiniLM is installed)."""

from __future__ import annotations

import importlib.util

import pytest

from rankscope.cli import main
from rankscope.retrieval.encoders import ST_EXTRA, static_model_note
from rankscope.retrieval.registry import make_retriever

MINILM_HERE = all(importlib.util.find_spec(n) is not None for n in ("sentence_transformers", "all_minilm_l6_v2"))


def test_the_note_names_the_model_and_the_way_to_a_neural_encoder() -> None:
    note = static_model_note()
    assert note.startswith("dense's default model2vec is a static model")
    assert "0.143" in note and "0.384" in note  # the measured gap (docs/dense-retrieval-results.md)
    if MINILM_HERE:
        assert "is installed here: dense:model=minilm uses it" in note
    else:
        assert ST_EXTRA in note and "dense:model=minilm" in note


@pytest.mark.parametrize(
    ("spec", "noted"),
    [
        ("dense", True),
        ("dense:model=minilm", False),
        ("bm25", False),
        ("hybrid", False),  # bm25 + w2v
        ("hybrid:retrievers=bm25+dense", True),
        ("rerank", True),  # reranked by the default dense
        ("rerank:by=tfidf", False),
    ],
)
def test_notes_follow_the_parts(spec: str, noted: bool) -> None:
    assert make_retriever(spec).notes() == ([static_model_note()] if noted else [])


def test_retrievers_dense_prints_the_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrievers", "dense"]) == 0
    assert f"  note: {static_model_note()}" in capsys.readouterr().out
    assert main(["retrievers", "bm25"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_compare_notes_the_static_model_beside_its_numbers() -> None:
    pytest.importorskip("model2vec")
    from rankscope.workflows.compare import compare
    from tests.workflows.tiny_collection import DATA

    result = compare(DATA, ["bm25", "dense"], ["map"])
    assert result.systems.loc["dense", "notes"] == static_model_note()
    assert result.systems.loc["bm25", "notes"] == ""
    assert static_model_note()[:40] in result.to_text()
