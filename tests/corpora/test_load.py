"""load_dataset: resolution order, folder detection, downloads served from local archives."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from rankscope import corpora
from rankscope.core.errors import DatasetNotFoundError, FormatError
from rankscope.corpora import download, registry
from rankscope.corpora.load import load_dataset, locate
from rankscope.corpora.paths import cache_root
from rankscope.corpora.registry import Collection
from tests.corpora.http_files import serving

DOCS = ".I 1\n.T\nwing\n.W\nwing lift\n.I 2\n.T\nslab\n.W\nheat slab\n"
QUERIES = ".I 001\n.W\nlift of a wing\n.I 004\n.W\nheat\n"
QRELS = "1 1 1\n2 2 2\n2 1 -1\n"


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Empty RANKSCOPE_DATA and cache folders; downloads allowed."""
    data, cache = tmp_path / "data", tmp_path / "xdg"
    data.mkdir()
    monkeypatch.setenv("RANKSCOPE_DATA", str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("RANKSCOPE_OFFLINE", raising=False)
    return {"data": data, "cache": cache / "rankscope"}


def _cranfield_files(folder: Path, docs: str = DOCS) -> Path:
    folder.mkdir(parents=True)
    (folder / "cran.all.1400").write_text(docs, encoding="utf-8")
    (folder / "cran.qry").write_text(QUERIES, encoding="utf-8")
    (folder / "cranqrel").write_text(QRELS, encoding="utf-8")
    return folder


def _archive(tmp_path: Path, members: dict[str, str]) -> Path:
    path = tmp_path / "cran.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _serve(monkeypatch: pytest.MonkeyPatch, archive: Path, **checks: object) -> list[str]:
    """Point the cranfield entry at ``archive`` (a file:// URL) with the given checksums."""
    fake = Collection("cranfield", "test", archive.as_uri(), "cranfield", **checks)
    monkeypatch.setitem(registry.COLLECTIONS, "cranfield", fake)
    opened: list[str] = []

    def opener(url: str, timeout: float):
        opened.append(url)
        return download.urllib.request.urlopen(url, timeout=timeout)

    monkeypatch.setattr(download, "urlopen", opener)
    return opened


def _unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cranfield without its published counts and file checksums, so two-document stand-ins load by name."""
    loose = replace(registry.COLLECTIONS["cranfield"], counts=None, files={})
    monkeypatch.setitem(registry.COLLECTIONS, "cranfield", loose)


def test_name_resolves_to_rankscope_data_first(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _unpinned(monkeypatch)
    _cranfield_files(places["data"] / "cranfield")
    _cranfield_files(places["cache"] / "cranfield", docs=".I 9\n.W\nother\n")
    found = locate("cranfield")
    assert (found.path, found.source) == (places["data"] / "cranfield", "RANKSCOPE_DATA")
    ds = load_dataset("cranfield")
    assert ds.name == "cranfield" and ds.corpus["doc_id"].tolist() == ["1", "2"]
    # Cranfield queries renumbered by position; -1 -> 0, 1 -> 4, 2 -> 3
    assert ds.qrels.values.tolist() == [["1", "1", 4], ["2", "2", 3], ["2", "1", 0]]


def test_then_the_cache(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _unpinned(monkeypatch)
    _cranfield_files(places["cache"] / "cranfield", docs=".I 9\n.W\nother\n")
    assert locate("CRANFIELD").source == "cache"
    assert load_dataset("cranfield").corpus["doc_id"].tolist() == ["9"]


def test_then_a_checked_download_into_the_cache(places: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    archive = _archive(
        tmp_path, {"cran/cran.all.1400": DOCS, "cran/cran.qry": QUERIES, "cran/cranqrel": QRELS, "cran/._cranqrel": "x"}
    )
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    opened = _serve(monkeypatch, archive, sha256=digest, size=archive.stat().st_size)
    ds = load_dataset("cranfield")
    assert opened == [archive.as_uri()]
    assert ds.stats()["documents"] == 2 and ds.stats()["judgments"] == 3
    target = places["cache"] / "cranfield"
    assert sorted(p.name for p in target.iterdir()) == ["cran.all.1400", "cran.qry", "cranqrel", "download.json"]
    record = json.loads((target / "download.json").read_text())
    assert record["sha256"] == digest and record["size"] == archive.stat().st_size
    assert record["verified"] == "published checksum"
    load_dataset("cranfield")
    assert len(opened) == 1  # the second load finds the cache


def test_unknown_checksum_is_recorded_on_first_download(places: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    archive = _archive(tmp_path, {"cran.all.1400": DOCS, "cran.qry": QUERIES, "cranqrel": QRELS})
    _serve(monkeypatch, archive)
    load_dataset("cranfield")
    record = json.loads((places["cache"] / "cranfield" / "download.json").read_text())
    assert record["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert record["md5"] == hashlib.md5(archive.read_bytes()).hexdigest()
    assert record["verified"] == "none published: recorded on first download"


def test_checksum_mismatch_discards_the_download(places: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    archive = _archive(tmp_path, {"cran.all.1400": DOCS, "cran.qry": QUERIES, "cranqrel": QRELS})
    _serve(monkeypatch, archive, sha256="0" * 64)
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("cranfield")
    message = str(info.value)
    assert "checksum mismatch for cranfield" in message and f"expected {'0' * 64}" in message
    assert "Put the files cran.all.1400, cran.qry, cranqrel" in message
    assert not (places["cache"] / "cranfield").exists()
    assert [p.name for p in places["cache"].iterdir()] == []  # no temporary left behind


def test_archive_without_the_files_is_refused(places: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    _serve(monkeypatch, _archive(tmp_path, {"cran.all.1400": DOCS, "readme": "hi"}))
    with pytest.raises(DatasetNotFoundError, match="lacks the cranfield files"):
        load_dataset("cranfield")
    assert not (places["cache"] / "cranfield").exists()


def test_offline_error_says_where_to_put_the_files(places: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    _serve(monkeypatch, tmp_path / "missing.tar.gz")
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("cranfield")
    message = str(info.value)
    assert f"not found in {places['data'] / 'cranfield'} or {places['cache'] / 'cranfield'}" in message
    assert "could not download cranfield" in message and "Put the files cran.all.1400, cran.qry, cranqrel" in message
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError, match=r"downloads are off \(RANKSCOPE_OFFLINE is set\)"):
        load_dataset("cranfield")


def test_cache_root_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "rankscope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "rankscope"


def test_paths_detect_their_format(places: dict[str, Path], tmp_path: Path) -> None:
    smart = _cranfield_files(tmp_path / "my-cran")
    assert load_dataset(str(smart)).name == "my-cran"
    trec = tmp_path / "trec"
    trec.mkdir()
    (trec / "corpus.tsv").write_text("doc_id\ttitle\ttext\nd1\tT\tx\n", encoding="utf-8")
    (trec / "queries.jsonl").write_text('{"query_id": "7", "text": "q"}\n', encoding="utf-8")
    (trec / "qrels.txt").write_text("7 0 d1 2\n", encoding="utf-8")
    ds = load_dataset(trec)
    assert ds.qrels.values.tolist() == [["7", "d1", 2]] and ds.corpus.values.tolist() == [["d1", "T", "x"]]
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n', encoding="utf-8")
    (beir / "queries.jsonl").write_text('{"_id": "q", "text": "y"}\n', encoding="utf-8")
    (beir / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\td1\t1\n", encoding="utf-8")
    assert load_dataset(beir, split="dev").split == "dev"
    with pytest.raises(DatasetNotFoundError, match="single split 'test', not 'dev'"):
        load_dataset(smart, split="dev")


def test_unusable_paths_and_names(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="nor a known collection; known collections: cranfield, cisi"):
        load_dataset("msmarco")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(DatasetNotFoundError, match="is a file"):
        load_dataset(tmp_path / "notes.txt")
    with pytest.raises(FormatError, match="cannot tell the format"):
        load_dataset(tmp_path)


def test_real_collections_by_name(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    assert corpora.load_dataset("cranfield").stats()["judgments"] == 1837
    assert corpora.load_dataset("cisi").stats()["judged_queries"] == 76


@pytest.mark.parametrize("behaviour", ["cut", "chunked-cut", "500"])
def test_a_download_cut_short_or_refused_is_one_line_and_leaves_no_file(
    places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    """A real server closing the connection halfway through its chunk: before, http.client's IncompleteRead
    escaped as a traceback; halfway through its Content-Length: the half was unpacked (a gzip archive then
    failed as "not a readable tar file", a plain one could lose its last files)."""
    archive = _archive(tmp_path, {"cran.all.1400": DOCS * 200, "cran.qry": QUERIES, "cranqrel": QRELS})
    with serving({"/cran.tar.gz": (behaviour, archive.read_bytes())}) as served:
        fake = Collection("cranfield", "test", served.url("/cran.tar.gz"), "cranfield")
        monkeypatch.setitem(registry.COLLECTIONS, "cranfield", fake)
        with pytest.raises(DatasetNotFoundError) as info:
            load_dataset("cranfield")
    message = str(info.value)
    assert "\n" not in message
    reason = {"cut": "the connection closed after ", "chunked-cut": "IncompleteRead(", "500": "HTTP Error 500"}[
        behaviour
    ]
    assert f"could not download cranfield from {served.url('/cran.tar.gz')}: {reason}" in message
    assert served.asked["/cran.tar.gz"] == 1
    assert [p.name for p in places["cache"].iterdir()] == []  # no archive, folder or temporary left
