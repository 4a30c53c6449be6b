"""Fuzz: NaN and infinite values in vectors, wherever they come from.

A NaN sorts arbitrarily in FAISS and an infinite score ties every document, so each gave a run
without an error. Precomputed ``docs.npy``/``queries.npy`` are refused when read, naming the file,
the row (with its document or query) and the value; an encoder's output at search time, a saved
index's document vectors and a cached entry likewise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.retrieval.dense import DenseRetriever
from rankscope.retrieval.registry import load_retriever

N_DOCS, DIM = 12, 5


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEIR folder and clean precomputed vectors in ``emb/``."""
    root = tmp_path_factory.mktemp("vectors")
    data = root / "data"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(N_DOCS))
    )
    (data / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": f"q {i}"}) + "\n" for i in range(3))
    )
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td1\t1\nq1\td2\t1\nq2\td3\t1\n")
    rng = np.random.default_rng(0)
    emb = root / "emb"
    emb.mkdir()
    np.save(emb / "docs.npy", rng.normal(size=(N_DOCS, DIM)))
    (emb / "docs.ids").write_text("".join(f"d{i}\n" for i in range(N_DOCS)))
    np.save(emb / "queries.npy", rng.normal(size=(3, DIM)))
    (emb / "queries.ids").write_text("q0\nq1\nq2\n")
    return root


def _search(root: Path, emb: Path, out: Path) -> list[str]:
    spec = f"dense:model=precomputed,embeddings={emb}"
    return ["search", "--dataset", str(root / "data"), "--retriever", spec, "--out", str(out)]


def _poisoned(root: Path, tmp_path: Path, part: str, change: Callable[[np.ndarray], np.ndarray]) -> Path:
    emb = tmp_path / "emb"
    emb.mkdir()
    for name in ("docs.npy", "docs.ids", "queries.npy", "queries.ids"):
        (emb / name).write_bytes((root / "emb" / name).read_bytes())
    np.save(emb / f"{part}.npy", change(np.load(emb / f"{part}.npy")))
    return emb


def _set(row: int, column: int, value: float, dtype: str = "float64") -> Callable[[np.ndarray], np.ndarray]:
    def change(matrix: np.ndarray) -> np.ndarray:
        changed = matrix.astype(dtype)
        changed[row, column] = value
        return changed

    return change


def _nan_row(row: int) -> Callable[[np.ndarray], np.ndarray]:
    def change(matrix: np.ndarray) -> np.ndarray:
        changed = matrix.copy()
        changed[row] = np.nan
        return changed

    return change


CASES = {
    "nan row in docs": ("docs", _nan_row(4), "docs.npy: row 4 (document 'd4') holds nan at column 0"),
    "inf in docs": ("docs", _set(7, 2, np.inf), "docs.npy: row 7 (document 'd7') holds inf at column 2"),
    "-inf in float32 docs": ("docs", _set(0, 4, -np.inf, "float32"), "row 0 (document 'd0') holds -inf at column 4"),
    "beyond float32 in docs": ("docs", _set(3, 1, 1e39), "docs.npy: row 3 (document 'd3') holds 1e+39 at column 1"),
    "nan row in queries": ("queries", _nan_row(1), "queries.npy: row 1 (query 'q1') holds nan at column 0"),
    "inf in queries": ("queries", _set(2, 3, np.inf), "queries.npy: row 2 (query 'q2') holds inf at column 3"),
    "complex docs": (
        "docs",
        lambda m: m.astype(np.complex128),
        "expected a 2-d matrix of real numbers, got complex128",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_poisoned_precomputed_vectors_are_refused_naming_file_row_and_value(
    collection: Path, tmp_path: Path, case: str
) -> None:
    part, change, fragment = CASES[case]
    emb = _poisoned(collection, tmp_path, part, change)
    outcome = run_cli(_search(collection, emb, tmp_path / "run.trec"))
    check(outcome, "error", fragment)
    assert not (tmp_path / "run.trec").exists()


def test_clean_vectors_still_search(collection: Path, tmp_path: Path) -> None:
    outcome = run_cli(_search(collection, collection / "emb", tmp_path / "run.trec"))
    check(outcome, "accepted")
    assert len((tmp_path / "run.trec").read_text().splitlines()) == 3 * N_DOCS


def _corpus() -> pd.DataFrame:
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(N_DOCS)], "text": [f"text {i}" for i in range(N_DOCS)]})


def _encoder(bad_text: str, value: float) -> Callable[[list[str]], np.ndarray]:
    """Vectors from the text's hash; ``bad_text`` gets ``value`` in column 1."""

    def encode(texts: list[str]) -> np.ndarray:
        rows = np.array([np.random.default_rng(abs(hash(t)) % 1000).normal(size=DIM) for t in texts])
        for i, text in enumerate(texts):
            if text == bad_text:
                rows[i, 1] = value
        return rows

    return encode


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_an_encoder_giving_a_query_nan_or_inf_at_search_time_names_the_query(value: float) -> None:
    retriever = DenseRetriever(model=_encoder("bad query", value), cache=False).index(_corpus())
    queries = pd.DataFrame({"query_id": ["fine", "broken"], "text": ["good query", "bad query"]})
    outcome = run_call(lambda: retriever.search(queries, k=3))
    check(outcome, "error", f"row 1 (query 'broken') holds {value!r} at column 1")


def test_an_encoder_giving_a_document_nan_names_the_document() -> None:
    outcome = run_call(lambda: DenseRetriever(model=_encoder("text 5", np.nan), cache=False).index(_corpus()))
    check(outcome, "error", "row 5 (document 'd5') holds nan at column 1")


def test_a_saved_index_with_a_nan_vector_is_refused_when_loaded(tmp_path: Path) -> None:
    retriever = DenseRetriever(model="model2vec", cache=False).index(_corpus())
    retriever.save(tmp_path / "idx")
    path = tmp_path / "idx" / "doc_vectors.npy"
    vectors = np.load(path)
    vectors[6, 0] = np.nan
    np.save(path, vectors)
    outcome = run_call(lambda: load_retriever(tmp_path / "idx"))
    check(outcome, "error", "doc_vectors.npy: row 6 (document 'd6') holds nan at column 0")


def test_a_cached_entry_with_inf_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    corpus = _corpus()
    DenseRetriever(model="model2vec").index(corpus)
    entries = list((tmp_path / "cache").rglob("*.npy"))
    assert [p.parent.name for p in entries] == ["embeddings"]
    vectors = np.load(entries[0])
    vectors[2, 3] = np.inf
    np.save(entries[0], vectors)
    outcome = run_call(lambda: DenseRetriever(model="model2vec").index(corpus))
    check(outcome, "error", "row 2 (document 'd2') holds inf at column 3: vectors must be finite numbers")
