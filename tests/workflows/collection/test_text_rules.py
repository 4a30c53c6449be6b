"""collection init reads what teams have (issue 42 item 3): files of unknown suffixes by their content,
``--text-suffixes``, and ``--encoding`` for legacy texts, on real files of /usr/share/doc read where
they are at test time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankscope.cli import main
from tests.workflows.collection.files import debian_texts, legacy_text


def _corpus(folder: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    return {row["_id"]: row for row in rows}


def _unreadable(folder: Path) -> dict[str, str]:
    lines = (folder / "unreadable.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return dict(line.split("\t") for line in lines)


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def test_files_of_unknown_suffixes_are_read_by_their_content(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    found = debian_texts()
    (tmp_path / "logo.Debian").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")  # a PNG's first bytes
    folder = tmp_path / "c"
    assert (
        main(["collection", "init", str(folder), "--docs", *map(str, found.values()), str(tmp_path / "logo.Debian")])
        == 0
    )
    corpus = _corpus(folder)
    for path in found.values():
        assert corpus[path.name]["text"].split() == _text(path).split(), path
        assert corpus[path.name]["title"] == path.name.removesuffix(".gz")
    assert _unreadable(folder) == {
        str(tmp_path / "logo.Debian"): "unsupported file type '.Debian' and not text: "
        "binary content (NUL byte at offset 8), not text"
    }
    assert "1 x unsupported file type" in capsys.readouterr().out


def test_a_legacy_text_is_read_with_its_encoding_and_the_encoding_is_kept(tmp_path: Path) -> None:
    path, data = legacy_text()
    with pytest.raises(UnicodeDecodeError) as bad:
        data.decode("utf-8")
    error = bad.value.start
    other = tmp_path / "more.txt"
    other.write_text("A page in UTF-8.\n", encoding="utf-8")
    folder = tmp_path / "c"
    assert main(["collection", "init", str(folder), "--docs", str(path), str(other)]) == 0
    assert _unreadable(folder) == {str(path): f"not UTF-8 text (byte 0x{data[error]:02x} at offset {error})"}
    assert main(["collection", "init", str(folder), "--docs", str(path), str(other), "--encoding", "latin-1"]) == 0
    assert _unreadable(folder) == {}
    assert _corpus(folder)[path.name]["text"].split() == data.decode("latin-1").split()
    state = json.loads((folder / "ingest.json").read_text())
    assert state["encoding"] == "iso8859-1"
    other.write_bytes("Caf\xe9 cr\xe8me, na\xefve fa\xe7ade\n".encode("latin-1"))
    assert main(["collection", "init", str(folder), "--docs", str(path), str(other)]) == 0  # kept for re-runs
    assert _corpus(folder)["more.txt"]["text"] == "Café crème, naïve façade"


def test_a_text_suffix_reads_a_known_type_as_plain_text(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Title\n\nSome **bold** words.\n", encoding="utf-8")
    (docs / "data.log").write_bytes(b"\x00\x01\x02")
    folder = tmp_path / "c"
    assert main(["collection", "init", str(folder), "--docs", str(docs), "--text-suffixes", ".MD", ".log"]) == 0
    assert _corpus(folder)["docs/notes.md"]["text"] == "# Title\n\nSome **bold** words."
    assert _unreadable(folder) == {str(docs / "data.log"): "binary content (NUL byte at offset 0), not text"}
    assert json.loads((folder / "ingest.json").read_text())["text_suffixes"] == [".log", ".md"]
