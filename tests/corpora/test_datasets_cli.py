"""``rankscope datasets`` through the real command entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli import main


@pytest.fixture
def env(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return data_dir


def test_table_lists_counts_and_locations(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "documents", "queries", "judged", "judgments", "location"]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert list(rows) == ["cranfield", "cisi", "cacm", "med", "adi", "time", "npl"]
    # counts as in the raw files (".I" records, qrels lines), re-derived in tests/corpora/test_smart.py
    assert rows["cranfield"][1:6] == ["1400", "225", "225", "1837", str(env / "cranfield")]
    assert rows["cisi"][1:6] == ["1460", "112", "76", "3114", str(env / "cisi")]
    assert rows["cacm"][1:5] == ["-", "-", "-", "-"]
    assert "downloads from http://ir.dcs.gla.ac.uk/resources/test_collections/cacm/cacm.tar.gz" in lines[3]
    assert lines[-1].startswith(f"searched: RANKSCOPE_DATA={env}, then the cache ")


def test_json_output(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "--format", "json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    # cranqrel codes -1, 4, 3, 2, 1 become grades 0, 1, 2, 3, 4 (code counts: 225, 363, 734, 387, 128)
    assert rows["cranfield"]["judgments_per_level"] == {"0": 225, "1": 363, "2": 734, "3": 387, "4": 128}
    assert (rows["cisi"]["source"], rows["cisi"]["judged_queries"]) == ("RANKSCOPE_DATA", 76)
    assert rows["npl"]["location"] is None and rows["npl"]["source"] == "download"


def test_extra_folders_and_errors(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "--format", "json", str(env / "cisi")]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[-1]["documents"] == 1460
    # a folder the user named that cannot be read is one line on stderr and exit 2, as every command says it
    # (issue 33 item 5: it was an error row in the table and exit 1)
    assert main(["datasets", "--format", "json", str(env / "cisi"), str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert captured.err.startswith("rankscope datasets: error: ") and "cannot tell the format" in captured.err
