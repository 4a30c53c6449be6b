"""Fuzz: saved indexes damaged in every file, with valid shapes or not.

``rankscope search --index-dir`` always verifies the checksums recorded at save, so any
altered byte is a one-line error naming the file. Without verification, loading still
checks what is cheap: the header's types, names confined to the folder, dtypes, shapes,
offsets, ranges, sorted vocabulary, unique ids, and document lengths equal to their counts.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.retrieval.registry import load_retriever

DOCS = "".join(f".I {i}\n.T\ntitle {i}\n.W\nwing lift heat {i} flow {'slab ' * i}\n" for i in range(1, 7))
QUERIES = ".I 001\n.W\nwing lift\n.I 004\n.W\nheat slab\n.I 009\n.W\nflow\n"
QRELS = "1 1 1\n1 2 2\n2 3 1\n3 5 2\n"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A collection, a bm25 index saved by ``search --index-dir``, and the run it wrote."""
    root = tmp_path_factory.mktemp("indexed")
    folder = root / "mycran"
    folder.mkdir()
    for name, text in (("cran.all.1400", DOCS), ("cran.qry", QUERIES), ("cranqrel", QRELS)):
        (folder / name).write_text(text)
    outcome = run_cli(_search(root, root / "index", root / "run"))
    assert outcome.code == 0, outcome.err
    return root, (root / "run").read_text()


def _search(root: Path, index: Path, out: Path) -> list[str]:
    return [
        "search",
        "--dataset",
        str(root / "mycran"),
        "--retriever",
        "bm25",
        "--out",
        str(out),
        "--index-dir",
        str(index),
    ]


def _copy(saved: tuple[Path, str], tmp_path: Path) -> Path:
    shutil.copytree(saved[0] / "index", tmp_path / "index")
    return tmp_path / "index"


def _edit_array(index: Path, name: str, change: Callable[[np.ndarray], np.ndarray]) -> None:
    path = index / f"{name}.npy"
    array = np.load(path)
    np.save(path, change(array.copy()))


def _swap_first_two(a: np.ndarray) -> np.ndarray:
    a[[0, 1]] = a[[1, 0]]
    return a


ARRAY_DAMAGE: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray], str]] = {
    # tf is stored as uint16 (format 2): negated, its counts wrap around; with a NaN it becomes float64
    "tf negated": ("tf", lambda a: -a, "doc_len must equal"),
    "tf zeroed": ("tf", lambda a: a * 0, "tf must hold positive whole counts"),
    "tf NaN": ("tf", lambda a: a + np.nan, "tf.npy: holds <f8 [36], meta.json says <u2 [36]"),
    "tf doubled": ("tf", lambda a: a * 2, "doc_len must equal"),
    "doc_len negative": ("doc_len", lambda a: -a, "doc_len must equal"),
    "doc_len NaN": ("doc_len", lambda a: a + np.nan, "doc_len must equal"),
    "postings out of range": ("postings", lambda a: a + 1000, "postings must be document positions"),
    "postings permuted": ("postings", lambda a: a[::-1].copy(), "postings must be ascending"),
    "offsets non-monotonic": ("indptr", _swap_first_two, "indptr must start at 0"),
    "offsets of another dtype": ("indptr", lambda a: a.astype(np.int32), "indptr"),
    "doc_len shortened": ("doc_len", lambda a: a[:-1], "doc_len"),
}


STRING_DAMAGE: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray], str]] = {
    "doc ids swapped": ("doc_ids.offsets", _swap_first_two, "offsets must start at 0"),
    "vocabulary offsets non-monotonic": ("vocabulary.offsets", lambda a: a[::-1].copy(), "offsets must start at 0"),
    "vocabulary bytes not UTF-8": ("vocabulary.utf8", lambda a: np.full_like(a, 0xFF), "not UTF-8"),
}


@pytest.mark.parametrize("name", sorted({**ARRAY_DAMAGE, **STRING_DAMAGE}))
def test_altered_arrays(saved, tmp_path: Path, name: str) -> None:
    array, change, problem = {**ARRAY_DAMAGE, **STRING_DAMAGE}[name]
    index = _copy(saved, tmp_path)
    _edit_array(index, array, change)
    check(run_cli(_search(saved[0], index, tmp_path / "run")), "error", f"{array}.npy: ")
    check(run_call(lambda: load_retriever(index)), "error", problem)


def test_duplicated_doc_id_with_valid_shapes(saved, tmp_path: Path) -> None:
    index = _copy(saved, tmp_path)
    data = np.load(index / "doc_ids.utf8.npy")  # ids "1".."6", one byte each: make the second a copy of the first
    data[1] = data[0]
    np.save(index / "doc_ids.utf8.npy", data)
    check(run_cli(_search(saved[0], index, tmp_path / "run")), "error", "doc_ids.utf8.npy: checksum differs")
    check(run_call(lambda: load_retriever(index)), "error", "doc_ids must be unique")


def _edit_meta(index: Path, change: Callable[[dict], None]) -> None:
    meta = json.loads((index / "meta.json").read_text())
    change(meta)
    (index / "meta.json").write_text(json.dumps(meta))


META_DAMAGE: dict[str, tuple[Callable[[dict], None], str]] = {
    "params a list": (lambda m: m.update(params=[["k1", 1.2]]), "'params' must be a JSON object"),
    "params null": (lambda m: m.update(params=None), "'params' must be a JSON object"),
    "analyzer a list": (lambda m: m.update(analyzer=["en"]), "'analyzer' must be a JSON object"),
    "analyzer null": (lambda m: m.update(analyzer=None), "'analyzer' must be a JSON object"),
    "unknown kind": (lambda m: m.update(kind="bm99"), "unknown index kind 'bm99'"),
    "kind a number": (lambda m: m.update(kind=7), "'kind' must be a string"),
    "array name escaping": (lambda m: m["arrays"].update({"../../etc/passwd": m["arrays"]["tf"]}), "not a plain file"),
    "arrays a list": (lambda m: m.update(arrays=[]), "'arrays' must be an object"),
    "shape of strings": (lambda m: m["arrays"]["tf"].update(shape="12"), "needs 'dtype'"),
    "newer format": (lambda m: m.update(format_version=99), "upgrade rankscope"),
    "checksums a list": (lambda m: m.update(checksums=[]), "'checksums' must map"),
    "k1 out of range": (lambda m: m["params"].update(k1=-1), "k1"),
}


@pytest.mark.parametrize("name", sorted(META_DAMAGE))
def test_damaged_meta(saved, tmp_path: Path, name: str) -> None:
    change, problem = META_DAMAGE[name]
    index = _copy(saved, tmp_path)
    _edit_meta(index, change)
    check(run_cli(_search(saved[0], index, tmp_path / "run")), "error", "meta.json")
    check(run_call(lambda: load_retriever(index)), "error", problem)


@pytest.mark.parametrize(
    ("name", "damage", "problem"),
    [
        ("meta.json with a duplicate key", lambda t: t.replace("{", '{"kind": "tfidf", ', 1), "appears twice"),
        ("meta.json not JSON", lambda t: t[: len(t) // 2], "not valid JSON"),
    ],
)
def test_unreadable_meta(saved, tmp_path: Path, name: str, damage, problem: str) -> None:
    index = _copy(saved, tmp_path)
    (index / "meta.json").write_text(damage((index / "meta.json").read_text()))
    check(run_call(lambda: load_retriever(index)), "error", problem)


@pytest.mark.parametrize("cut", ["truncated", "emptied", "garbage"])
def test_broken_npy_files(saved, tmp_path: Path, cut: str) -> None:
    index = _copy(saved, tmp_path)
    path = index / "postings.npy"
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[: len(raw) - 9], "emptied": b"", "garbage": b"\x93NUMPY garbage"}[cut])
    check(run_cli(_search(saved[0], index, tmp_path / "run")), "error", "postings.npy")
    check(run_call(lambda: load_retriever(index)), "error", "postings.npy")


def test_missing_array_file(saved, tmp_path: Path) -> None:
    index = _copy(saved, tmp_path)
    (index / "tf.npy").unlink()
    check(run_call(lambda: load_retriever(index)), "error", "tf.npy: missing")


def test_intact_index_is_reused_with_the_same_run(saved, tmp_path: Path) -> None:
    index = _copy(saved, tmp_path)
    check(run_cli(_search(saved[0], index, tmp_path / "run")), "accepted")
    assert (tmp_path / "run").read_text() == saved[1]


# --- downloaded archives ----------------------------------------------------------------------
def _tar(path: Path, members: dict[str, bytes]) -> Path:
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    ("name", "members", "problem"),
    [
        ("escaping member", {"../../evil": b"x", "cran.all.1400": b".I 1\n"}, "points outside its folder"),
        ("absolute member", {"/etc/evil": b"x"}, "points outside its folder"),
        ("zip bomb", {"cran.all.1400": b"\0" * (3 * 2**20)}, "unpacks to more than 2 MB"),
    ],
)
def test_hostile_archives_are_refused(tmp_path: Path, name: str, members: dict[str, bytes], problem: str) -> None:
    from rankscope.corpora.download import _unpack

    archive = _tar(tmp_path / "a.tar.gz", members)
    check(run_call(lambda: _unpack(archive, tmp_path / "out", limit=2 * 2**20)), "error", problem)
    assert not (tmp_path / "evil").exists() and archive.stat().st_size < 2**20


def test_truncated_archive_is_refused(tmp_path: Path) -> None:
    from rankscope.corpora.download import _unpack

    archive = _tar(tmp_path / "a.tar.gz", {"cran.all.1400": bytes(range(256)) * 400})
    archive.write_bytes(archive.read_bytes()[:-40])
    check(run_call(lambda: _unpack(archive, tmp_path / "out")), "error", "not a readable tar file")


# --- a Word2Vec + FAISS index -----------------------------------------------------------------
@pytest.fixture(scope="module")
def saved_w2v(saved: tuple[Path, str]) -> Path:
    pytest.importorskip("gensim")
    pytest.importorskip("faiss")
    root = saved[0]
    argv = _search(root, root / "w2v", root / "run-w2v")
    argv[argv.index("--retriever") + 1] = "w2v:epochs=2,vector_size=8"
    outcome = run_cli(argv)
    assert outcome.code == 0, outcome.err
    return root / "w2v"


W2V_DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "FAISS index replaced": (lambda i: (i / "index.faiss").write_bytes(b"not a faiss index"), "index.faiss: checksum"),
    "vectors file cut": (
        lambda i: (i / "vectors.bin").write_bytes((i / "vectors.bin").read_bytes()[:50]),
        "vectors.bin",
    ),
    "doc vectors NaN": (lambda i: _edit_array(i, "doc_vectors", lambda a: a * np.nan), "doc_vectors must hold"),
    "rows out of range": (lambda i: _edit_array(i, "rows", lambda a: a + 100), "rows must be document positions"),
    "rows repeated": (lambda i: _edit_array(i, "rows", lambda a: a * 0), "rows must not repeat"),
    "counts negated": (lambda i: _edit_array(i, "counts_data", lambda a: -a), "counts_data must hold"),
}


@pytest.mark.parametrize("name", sorted(W2V_DAMAGE))
def test_damaged_w2v_index(saved, saved_w2v: Path, tmp_path: Path, name: str) -> None:
    damage, problem = W2V_DAMAGE[name]
    index = tmp_path / "w2v"
    shutil.copytree(saved_w2v, index)
    damage(index)
    argv = _search(saved[0], index, tmp_path / "run")
    argv[argv.index("--retriever") + 1] = "w2v:epochs=2,vector_size=8"
    check(run_cli(argv), "error", str(index))
    check(run_call(lambda: load_retriever(index)), "error", problem)
