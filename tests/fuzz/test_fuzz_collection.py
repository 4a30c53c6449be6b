"""Fuzz: what ``collection init`` meets in a careless or hostile folder (issue 50 item 7).

A gzip bomb, links leaving the folder or going nowhere, a FIFO, a folder that cannot be listed, a
file name that is not UTF-8, a NUL deep in a text, 60,000 nested divs, and question ids no TREC
file can hold: each either ends in ``unreadable.tsv`` with its reason, with every readable file
still read, or is refused at ``init`` with the file and line. The texts are real ones read at test
time (the standard library's sources and pydoc pages), never kept in the repository.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import pydoc
import tracemalloc
import zlib
from pathlib import Path

import pytest
from harness import Outcome, check, run_cli  # tests/fuzz/harness.py

pytest.importorskip("bs4")
pytest.importorskip("markdown_it")

REAL = Path(argparse.__file__).read_text(encoding="utf-8")
"""A real text of about 100 KB: the standard library's argparse module."""


def _init(folder: Path, *argv: str) -> Outcome:
    return run_cli(["--quiet", "collection", "init", str(folder), *argv])


def _init_traced(folder: Path, *argv: str) -> tuple[Outcome, int]:
    """``collection init`` and the peak of the memory Python allocated while it ran."""
    tracemalloc.start()
    try:
        return _init(folder, *argv), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _corpus(folder: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    return {row["_id"]: row for row in rows}


def _unreadable(folder: Path) -> dict[str, str]:
    """``unreadable.tsv`` as path -> reason; every line must have exactly two fields."""
    lines = (folder / "unreadable.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "path\treason"
    fields = [line.split("\t") for line in lines[1:]]
    assert all(len(pair) == 2 for pair in fields), fields
    return dict(fields)  # type: ignore[arg-type]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A folder holding one plain text, the pydoc page of json, so every run has a document."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "json.txt").write_text(pydoc.plain(pydoc.render_doc("json")), encoding="utf-8")
    return folder


def _bomb(path: Path, inflated: int) -> None:
    """A gzip file inflating to ``inflated`` bytes of real text: members of 1 MB each, made cheaply
    (one member compressed once and repeated), a 16 KB passage repeated within deflate's window, so
    the file is about 100 times smaller than what it holds."""
    passage = REAL[:16_000]
    block = (passage * (1_000_000 // len(passage) + 1)).encode()[:1_000_000]
    member = gzip.compress(block, compresslevel=9)
    with path.open("wb") as out:
        for _ in range(inflated // len(block)):
            out.write(member)


def test_a_gzip_bomb_is_listed_and_inflated_no_further_than_the_bound(tmp_path: Path, docs: Path) -> None:
    _bomb(docs / "bomb.txt.gz", 1_000_000_000)
    assert (docs / "bomb.txt.gz").stat().st_size < 30_000_000
    outcome, peak = _init_traced(tmp_path / "c", "--docs", str(docs))
    check(outcome, "accepted")
    assert "1 unreadable" in outcome.out and "inflates to more than" in outcome.out
    assert _unreadable(tmp_path / "c") == {
        str(docs / "bomb.txt.gz"): "inflates to more than 75,000,000 bytes (the bound on one file's text)"
    }
    assert list(_corpus(tmp_path / "c")) == ["docs/json.txt"]
    assert peak < 400_000_000  # the bound and its buffers, not the gigabyte


def test_a_huge_text_is_refused_before_it_is_read(tmp_path: Path, docs: Path) -> None:
    """A 200 MB log (sparse: no disk used) is listed by its size; its bytes are never read into memory."""
    with (docs / "huge.log.txt").open("wb") as out:
        out.write(REAL.encode())
        out.truncate(200_000_000)
    outcome, peak = _init_traced(tmp_path / "c", "--docs", str(docs))
    check(outcome, "accepted")
    assert _unreadable(tmp_path / "c") == {
        str(docs / "huge.log.txt"): "more than 75,000,000 bytes (the bound on one file's text), not read"
    }
    assert peak < 50_000_000


def test_a_gzip_under_the_bound_is_read_whole(tmp_path: Path, docs: Path) -> None:
    (docs / "argparse.py.txt.gz").write_bytes(gzip.compress(REAL.encode()))
    check(_init(tmp_path / "c", "--docs", str(docs)), "accepted")
    assert _corpus(tmp_path / "c")["docs/argparse.py.txt.gz"]["text"].split() == REAL.split()


def test_a_damaged_gzip_is_listed(tmp_path: Path, docs: Path) -> None:
    (docs / "cut.txt.gz").write_bytes(gzip.compress(REAL.encode())[:5000])
    check(_init(tmp_path / "c", "--docs", str(docs)), "accepted")
    assert _unreadable(tmp_path / "c")[str(docs / "cut.txt.gz")].startswith("damaged gzip file")


def test_links_and_entries_that_are_not_files_are_listed_never_followed_out(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "private" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("the outside secret words\n", encoding="utf-8")
    (docs / "sub").mkdir()
    (docs / "sub" / "csv.txt").write_text(pydoc.plain(pydoc.render_doc("csv")), encoding="utf-8")
    (docs / "outside.txt").symlink_to(secret)
    (docs / "inside.txt").symlink_to(docs / "sub" / "csv.txt")
    (docs / "folder").symlink_to(secret.parent)
    (docs / "dangling.txt").symlink_to(docs / "nowhere.txt")
    (docs / "loop_a").symlink_to(docs / "loop_b")
    (docs / "loop_b").symlink_to(docs / "loop_a")
    os.mkfifo(docs / "pipe.txt")  # reading it would block for ever
    (docs / "closed").mkdir()
    (docs / "closed" / "kept.txt").write_text("never seen\n", encoding="utf-8")
    real_scandir = os.scandir

    def scandir(path: object) -> object:  # as for a folder without read permission (tests may run as root)
        if Path(str(path)) == docs / "closed":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    outcome = _init(tmp_path / "c", "--docs", str(docs))
    check(outcome, "accepted")
    assert _unreadable(tmp_path / "c") == {
        str(docs / "outside.txt"): f"link to a file outside --docs, refused ({secret})",
        str(docs / "inside.txt"): f"link to a file read under its own name ({docs / 'sub' / 'csv.txt'})",
        str(docs / "folder"): f"linked folder, not followed (to {secret.parent})",
        str(docs / "dangling.txt"): f"dangling link (to {docs / 'nowhere.txt'})",
        str(docs / "loop_a"): f"link loop (to {docs / 'loop_b'})",
        str(docs / "loop_b"): f"link loop (to {docs / 'loop_a'})",
        str(docs / "pipe.txt"): "not a regular file (a device, FIFO or socket)",
        str(docs / "closed"): "folder cannot be listed (Permission denied)",
    }
    found = _corpus(tmp_path / "c")
    assert sorted(found) == ["docs/json.txt", "docs/sub/csv.txt"]
    assert not any("secret" in row["text"] for row in found.values())
    assert "8 unreadable" in outcome.out and "1 x link to a file outside --docs, refused" in outcome.out


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read(tmp_path: Path, docs: Path) -> None:
    from rankscope.workflows.collection.readers import Unreadable
    from rankscope.workflows.collection.walk import read_file, walk_docs

    walked = walk_docs([docs])
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    (docs / "json.txt").unlink()
    (docs / "json.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(Unreadable, match="cannot be read"):
        read_file(walked.files[0])


def test_a_named_link_is_read(tmp_path: Path, docs: Path) -> None:
    """A file the user names on the command line is read even through a link: they chose it."""
    (tmp_path / "named.txt").symlink_to(docs / "json.txt")
    check(_init(tmp_path / "c", "--docs", str(tmp_path / "named.txt")), "accepted")
    assert list(_corpus(tmp_path / "c")) == ["named.txt"]


def test_file_names_that_are_not_utf8_or_hold_control_characters(tmp_path: Path, docs: Path) -> None:
    (docs / os.fsdecode(b"caf\xe9.txt")).write_text(REAL[:2000], encoding="utf-8")
    (docs / "two\nlines\t.txt").write_text(REAL[2000:4000], encoding="utf-8")
    (docs / os.fsdecode(b"bad\xff.bin")).write_bytes(b"\x00\x01")
    outcome = _init(tmp_path / "c", "--docs", str(docs))
    check(outcome, "accepted")
    found = _corpus(tmp_path / "c")
    assert found["docs/caf\\xe9.txt"]["text"].split() == REAL[:2000].split()
    assert found["docs/caf\\xe9.txt"]["source"] == f"{docs}/caf\\xe9.txt"
    assert found["docs/two\\x0alines\\x09.txt"]["text"].split() == REAL[2000:4000].split()
    assert list(_unreadable(tmp_path / "c")) == [f"{docs}/bad\\xff.bin"]
    again = _init(tmp_path / "c", "--docs", str(docs))  # the shown names are the keys of a re-run
    assert "0 new, 0 changed, 3 unchanged" in again.out


@pytest.mark.parametrize("offset", [0, 8191, 8192, 90_000])
def test_a_nul_anywhere_makes_the_file_binary(tmp_path: Path, docs: Path, offset: int) -> None:
    data = REAL.encode()
    (docs / "argparse.txt").write_bytes(data[:offset] + b"\x00" + data[offset:])
    check(_init(tmp_path / "c", "--docs", str(docs)), "accepted")
    assert _unreadable(tmp_path / "c") == {
        str(docs / "argparse.txt"): f"binary content (NUL byte at offset {offset}), not text"
    }
    assert all("\x00" not in row["text"] for row in _corpus(tmp_path / "c").values())


def test_60000_nested_divs_finish_with_every_word(tmp_path: Path, docs: Path) -> None:
    words = (REAL.split() * 7)[:60_000]
    page = (
        "<html><body>" + "".join(f"<div>{_escaped(word)}" for word in words) + "</div>" * len(words) + "</body></html>"
    )
    (docs / "deep.html").write_text(page, encoding="utf-8")
    outcome = _init(tmp_path / "c", "--docs", str(docs))
    check(outcome, "accepted")  # the harness's alarm counts a run beyond 60 s as a hang
    assert _corpus(tmp_path / "c")["docs/deep.html"]["text"].split("\n") == words  # each div a line


def test_many_paragraphs_keep_their_order_and_breaks(tmp_path: Path, docs: Path) -> None:
    lines = [" ".join(line.split()) for line in REAL.splitlines() if line.strip()][:20_000]
    e = _escaped
    body = "".join(f"<p>{e(line[:20])}<b>{e(line[20:40])}</b>{e(line[40:])}</p>" for line in lines)
    (docs / "long.html").write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    check(_init(tmp_path / "c", "--docs", str(docs)), "accepted")
    assert _corpus(tmp_path / "c")["docs/long.html"]["text"].split("\n\n") == lines


def _escaped(line: str) -> str:
    import html

    return html.escape(line, quote=False)


BAD_IDS = {
    "space inside": ('{"_id": "a b", "text": "how to parse arguments"}', "query id 'a b' contains whitespace"),
    "newline inside": ('{"_id": "a\\nb", "text": "how to parse arguments"}', "query id 'a\\nb' contains whitespace"),
    "tab inside": ('{"id": "a\\tb", "text": "how to parse arguments"}', "query id 'a\\tb' contains whitespace"),
    "empty": ('{"_id": "", "text": "how to parse arguments"}', "query id is empty"),
    "blank": ('{"query_id": "   ", "text": "how to parse arguments"}', "query id '   ' contains whitespace"),
    "two ids in one line": ('{"_id": "a", "id": "b", "text": "how"}', "line 2: columns ['_id', 'id'] could each be"),
    "quoted": ('{"_id": "\\"q\\"", "text": "how to parse arguments"}', "query id '\"q\"' is quoted"),
    "NUL": ('{"_id": "q\\u0000", "text": "how to parse arguments"}', "query id 'q\\x00' contains a NUL byte"),
    "a number as text": ('{"_id": "q", "text": 5}', "field 'text' must be a string, found 5"),
    "a list as text": ('{"_id": "q", "question": ["a"]}', "field 'question' must be a string"),
    "a float id": ('{"_id": 1.5, "text": "how to parse arguments"}', "field '_id' must be a string, found 1.5"),
}


@pytest.mark.parametrize("name", sorted(BAD_IDS))
def test_question_ids_are_checked_at_init(tmp_path: Path, docs: Path, name: str) -> None:
    line, problem = BAD_IDS[name]
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"_id": "q0", "text": "what does json encode"}\n' + line + "\n", encoding="utf-8")
    fragment = problem if problem.startswith("line 2") else f"line 2: {problem}"
    check(_init(tmp_path / "c", "--docs", str(docs), "--queries", str(questions)), "error", f"q.jsonl, {fragment}")
    assert not (tmp_path / "c" / "queries.jsonl").exists()


@pytest.mark.parametrize(
    ("cell", "problem"), [("", "query id is empty"), ("a b", "query id 'a b' contains whitespace")]
)
def test_csv_question_ids_are_checked_at_init(tmp_path: Path, docs: Path, cell: str, problem: str) -> None:
    questions = tmp_path / "q.csv"
    with questions.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows([["id", "text"], ["q0", "what does json encode"], [cell, "how to parse"]])
    check(_init(tmp_path / "c", "--docs", str(docs), "--queries", str(questions)), "error", f"q.csv, line 3: {problem}")


def test_good_ids_reach_pool(tmp_path: Path, docs: Path) -> None:
    """Ids passing at init pass pool's reading of the collection too: one rule at both ends."""
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"_id": "json-1", "text": "what does json encode"}\n{"id": 7, "text": "decoder"}\n')
    check(_init(tmp_path / "c", "--docs", str(docs), "--queries", str(questions)), "accepted")
    outcome = run_cli(["--quiet", "collection", "pool", str(tmp_path / "c"), "--systems", "bm25"])
    check(outcome, "accepted")
    pooled = list(csv.DictReader((tmp_path / "c" / "pool.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert {row["query_id"] for row in pooled} == {"json-1", "7"}


def test_the_gzip_reader_stops_at_the_bound_not_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inflating stops one byte past the bound, whatever the member layout (one member here)."""
    from rankscope.workflows.collection import readers

    monkeypatch.setattr(readers, "MAX_TEXT_BYTES", 10_000)
    packed = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = packed.compress(REAL.encode()) + packed.flush()
    with pytest.raises(readers.Unreadable, match="inflates to more than 10,000 bytes"):
        readers.extract(Path("a.txt.gz"), data)
    with pytest.raises(readers.Unreadable, match="more than 10,000 bytes of text"):
        readers.extract(Path("a.txt"), REAL.encode())


TEXT_OPTIONS = {
    "unknown encoding": (["--encoding", "klingon"], "--encoding 'klingon': no such encoding (e.g. latin-1, cp1252)"),
    "a wide encoding": (["--encoding", "utf-16"], "--encoding 'utf-16': not a legacy 8-bit text encoding"),
    "a suffix without its dot": (["--text-suffixes", "log"], "--text-suffixes: 'log' is not a file suffix"),
    "a path as suffix": (["--text-suffixes", "./x"], "--text-suffixes: './x' is not a file suffix"),
    "a bare dot": (["--text-suffixes", "."], "--text-suffixes: '.' is not a file suffix"),
}


@pytest.mark.parametrize("name", sorted(TEXT_OPTIONS))
def test_text_options_that_cannot_be_used(tmp_path: Path, docs: Path, name: str) -> None:
    argv, problem = TEXT_OPTIONS[name]
    check(_init(tmp_path / "c", "--docs", str(docs), *argv), "error", problem)
    assert not (tmp_path / "c").exists()


def test_bytes_the_legacy_encoding_does_not_define_are_listed(tmp_path: Path, docs: Path) -> None:
    (docs / "old.txt").write_bytes(REAL[:3000].encode() + b"\xe9t\xe9 \x81")  # 0x81: no cp1252 character
    check(_init(tmp_path / "c", "--docs", str(docs), "--encoding", "cp1252"), "accepted")
    assert _unreadable(tmp_path / "c") == {str(docs / "old.txt"): "not UTF-8 or cp1252 text (byte 0x81 at offset 3004)"}


def test_binary_files_of_unknown_suffixes_stay_unreadable(tmp_path: Path, docs: Path) -> None:
    import sys

    (docs / "python.bin").write_bytes(Path(sys.executable).read_bytes()[:100_000])
    (docs / "blob.Debian.gz").write_bytes(gzip.compress(bytes(range(256)) * 50))
    check(_init(tmp_path / "c", "--docs", str(docs), "--encoding", "latin-1"), "accepted")
    found = _unreadable(tmp_path / "c")
    assert found[str(docs / "python.bin")].startswith("unsupported file type '.bin' and not text: binary content")
    assert found[str(docs / "blob.Debian.gz")] == (
        "unsupported file type '.Debian' and not text: binary content (NUL byte at offset 0), not text"
    )


HOSTILE_QUESTIONS = {
    "deep.jsonl": (
        '{"_id": "a", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "deep.jsonl, line 1: invalid JSON (arrays or objects nested deeper",
    ),
    "huge_int.jsonl": ('{"_id": ' + "9" * 5000 + ', "text": "t"}\n', "huge_int.jsonl, line 1: invalid JSON"),
    "list.jsonl": ("[1, 2]\n", "list.jsonl, line 1: expected a JSON object, found list"),
    "object_id.jsonl": ('{"_id": {"x": 1}, "text": "t"}\n', "object_id.jsonl, line 1: field '_id' must be a string"),
    "open_quote.csv": ('id,text\n"a,b\n', "open_quote.csv, line 2: malformed CSV"),
    "two_ids.csv": ("id,id,text\na,b,t\n", "two_ids.csv, line 1: the header names 'id' twice or more"),
    "no_text.tsv": ("id\twords\na\tb\n", "no_text.tsv, line 1: the header names no question column"),
    "empty.jsonl": ("", "empty.jsonl: empty queries file: no rows"),
    "blank.txt": ("\n  \n\n", "blank.txt: empty queries file: no rows"),
    "latin.txt": (b"caf\xe9?\n", "latin.txt, line 1: invalid UTF-8 byte 0xe9"),
    "cut.jsonl.gz": (gzip.compress(b'{"_id": "a", "text": "t"}\n' * 100)[:50], "cut.jsonl.gz: not a valid gzip file"),
}


@pytest.mark.parametrize("command", ["collection", "search"])
@pytest.mark.parametrize("name", sorted(HOSTILE_QUESTIONS))
def test_hostile_questions_files(tmp_path: Path, docs: Path, command: str, name: str) -> None:
    """One reader, one error: ``collection init --queries`` and ``search --queries`` alike."""
    content, fragment = HOSTILE_QUESTIONS[name]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    if command == "collection":
        argv = ["--quiet", "collection", "init", str(tmp_path / "c"), "--docs", str(docs), "--queries", str(path)]
    else:
        dataset = tmp_path / "d"
        (dataset / "qrels").mkdir(parents=True)
        (dataset / "corpus.jsonl").write_text(json.dumps({"_id": "json", "text": REAL[:5000]}) + "\n")
        (dataset / "queries.jsonl").write_text('{"_id": "x", "text": "parser"}\n')
        (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nx\tjson\t1\n")
        argv = ["--quiet", "search", "--dataset", str(dataset), "--retriever", "bm25", "--queries", str(path)]
        argv += ["--out", str(tmp_path / "r")]
    check(run_cli(argv), "error", fragment)
