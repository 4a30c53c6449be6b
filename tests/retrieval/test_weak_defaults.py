"""Say when a default is weak (issue 29 item 11, issue 32 item 3): the default dense model is the best one
installed (``model=auto``: MiniLM with the st extra, else the static model2vec); a run on the static model,
in `rankscope retrievers dense`, compare's systems notes and composites holding it, says so and what to
install for a neural encoder (or that MiniLM is installed); a model that cuts long texts says how many."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.retrieval import encoders
from rankscope.retrieval.dense import DenseRetriever
from rankscope.retrieval.encoders import ST_EXTRA, static_model_note, truncation_note
from rankscope.retrieval.registry import make_retriever

MINILM_HERE = all(
    importlib.util.find_spec(n) is not None for n in ("torch", "sentence_transformers", "all_minilm_l6_v2")
)


@pytest.fixture
def without_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the st extra (CI's)."""
    monkeypatch.setattr(encoders, "minilm_installed", lambda: False)


def test_the_note_names_the_model_and_the_way_to_a_neural_encoder() -> None:
    note, auto = static_model_note(), static_model_note(auto=True)
    assert note.startswith("dense:model=model2vec is a static model")
    assert auto.startswith("dense's default (model=auto) is the static model2vec here, as all-MiniLM-L6-v2 is not")
    for text in (note, auto):
        assert "0.143" in text and "0.384" in text  # the measured gap (docs/dense-retrieval-results.md)
        if MINILM_HERE:
            assert "is installed here: dense:model=minilm uses it" in text
        else:
            assert ST_EXTRA in text and "dense:model=minilm" in text


@pytest.mark.parametrize(
    ("spec", "noted"),
    [
        ("dense", "auto"),
        ("dense:model=model2vec", "static"),
        ("dense:model=minilm", None),
        ("bm25", None),
        ("hybrid", None),  # bm25 + w2v
        ("hybrid:retrievers=bm25+dense", "auto"),
        ("rerank", "auto"),  # reranked by the default dense
        ("rerank:by=tfidf", None),
    ],
)
def test_notes_follow_the_parts(spec: str, noted: str | None, without_minilm: None) -> None:
    expected = {"auto": [static_model_note(auto=True)], "static": [static_model_note()], None: []}[noted]
    assert make_retriever(spec).notes() == expected


def test_auto_is_minilm_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoders, "minilm_installed", lambda: True)
    dense = make_retriever("dense")
    assert dense.get_params()["model"] == "auto" and dense.effective_params()["model"] == "minilm"
    assert dense.notes() == [] and make_retriever("rerank").notes() == []
    assert make_retriever("dense:model=model2vec").notes() == [static_model_note()]
    monkeypatch.setattr(encoders, "minilm_installed", lambda: False)
    assert make_retriever("dense").effective_params()["model"] == "model2vec"


def test_retrievers_dense_prints_the_note(capsys: pytest.CaptureFixture[str], without_minilm: None) -> None:
    assert main(["retrievers", "dense"]) == 0
    assert f"  note: {static_model_note(auto=True)}" in capsys.readouterr().out
    assert main(["retrievers", "bm25"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_compare_notes_the_static_model_beside_its_numbers(without_minilm: None) -> None:
    pytest.importorskip("model2vec")
    from rankscope.workflows.compare import compare
    from tests.workflows.tiny_collection import DATA

    result = compare(DATA, ["bm25", "dense"], ["map"])
    assert result.systems.loc["dense", "notes"] == static_model_note(auto=True)
    assert result.systems.loc["bm25", "notes"] == ""
    assert static_model_note(auto=True)[:40] in result.to_text()


class CuttingEncoder:
    """A toy encoder that reads the first ``max_length`` characters, records its batches, and counts cut texts."""

    identity = None
    similarity = "dot"
    max_length = 12

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.array([[min(len(t), self.max_length), sum(map(ord, t)) % 97] for t in texts], dtype=float)

    def truncated(self, texts: list[str]) -> int:
        return sum(len(t) > self.max_length for t in texts)


def test_texts_are_encoded_longest_first_and_come_back_in_order() -> None:
    """Batches hold texts of similar length (a transformer pads a batch to its longest); each document
    still gets its own vector, and the documents the model cut are counted in the notes."""
    texts = ["a", "bbbbbbbbbbbbbbbbbbbb", "cc", "dddddddddddddd", "eee", "ffffffffffffff ff", "g g", "hhhh"]
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(texts))], "title": "", "text": texts})
    encoder = CuttingEncoder()
    dense = DenseRetriever(model=encoder, batch_size=3, cache=False).index(corpus)
    seen = [len(t) for batch in encoder.batches for t in batch]
    assert seen == sorted(seen, reverse=True) and [len(b) for b in encoder.batches] == [3, 3, 2]
    expected = CuttingEncoder().encode(texts)  # without a title, the text every retriever indexes is the body
    np.testing.assert_array_equal(dense.doc_vectors_, expected.astype(np.float32))
    assert dense.notes() == [truncation_note(3, 8, 12)]  # 20, 14 and 17 characters > 12


def test_a_saved_auto_index_keeps_the_encoder_it_used(
    tmp_path, monkeypatch: pytest.MonkeyPatch, without_minilm: None
) -> None:
    """Indexed where auto meant model2vec, loaded where it would mean MiniLM: queries are still encoded by
    model2vec, so the loaded index searches as the saved one did."""
    pytest.importorskip("model2vec")
    from tests.workflows.tiny_collection import small_dataset

    data = small_dataset()
    dense = make_retriever("dense").index(data.corpus)
    dense.save(tmp_path / "idx")
    monkeypatch.setattr(encoders, "minilm_installed", lambda: True)
    loaded = DenseRetriever.load(tmp_path / "idx")
    assert loaded.get_params() == dense.get_params() and loaded.get_params()["model"] == "auto"
    pd.testing.assert_frame_equal(loaded.search(data.queries, k=5), dense.search(data.queries, k=5))
