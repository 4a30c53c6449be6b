"""Word2Vec + FAISS: pooling by hand on tiny vectors, exact search vs brute force, determinism, files."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankscope.core.errors import FormatError, NotFittedError  # noqa: E402
from rankscope.retrieval.dense_index import import_faiss  # noqa: E402
from rankscope.retrieval.pooling import first_component, l2_normalise, pool, remove_component, word_weights  # noqa: E402
from rankscope.retrieval.storage import IndexFormatError  # noqa: E402
from rankscope.retrieval.word2vec import EmptyQueryWarning, Word2VecRetriever, import_gensim_models  # noqa: E402
from tests.needs import needs
from tests.retrieval.vectors import word2vec_training_hash

pytestmark = needs("gensim", "faiss")

REPO = Path(__file__).resolve().parents[2]

# three words (aa, bb, cc) in two dimensions; counts 3, 2, 2 (7 tokens); df 1, 2, 2; N = 3 documents
A, B, C = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])
COUNTS = sp.csr_matrix(np.array([[3, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=np.float64))  # "aa aa aa bb", "bb cc", "cc"
VECTORS = np.vstack([A, B, C])


def _corpus(texts: list[str], ids: list[str] | None = None) -> pd.DataFrame:
    ids = ids or [f"d{i + 1}" for i in range(len(texts))]
    return pd.DataFrame({"doc_id": ids, "title": [""] * len(texts), "text": texts})


def _queries(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"query_id": [f"q{i + 1}" for i in range(len(texts))], "text": list(texts)})


def _write_vectors(path: Path, words: dict[str, np.ndarray]) -> Path:
    dim = len(next(iter(words.values())))
    lines = [f"{len(words)} {dim}"] + [f"{w} " + " ".join(repr(float(x)) for x in v) for w, v in words.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_word_weights_follow_the_definitions() -> None:
    term_counts, doc_freqs = np.array([3, 2, 2]), np.array([1, 2, 2])
    np.testing.assert_array_equal(word_weights("mean", term_counts, doc_freqs, 3, 7), [1, 1, 1])
    idf = word_weights("idf", term_counts, doc_freqs, 3, 7)
    np.testing.assert_allclose(idf, [math.log(4 / 2) + 1, math.log(4 / 3) + 1, math.log(4 / 3) + 1])
    sif = word_weights("sif", term_counts, doc_freqs, 3, 7)
    np.testing.assert_allclose(sif, [1e-3 / (1e-3 + 3 / 7), 1e-3 / (1e-3 + 2 / 7), 1e-3 / (1e-3 + 2 / 7)])
    with pytest.raises(ValueError, match="pooling must be one of"):
        word_weights("max", term_counts, doc_freqs, 3, 7)


def test_mean_and_idf_pooling_by_hand() -> None:
    mean = pool(COUNTS, VECTORS, np.ones(3), "mean")
    np.testing.assert_allclose(mean, [(3 * A + B) / 4, (B + C) / 2, C])
    wa, wb = math.log(2) + 1, math.log(4 / 3) + 1
    idf = pool(COUNTS, VECTORS, np.array([wa, wb, wb]), "idf")
    np.testing.assert_allclose(idf[0], (3 * wa * A + wb * B) / (3 * wa + wb))
    np.testing.assert_allclose(idf[1], (B + C) / 2)  # equal weights: the plain mean


def test_sif_pooling_divides_by_token_count_and_removes_the_component() -> None:
    wa, wb = 1e-3 / (1e-3 + 3 / 7), 1e-3 / (1e-3 + 2 / 7)
    sif = pool(COUNTS, VECTORS, np.array([wa, wb, wb]), "sif")
    np.testing.assert_allclose(sif, [(3 * wa * A + wb * B) / 4, (wb * B + wb * C) / 2, wb * C])
    # rows (2, 0) and (0, 1): singular values 2 and 1, first right singular vector (1, 0)
    np.testing.assert_allclose(first_component(np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])), [1.0, 0.0])
    np.testing.assert_allclose(first_component(np.array([[-2.0, 0.0], [0.0, 1.0]])), [1.0, 0.0])  # sign fixed
    np.testing.assert_allclose(remove_component(np.array([[3.0, 4.0]]), np.array([1.0, 0.0])), [[0.0, 4.0]])
    np.testing.assert_allclose(l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0.0, 0.0]])


def test_sif_retriever_removes_the_document_component_from_queries_too(tmp_path: Path) -> None:
    vectors = _write_vectors(tmp_path / "tiny.txt", {"aa": A, "bb": B, "cc": C})
    corpus = _corpus(["aa aa aa bb", "bb cc", "cc", "zzz"])
    retriever = Word2VecRetriever(pooling="sif", vectors=str(vectors), analyzer="plain").index(corpus)
    wa, wb = 1e-3 / (1e-3 + 3 / 8), 1e-3 / (1e-3 + 2 / 8)  # p(w) counts all 8 corpus tokens, "zzz" too
    docs = np.array([(3 * wa * A + wb * B) / 4, (wb * B + wb * C) / 2, wb * C])
    _, _, vt = np.linalg.svd(docs)
    u = vt[0] * np.sign(vt[0][np.argmax(np.abs(vt[0]))])
    np.testing.assert_allclose(retriever.component_, u, atol=1e-12)
    query = (wa * A + wb * C) / 2  # "aa cc"
    query = query - (query @ u) * u
    expected_docs = l2_normalise(docs - np.outer(docs @ u, u))
    expected = expected_docs @ (query / np.linalg.norm(query))
    np.testing.assert_allclose(retriever.score("aa cc", ["d1", "d2", "d3"]), expected, atol=1e-6)
    assert retriever.score("aa cc", ["d4"])[0] == 0.0  # no known word: not in the index, scores 0
    run = retriever.search(_queries("aa cc"))
    assert "d4" not in set(run["doc_id"]) and len(run) == 3


def _random_collection(tmp_path: Path, n_docs: int = 300, n_words: int = 60, dim: int = 16) -> tuple:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(n_words)]
    table = {w: rng.normal(size=dim) for w in words}
    path = _write_vectors(tmp_path / "random.txt", table)
    docs = [list(rng.choice(words, size=rng.integers(3, 20))) for _ in range(n_docs)]
    queries = [list(rng.choice(words, size=rng.integers(1, 5))) for _ in range(25)]
    return path, table, docs, queries


def _brute_force_mean(table: dict[str, np.ndarray], tokens: list[list[str]]) -> np.ndarray:
    pooled = np.array([np.mean([table[t] for t in toks], axis=0) for toks in tokens])
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_exact_search_equals_brute_force_cosine(tmp_path: Path) -> None:
    path, table, docs, queries = _random_collection(tmp_path)
    corpus = _corpus([" ".join(d) for d in docs])
    retriever = Word2VecRetriever(pooling="mean", vectors=str(path), analyzer="plain").index(corpus)
    run = retriever.search(_queries(*[" ".join(q) for q in queries]), k=10)
    similarity = _brute_force_mean(table, queries) @ _brute_force_mean(table, docs).T
    for qi in range(len(queries)):
        got = run[run["query_id"] == f"q{qi + 1}"]
        best = np.argsort(-similarity[qi], kind="stable")[:10]
        assert list(got["doc_id"]) == [f"d{i + 1}" for i in best]
        np.testing.assert_allclose(got["score"], similarity[qi][best], rtol=1e-5)


def test_hnsw_finds_nearly_the_same_neighbours_with_exact_scores(tmp_path: Path) -> None:
    path, _, docs, queries = _random_collection(tmp_path)
    corpus, query_frame = _corpus([" ".join(d) for d in docs]), _queries(*[" ".join(q) for q in queries])
    exact = Word2VecRetriever(pooling="mean", vectors=str(path), analyzer="plain").index(corpus)
    approx = Word2VecRetriever(pooling="mean", vectors=str(path), analyzer="plain", faiss_index="hnsw").index(corpus)
    exact_run, approx_run = exact.search(query_frame, k=10), approx.search(query_frame, k=10)
    shared = exact_run.merge(approx_run, on=["query_id", "doc_id"])
    assert len(shared) >= 0.9 * len(exact_run)
    np.testing.assert_allclose(shared["score_x"], shared["score_y"], rtol=1e-12)
    again = Word2VecRetriever(pooling="mean", vectors=str(path), analyzer="plain", faiss_index="hnsw").index(corpus)
    pd.testing.assert_frame_equal(again.search(query_frame, k=10), approx_run)  # built on one thread: same graph


def test_ties_at_the_cut_are_broken_by_doc_id_descending(tmp_path: Path) -> None:
    vectors = _write_vectors(tmp_path / "tiny.txt", {"aa": A, "bb": B, "cc": C})
    ids = [f"t{i:02d}" for i in range(20)] + ["x1"]
    corpus = _corpus(["bb"] * 20 + ["aa bb"], ids)  # twenty identical documents, more than FAISS is first asked for
    retriever = Word2VecRetriever(pooling="mean", vectors=str(vectors), analyzer="plain").index(corpus)
    run = retriever.search(_queries("bb"), k=3)
    assert list(run["doc_id"]) == ["t19", "t18", "t17"]
    np.testing.assert_allclose(run["score"], 1.0)


def test_queries_without_known_words_get_empty_rankings_and_a_counted_warning(tmp_path: Path) -> None:
    vectors = _write_vectors(tmp_path / "tiny.txt", {"aa": A, "bb": B, "cc": C})
    retriever = Word2VecRetriever(vectors=str(vectors), analyzer="plain").index(_corpus(["aa bb", "bb cc", "cc"]))
    with pytest.warns(EmptyQueryWarning, match="2 query"):
        run = retriever.search(_queries("", "zzz yyy", "aa"))
    assert set(run["query_id"]) == {"q3"} and np.isfinite(run["score"]).all()
    assert retriever.n_empty_queries_ == 2
    with pytest.warns(EmptyQueryWarning):
        np.testing.assert_array_equal(retriever.score("zzz", ["d1", "d2"]), [0.0, 0.0])
    assert retriever.n_empty_queries_ == 3


@pytest.mark.slow
def test_training_is_deterministic_within_and_across_processes(tiny_corpus: pd.DataFrame) -> None:
    first = Word2VecRetriever(epochs=5, vector_size=16).index(tiny_corpus)
    second = Word2VecRetriever(epochs=5, vector_size=16).index(tiny_corpus)
    assert first.keyed_vectors_.index_to_key == second.keyed_vectors_.index_to_key
    np.testing.assert_array_equal(first.keyed_vectors_.vectors, second.keyed_vectors_.vectors)
    other_seed = Word2VecRetriever(epochs=5, vector_size=16, seed=1).index(tiny_corpus)
    assert not np.array_equal(first.keyed_vectors_.vectors, other_seed.keyed_vectors_.vectors)
    # the helper imported from its folder, not as tests.retrieval...: a wheel may install a package named
    # `tests` (ppi-python's does), which a plain folder without __init__.py never shadows
    script = (
        "import pandas as pd, sys; sys.path.insert(0, sys.argv[1]);"
        "from vectors import word2vec_training_hash;"
        f"print(word2vec_training_hash(pd.DataFrame({tiny_corpus.to_dict(orient='list')!r})))"
    )
    # one child process whose string-hash seed differs from this process's (random unless PYTHONHASHSEED is set)
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    folder = str(REPO / "tests" / "retrieval")
    out = subprocess.run([sys.executable, "-c", script, folder], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == word2vec_training_hash(tiny_corpus)


def test_save_load_round_trip_uses_standard_files(
    tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame, tmp_path: Path
) -> None:
    retriever = Word2VecRetriever(epochs=5, pooling="idf", faiss_index="hnsw").index(tiny_corpus)
    retriever.save(tmp_path / "index")
    loaded = Word2VecRetriever.load(tmp_path / "index")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyQueryWarning)
        pd.testing.assert_frame_equal(loaded.search(tiny_queries), retriever.search(tiny_queries))
    keyed = import_gensim_models().KeyedVectors.load_word2vec_format(
        str(tmp_path / "index" / "vectors.bin"), binary=True
    )
    np.testing.assert_array_equal(keyed.vectors, retriever.keyed_vectors_.vectors)
    assert import_faiss().read_index(str(tmp_path / "index" / "index.faiss")).ntotal == len(retriever.rows_)
    with open(tmp_path / "index" / "index.faiss", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(IndexFormatError, match=r"index\.faiss.*checksum"):
        Word2VecRetriever.load(tmp_path / "index")
    meta_path = tmp_path / "index" / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["sha256"]["vectors.bin"]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"meta\.json.*sha256 must give a checksum"):
        Word2VecRetriever.load(tmp_path / "index")


def test_changing_pooling_re_encodes_and_changing_training_needs_a_new_index(tmp_path: Path) -> None:
    path, _, docs, queries = _random_collection(tmp_path, n_docs=50)
    corpus, query_frame = _corpus([" ".join(d) for d in docs]), _queries(*[" ".join(q) for q in queries])
    retriever = Word2VecRetriever(pooling="mean", vectors=str(path), analyzer="plain").index(corpus)
    retriever.set_params(pooling="sif")
    fresh = Word2VecRetriever(pooling="sif", vectors=str(path), analyzer="plain").index(corpus)
    pd.testing.assert_frame_equal(retriever.search(query_frame), fresh.search(query_frame))
    retriever.set_params(vector_size=50)
    with pytest.raises(NotFittedError):
        retriever.search(query_frame)
    with pytest.raises(ValueError, match="pooling must be one of"):
        retriever.set_params(pooling="max")


def test_bad_vector_files_and_missing_extras_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\na 1 2\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.txt.*not a word2vec text file"):
        Word2VecRetriever(vectors=str(bad)).index(_corpus(["aa"]))
    monkeypatch.setitem(sys.modules, "gensim", None)
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(ImportError, match=r'pip install "rankscope\[w2v\]"'):
        import_gensim_models()
    with pytest.raises(ImportError, match=r'pip install "rankscope\[w2v\]"'):
        import_faiss()


def test_indexing_again_replaces_everything_learned(tmp_path: Path) -> None:
    vectors = _write_vectors(tmp_path / "tiny.txt", {"aa": A, "bb": B, "cc": C})
    retriever = Word2VecRetriever(pooling="mean", vectors=str(vectors), analyzer="plain")
    retriever.index(_corpus(["aa", "bb"], ["x1", "x2"]))
    assert retriever.score("aa", ["x1"])[0] == pytest.approx(1.0)
    retriever.index(_corpus(["zzz", "bb cc", "aa"], ["y1", "y2", "y3"]))
    run = retriever.search(_queries("aa"))
    assert list(run["doc_id"]) == ["y3", "y2"]  # y1 has no known word
    np.testing.assert_allclose(retriever.score("aa", ["y2", "y1"]), [1 / math.sqrt(5), 0.0])
    with pytest.raises(KeyError, match="x1"):
        retriever.score("aa", ["x1"])


def test_long_documents_are_trained_on_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    models = import_gensim_models()
    seen: list[list[str]] = []
    real = models.Word2Vec

    def spy(*, sentences: list[list[str]], **kwargs: object) -> object:
        seen.extend(sentences)
        return real(sentences=sentences, **kwargs)

    monkeypatch.setattr(models, "Word2Vec", spy)
    words = [f"w{i % 500:03d}" for i in range(25_000)]
    Word2VecRetriever(epochs=1, vector_size=8, analyzer="plain").index(_corpus([" ".join(words), "w001 w002"]))
    # gensim ignores tokens past 10,000 in one sentence: the long text must arrive in pieces
    assert [len(s) for s in seen] == [10_000, 10_000, 5_000, 2]
    assert [tok for piece in seen[:3] for tok in piece] == words
