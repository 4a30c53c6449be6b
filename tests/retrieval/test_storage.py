"""Index files: round trip, memory mapping, atomic replacement and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankscope.retrieval.storage import FORMAT_VERSION, IndexFormatError, load_index, save_index


def _save(path: Path) -> None:
    save_index(
        path,
        "demo",
        {"params": {"k1": 1.2}, "analyzer": {"stemmer": "english"}},
        {"counts": np.arange(6, dtype=np.int32).reshape(2, 3), "ids": ["d1", "é2", ""]},
    )


def test_round_trip_is_memory_mapped_and_pickle_free(tmp_path: Path) -> None:
    _save(tmp_path / "idx")
    meta, arrays = load_index(tmp_path / "idx", "demo")
    assert meta["format_version"] == FORMAT_VERSION and meta["kind"] == "demo"
    assert meta["params"] == {"k1": 1.2} and meta["analyzer"] == {"stemmer": "english"}
    assert isinstance(arrays["counts"], np.memmap)
    np.testing.assert_array_equal(arrays["counts"], [[0, 1, 2], [3, 4, 5]])
    assert list(arrays["ids"]) == ["d1", "é2", ""]
    assert not any(p.suffix == ".pkl" for p in (tmp_path / "idx").iterdir())


def test_overwrite_replaces_an_index_and_leaves_no_temporaries(tmp_path: Path) -> None:
    _save(tmp_path / "idx")
    save_index(tmp_path / "idx", "demo", {}, {"x": np.ones(2)})
    meta, arrays = load_index(tmp_path / "idx", "demo")
    assert set(arrays) == {"x"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_refuses_to_overwrite_a_folder_that_is_not_an_index(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(IndexFormatError, match="refusing to overwrite"):
        _save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_failed_save_keeps_the_previous_index(tmp_path: Path) -> None:
    _save(tmp_path / "idx")
    with pytest.raises(ValueError, match="only numbers and strings"):
        save_index(tmp_path / "idx", "demo", {}, {"bad": np.array([1 + 2j])})
    assert load_index(tmp_path / "idx", "demo")[1]["counts"].shape == (2, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_extra_files_are_swapped_in_with_the_arrays(tmp_path: Path) -> None:
    save_index(tmp_path / "idx", "demo", {}, {"x": np.ones(2)}, files={"vectors.bin": b"old"})
    with pytest.raises(ValueError, match="invalid file name 'meta.json'"):
        save_index(tmp_path / "idx", "demo", {}, {"x": np.zeros(2)}, files={"vectors.bin": b"new", "meta.json": b"{}"})
    assert (tmp_path / "idx" / "vectors.bin").read_bytes() == b"old"
    assert load_index(tmp_path / "idx", "demo")[1]["x"].tolist() == [1.0, 1.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match="meta.json missing"):
        load_index(tmp_path, "demo")
    _save(tmp_path / "idx")
    with pytest.raises(IndexFormatError, match="holds a 'demo' index, expected 'bm25'"):
        load_index(tmp_path / "idx", "bm25")
    (tmp_path / "idx" / "counts.npy").unlink()
    with pytest.raises(IndexFormatError, match="counts.npy: missing"):
        load_index(tmp_path / "idx", "demo")
    meta_path = tmp_path / "idx" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["format_version"] = FORMAT_VERSION + 1
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="upgrade rankscope"):
        load_index(tmp_path / "idx", "demo")
    with pytest.raises(ValueError, match="reserved"):
        save_index(tmp_path / "other", "demo", {"kind": "x"}, {})


@pytest.mark.parametrize("spec", ["bm25", "tfidf", "hybrid:retrievers=bm25+tfidf"])
def test_a_saved_parameter_the_retriever_refuses_names_meta_json(tmp_path: Path, spec: str) -> None:
    """A hand-edited meta.json with a value the constructor refuses is one IndexFormatError naming the file."""
    import pandas as pd

    from rankscope.retrieval.registry import load_retriever, make_retriever

    corpus = pd.DataFrame({"doc_id": ["a", "b"], "title": ["", ""], "text": ["red fish", "blue fish"]})
    make_retriever(spec).index(corpus).save(tmp_path / "idx")
    meta_file = tmp_path / "idx" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["params"]["no_such_parameter"] = 1
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"meta\.json: params: .*no_such_parameter") as caught:
        load_retriever(tmp_path / "idx")
    assert str(caught.value).count("\n") == 0
