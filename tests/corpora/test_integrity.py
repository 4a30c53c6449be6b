"""Known collections are the distributed ones: a damaged file is an error, never a shifted qrels."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError
from rankscope.corpora import registry
from rankscope.corpora.load import load_dataset


def _copy(data_dir: Path, tmp_path: Path, name: str = "cranfield") -> Path:
    target = tmp_path / "data" / name
    shutil.copytree(data_dir / name, target)
    return target


def _drop_line(path: Path, prefix: bytes) -> None:
    raw = path.read_bytes()
    start = raw.index(prefix)
    path.write_bytes(raw[:start] + raw[raw.index(b"\n", start) + 1 :])


@pytest.fixture
def lost_record(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Cranfield with query 10's '.I' line removed (queries 9 and 10 merge; later ones shift)."""
    folder = _copy(data_dir, tmp_path)
    _drop_line(folder / "cran.qry", b".I 010")
    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path / "data"))
    return folder


def test_lost_record_by_name_is_a_checksum_error(lost_record: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(FormatError, match="cran.qry: differs from the cranfield file as distributed"):
        load_dataset("cranfield")
    assert main(["compare", "--retrievers", "bm25", "tfidf", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "cran.qry: differs" in err


def test_counts_checked_where_no_checksum_is_pinned(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deleted last document leaves no gap and shifts nothing; the counts still tell the copy from the original."""
    folder = _copy(data_dir, tmp_path)
    raw = (folder / "cran.all.1400").read_bytes()
    (folder / "cran.all.1400").write_bytes(raw[: raw.index(b".I 1400")])
    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path / "data"))
    monkeypatch.setitem(registry.COLLECTIONS, "cranfield", replace(registry.COLLECTIONS["cranfield"], files={}))
    with pytest.raises(FormatError, match=r"holds 1399 documents, 225 queries, 1837 judgments; .* 1400, 225, 1837"):
        load_dataset("cranfield")


def test_by_path_a_lost_query_record_is_an_error_naming_its_line(
    lost_record: Path, capsys: pytest.CaptureFixture
) -> None:
    """cranqrel numbers queries by position: queries 9 and 10 merged would put every later query on
    the next one's judgments, so the copy is refused by its structure, without checksums."""
    folder = str(lost_record)
    assert main(["search", "--dataset", folder, "--retriever", "bm25", "--out", str(lost_record / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cran.qry, line 18: record 009 repeats section(s) W (line 22): two records merged" in err


def test_cache_records_checksums_at_first_load(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cached = tmp_path / "xdg" / "rankscope" / "cisi"
    shutil.copytree(data_dir / "cisi", cached)
    monkeypatch.setitem(registry.COLLECTIONS, "cisi", replace(registry.COLLECTIONS["cisi"], files={}))
    assert load_dataset("cisi").stats()["judgments"] == 3114
    record = json.loads((cached / "download.json").read_text())
    assert set(record["files"]) == {"CISI.ALL", "CISI.QRY", "CISI.REL"}
    with (cached / "CISI.ALL").open("a") as handle:  # same counts, other text
        handle.write("an appended line\n")
    with pytest.raises(FormatError, match="CISI.ALL: differs from the cisi file as distributed"):
        load_dataset("cisi")


def test_real_collections_pass_their_checks(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    assert load_dataset("cranfield").stats()["judgments"] == 1837
    assert load_dataset("cisi").stats()["documents"] == 1460
