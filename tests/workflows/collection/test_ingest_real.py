"""collection init on real files read where they are at test time (never copied into the repository):
Debian's /usr/share/doc pages (HTML, text, Markdown, gzipped) and the standard library's documentation
as pydoc renders it, plus a PDF made from one module's documentation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli import main
from tests.needs import needs
from tests.workflows.collection.files import debian_folders, stdlib_docs

pytestmark = needs("pypdf", "markdown_it")

pytest.importorskip("bs4")


def script_texts(page: str) -> list[str]:
    """The bodies of a page's <script> and <style> elements (20 characters or more), read by the standard
    library's parser, as the ingested text would show them (whitespace collapsed)."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Scripts(HTMLParser):
        inside = False

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.inside = tag in ("script", "style")

        def handle_endtag(self, tag: str) -> None:
            self.inside = False

        def handle_data(self, data: str) -> None:
            if self.inside and len(" ".join(data.split())) >= 20:
                found.append(" ".join(data.split()))

    Scripts().feed(page)
    return found


@pytest.mark.slow
def test_init_on_real_documentation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    debian = debian_folders(160)
    pdf, drawn = stdlib_docs(tmp_path / "stdlib")
    folder = tmp_path / "collection"
    argv = ["collection", "init", str(folder), "--docs", *map(str, debian), str(tmp_path / "stdlib")]
    assert main(argv) == 0, capsys.readouterr().err
    state = json.loads((folder / "ingest.json").read_text())
    walked = {str(p) for root in [*debian, tmp_path / "stdlib"] for p in root.rglob("*") if p.is_file()}
    assert len(walked) >= 200
    assert set(state["files"]) | set(state["unreadable"]) == walked  # every file: documents or a reason
    assert not set(state["files"]) & set(state["unreadable"])
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    assert len(rows) >= 150
    assert all(row["text"].strip() and "\x00" not in row["text"] for row in rows)
    texts = {row["_id"]: " ".join(row["text"].split()) for row in rows}
    html = [row for row in rows if row["source"].endswith(".html")]
    assert len(html) >= 5
    scripts = {row["_id"]: script_texts(Path(row["source"]).read_text(errors="replace")) for row in html}
    assert sum(map(len, scripts.values())) >= 1  # some pages do hold scripts
    assert not [(doc, body[:40]) for doc, bodies in scripts.items() for body in bodies if body in texts[doc]]
    pages = sorted((row["page"], row["text"]) for row in rows if row["source"] == str(pdf))
    assert [page for page, _ in pages] == [1, 2, 3]
    for page, text in pages:  # each page holds the lines drawn on it, in order
        flat = " ".join(text.split())
        assert " ".join(" ".join(drawn[(page - 1) * 40 : page * 40]).split()) == flat
    by_source = {row["source"]: row for row in rows}
    assert by_source[str(tmp_path / "stdlib" / "heapq.txt")]["text"].startswith(
        "Python Library Documentation: module heapq\n\nNAME\n    heapq - Heap queue"
    )
    before = (folder / "corpus.jsonl").read_bytes()
    capsys.readouterr()
    assert main(argv) == 0
    assert f"0 new, 0 changed, {len(state['files'])} unchanged" in capsys.readouterr().out
    assert (folder / "corpus.jsonl").read_bytes() == before
