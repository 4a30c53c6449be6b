"""collection init: each reader's text against what the file holds, provenance, unreadable files listed,
re-runs that read only new and changed files, chunking, and the team's questions in three formats."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError
from rankscope.corpora.beir import read_beir_corpus, read_beir_queries
from rankscope.workflows.collection.ingest import init_collection
from rankscope.workflows.collection.layout import CollectionError
from rankscope.workflows.collection.queries import read_queries
from tests.needs import needs
from tests.workflows.collection.files import make_pdf

pytestmark = needs("pypdf", "markdown_it")

pytest.importorskip("bs4")

HTML = """<!doctype html><html><head><title>Tide tables</title><style>p {color: red}</style>
<script>var secret = "scriptword";</script></head>
<body><nav>menuword</nav><h1>Tides</h1><p>High tide at <b>noon</b>.</p><p>Low tide &amp; ebb.</p></body></html>"""
MARKDOWN = "# Lighthouse keeping\n\nThe **lamp** is lit at *dusk*.\n\n```\nlamp --on\n```\n"


def docs_folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.txt").write_text("Ferries leave hourly.\r\n\r\n\r\nLast ferry at ten.  \n")
    (docs / "sub" / "tides.html").write_text(HTML)
    (docs / "guide.md").write_text(MARKDOWN)
    (docs / "old.md.gz").write_bytes(gzip.compress(b"# Archive\n\nKept gzipped.\n"))
    (docs / "latin.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (docs / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (docs / "empty.html").write_text("<html><body><script>only()</script></body></html>")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    make_pdf(docs / "manual.pdf", ["Zebras graze on the savanna.", "", "Giraffes browse acacia trees."], "Zoo manual")
    return docs


def corpus(folder: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    return {row["_id"]: row for row in rows}


def test_each_reader_gives_the_files_text_and_provenance(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    result = init_collection(tmp_path / "c", [docs])
    found = corpus(tmp_path / "c")
    assert sorted(found) == ["docs/guide.md", "docs/manual.pdf:p1", "docs/manual.pdf:p3", "docs/notes.txt",
                             "docs/old.md.gz", "docs/sub/tides.html"]  # fmt: skip
    assert found["docs/notes.txt"]["text"] == "Ferries leave hourly.\n\nLast ferry at ten."
    assert found["docs/notes.txt"]["title"] == "notes.txt"
    tides = found["docs/sub/tides.html"]
    assert tides["title"] == "Tide tables"
    assert tides["text"] == "Tides\n\nHigh tide at noon.\n\nLow tide & ebb."  # blocks are paragraphs
    assert not any(word in tides["text"] for word in ("scriptword", "menuword", "color"))
    guide = found["docs/guide.md"]
    assert (guide["title"], guide["text"]) == (
        "Lighthouse keeping",
        "Lighthouse keeping\n\nThe lamp is lit at dusk.\n\nlamp --on",
    )
    assert found["docs/old.md.gz"]["text"] == "Archive\n\nKept gzipped."
    first, third = found["docs/manual.pdf:p1"], found["docs/manual.pdf:p3"]
    assert (first["page"], first["text"], first["title"]) == (1, "Zebras graze on the savanna.", "Zoo manual (page 1)")
    assert (third["page"], third["text"]) == (3, "Giraffes browse acacia trees.")  # page 2 has no text
    assert first["source"] == str((docs / "manual.pdf").absolute())
    import hashlib

    assert first["sha256"] == hashlib.sha256((docs / "manual.pdf").read_bytes()).hexdigest()
    assert set(result.unreadable) == {str(docs / n) for n in ("latin.txt", "picture.png", "empty.html", "broken.pdf")}
    assert result.unreadable[str(docs / "latin.txt")] == "not UTF-8 text (byte 0xe9 at offset 3)"
    assert result.unreadable[str(docs / "picture.png")].startswith("unsupported file type '.png'")
    assert result.unreadable[str(docs / "empty.html")] == "no text"
    assert result.unreadable[str(docs / "broken.pdf")].startswith("damaged PDF")
    listed = (tmp_path / "c" / "unreadable.tsv").read_text().splitlines()
    assert listed[0] == "path\treason" and len(listed) == 5
    assert len(read_beir_corpus(tmp_path / "c" / "corpus.jsonl")) == 6  # the BEIR reader takes the folder's corpus


def test_reruns_read_new_and_changed_files_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = docs_folder(tmp_path)
    folder = tmp_path / "c"
    init_collection(folder, [docs])
    before = (folder / "corpus.jsonl").read_bytes()
    from rankscope.workflows.collection import ingest

    read: list[str] = []
    real = ingest.extract
    monkeypatch.setattr(ingest, "extract", lambda path, data, rules: read.append(path.name) or real(path, data, rules))
    again = init_collection(folder, [docs])
    assert (again.added, again.changed, again.unchanged) == ((), (), 5)
    assert sorted(read) == ["broken.pdf", "empty.html", "latin.txt", "picture.png"]  # only the unreadable again
    assert (folder / "corpus.jsonl").read_bytes() == before
    read.clear()
    (docs / "notes.txt").write_text("Ferries leave every half hour.\n")
    (docs / "new.txt").write_text("A new timetable.\n")
    (docs / "guide.md").unlink()
    third = init_collection(folder, [docs])
    assert third.changed == (str(docs / "notes.txt"),) and third.added == (str(docs / "new.txt"),)
    assert third.missing == (str(docs / "guide.md"),)
    assert sorted(set(read) - {"broken.pdf", "empty.html", "latin.txt", "picture.png"}) == ["new.txt", "notes.txt"]
    found = corpus(folder)
    assert found["docs/notes.txt"]["text"] == "Ferries leave every half hour."
    assert "docs/guide.md" in found and "docs/new.txt" in found  # a missing file's documents are kept
    assert len(third.unreadable) == 4 and len((folder / "unreadable.tsv").read_text().splitlines()) == 5


def test_chunking_splits_each_document_and_keeps_its_parent(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    words = [f"w{i}" for i in range(23)]
    (docs / "long.txt").write_text(" ".join(words) + "\n")
    make_pdf(docs / "two.pdf", ["alpha beta gamma delta epsilon zeta eta"])
    init_collection(tmp_path / "c", [docs], chunking="words:10:2")
    found = corpus(tmp_path / "c")
    chunks = [found[f"docs/long.txt#{n}"] for n in range(3)]
    assert [c["text"].split() for c in chunks] == [words[0:10], words[8:18], words[16:23]]
    full = " ".join(words)
    assert {c["parent"] for c in chunks} == {"docs/long.txt"}
    assert [full[c["start"] : c["start"] + len(c["text"])] for c in chunks] == [c["text"] for c in chunks]
    assert found["docs/two.pdf:p1#0"]["parent"] == "docs/two.pdf:p1" and found["docs/two.pdf:p1#0"]["page"] == 1
    with pytest.raises(CollectionError, match="chunked with words:10:2, not none"):
        init_collection(tmp_path / "c", [docs])


def test_questions_from_lines_jsonl_and_csv(tmp_path: Path) -> None:
    lines = tmp_path / "q.txt"
    lines.write_text("When is high tide?\n\nWho lights the lamp?\nwhen is  HIGH tide?\n")
    rows = read_queries(lines)
    assert [(r["_id"], r["text"]) for r in rows] == [("q1", "When is high tide?"), ("q3", "Who lights the lamp?")]
    assert rows[0]["origin"] == {"made": "file", "file": str(lines.absolute()), "line": 1, "merged_lines": [4]}
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"id": "a", "question": "When is high tide?"}\n{"text": "Zebras?"}\n')
    assert [(r["_id"], r["text"]) for r in read_queries(jsonl)] == [("a", "When is high tide?"), ("q2", "Zebras?")]
    table = tmp_path / "q.csv"
    table.write_text('query_id,query\nx1,"Tides, and why?"\nx2,Lamps\n')
    assert [(r["_id"], r["text"]) for r in read_queries(table)] == [("x1", "Tides, and why?"), ("x2", "Lamps")]
    table.write_text("query_id,query\nx1,a\nx1,b\n")
    with pytest.raises(FormatError, match=r"q.csv, line 3: duplicate query id 'x1' \(first at line 2\)"):
        read_queries(table)
    table.write_text("id,words\nx1,a\n")
    with pytest.raises(
        FormatError, match="line 1: the header names no question column 'text' or 'query' or 'question'"
    ):
        read_queries(table)
    jsonl.write_text('{"id": "a"}\n')
    with pytest.raises(FormatError, match="q.jsonl, line 1: no question"):
        read_queries(jsonl)


def test_the_cli_adds_questions_and_refuses_a_changed_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = docs_folder(tmp_path)
    questions = tmp_path / "q.txt"
    questions.write_text("When is high tide?\nWho lights the lamp?\n")
    folder = tmp_path / "c"
    assert main(["collection", "init", str(folder), "--docs", str(docs), "--queries", str(questions)]) == 0
    out = capsys.readouterr().out
    assert f"{folder}: 6 documents, 2 queries" in out and "4 unreadable" in out
    assert list(read_beir_queries(folder / "queries.jsonl")["text"]) == ["When is high tide?", "Who lights the lamp?"]
    questions.write_text("When is low tide?\n")
    assert main(["collection", "init", str(folder), "--docs", str(docs), "--queries", str(questions)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 1: query id 'q1' is 'When is high tide?' in the collection" in err
    assert main(["collection", "init", str(folder), "--docs", str(tmp_path / "nowhere")]) == 2
    assert (
        capsys.readouterr().err
        == f"rankscope collection: error: --docs {tmp_path / 'nowhere'}: no such file or folder\n"
    )


def test_a_damaged_pdf_is_listed_not_logged_on_stderr(tmp_path: Path) -> None:
    """pypdf logs its repairs ('EOF marker not found') as warnings, which Python printed on stderr beside
    the command's own lines when nothing set up logging (a real command line; pytest's handlers hide it)."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    (docs / "notes.txt").write_text("Tides rise twice a day.\n")
    command = "import sys; from rankscope.cli import main; raise SystemExit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", command, "--quiet", "collection", "init", str(tmp_path / "c"), "--docs", str(docs)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and "1 unreadable" in done.stdout
