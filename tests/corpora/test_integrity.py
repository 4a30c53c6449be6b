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


def test_counts_checked_where_no_checksum_is_pinned(lost_record: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.COLLECTIONS, "cranfield", replace(registry.COLLECTIONS["cranfield"], files={}))
    with pytest.raises(FormatError, match=r"holds 1400 documents, 224 queries, 1837 judgments; .* 1400, 225, 1837"):
        load_dataset("cranfield")


def test_by_path_the_dangling_judgments_are_printed(lost_record: Path, capsys: pytest.CaptureFixture) -> None:
    # 224 queries left; cranqrel still numbers 225 -> the 25 judgments of query 225 name no query
    folder = str(lost_record)
    assert main(["search", "--dataset", folder, "--retriever", "bm25", "--out", str(lost_record / "run")]) == 0
    err = capsys.readouterr().err
    assert "rankscope search: warning: 25 judgment(s) name 1 query id(s) not in the queries (kept; e.g. ['225'])" in err
    assert main(["search", "--dataset", folder, "--retriever", "bm25", "--out", "r", "--strict"]) == 2
    assert "name 1 query id(s) not in the queries" in capsys.readouterr().err


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
