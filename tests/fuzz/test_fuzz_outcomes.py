"""Fuzz: outcomes that named the wrong thing (issue 33 items 2 and 5).

A full disk said only "No space left on device" (search --out, compare --out, index, search
--index-dir): it now names the path that could not be written, and earlier outputs stay whole; on
a real 512 kB tmpfs when this process may mount one, and with ENOSPC raised at the write layer
(rankscope.core.fileio) everywhere. ``datasets BADFOLDER`` printed its error inside the table and
exited 1; ``--out`` through a dangling symbolic link wrote over the link or named a temporary folder;
an index file that is a directory or a FIFO was "missing"; ``embeddings=`` naming a file said
"docs.npy: no such file"; ANSI escapes and control characters in a title reached the terminal.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

from rankscope.core import fileio
from rankscope.core.printable import printable

WORDS = "wing flow shock boundary layer heat transfer pressure drag lift".split()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEIR folder of 300 documents (runs of a few kB), one with a hostile title."""
    root = tmp_path_factory.mktemp("outcomes") / "data"
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": "", "text": " ".join(WORDS[(i * j) % 10] for j in range(9))} for i in range(300)]
    docs.append(
        {"_id": "evil", "title": "\x1b]0;pwned\x07\x1b[2J\x1b[31mRED title\x1b[0m\r\x08", "text": "wing \x1b[5m red"}
    )
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": WORDS[i]}) + "\n" for i in range(10))
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(10))
    )
    return root


def _writers(data: Path, at: Path, elsewhere: Path) -> dict[str, tuple[list[str], Path]]:
    """Each command that writes, with the path it writes (under ``at``; search --index-dir's run in ``elsewhere``)."""
    search = ["search", "--dataset", str(data), "--retriever", "bm25"]
    return {
        "search --out": ([*search, "--out", str(at / "run.trec")], at / "run.trec"),
        "compare --out": (
            ["compare", "--dataset", str(data), "--retrievers", "bm25", "tfidf", "--out", str(at / "cmp")],
            at / "cmp",
        ),
        "index": (["index", "--corpus", str(data / "corpus.jsonl"), "--index-dir", str(at / "ix")], at / "ix"),
        "search --index-dir": (
            [*search, "--index-dir", str(at / "ix2"), "--out", str(elsewhere / "r.trec")],
            at / "ix2",
        ),
    }


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 512 kB tmpfs (skipped where this process may not mount one)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.parametrize("command", ["search --out", "compare --out", "index", "search --index-dir"])
def test_a_full_disk_names_the_path(data: Path, small_disk: Path, tmp_path: Path, command: str) -> None:
    earlier = small_disk / "earlier.trec"
    earlier.write_text("q1 Q0 d1 1 1.0 x\n")
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as out:  # fill the disk to its last block
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    argv, target = _writers(data, small_disk, tmp_path)[command]
    outcome = run_cli(argv)
    check(outcome, "error", f"{target}")  # the folder, or the file in it that could not be written
    assert outcome.err.rstrip().endswith("No space left on device")
    assert earlier.read_text() == "q1 Q0 d1 1 1.0 x\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["earlier.trec", "filler"]  # no temporary left


@pytest.mark.parametrize("command", ["search --out", "compare --out"])
def test_enospc_at_the_write_layer_names_the_path(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The same without a mount: a run file and a report folder end in os.replace; ENOSPC there, as the
    kernel raises it from a write (no file name)."""

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fileio.os, "replace", full)  # os itself: the index's and the report's swaps too
    (tmp_path / "at").mkdir()
    argv, target = _writers(data, tmp_path / "at", tmp_path)[command]
    outcome = run_cli(argv)
    check(outcome, "error", f"{target}")
    assert outcome.err.rstrip().endswith("No space left on device") and not target.exists()


def test_datasets_with_a_bad_folder_is_one_line_on_stderr(tmp_path: Path) -> None:
    outcome = run_cli(["datasets", str(tmp_path / "BADFOLDER")])
    check(outcome, "error", "BADFOLDER")
    assert outcome.out == ""


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_out_through_a_dangling_link_names_the_link(data: Path, tmp_path: Path, kind: str) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere" / "x")
    if kind == "file":
        argv = ["search", "--dataset", str(data), "--retriever", "bm25", "--out", str(link)]
    else:
        argv = ["compare", "--dataset", str(data), "--retrievers", "bm25", "tfidf", "--out", str(link)]
    check(
        run_cli(argv), "error", f"--out {link}: a symbolic link to {tmp_path / 'nowhere' / 'x'}, which does not exist"
    )
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_out_in_proc_names_the_users_path(data: Path) -> None:
    outcome = run_cli(["search", "--dataset", str(data), "--retriever", "bm25", "--out", "/proc/x"])
    check(outcome, "error", "/proc/x")
    assert "/proc/.x." not in outcome.err  # the temporary file's name is never shown


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_an_index_file_that_is_a_directory_or_a_fifo(data: Path, tmp_path: Path, kind: str) -> None:
    index = tmp_path / "ix"
    assert run_cli(["index", "--corpus", str(data / "corpus.jsonl"), "--index-dir", str(index)]).code == 0
    (index / "tf.npy").unlink()
    if kind == "directory":
        (index / "tf.npy").mkdir()
    else:
        os.mkfifo(index / "tf.npy")
    argv = ["search", "--dataset", str(data), "--retriever", "bm25", "--index-dir", str(index)]
    said = "is a directory where" if kind == "directory" else "is not a regular file (a FIFO, device or socket) where"
    check(run_cli([*argv, "--out", str(tmp_path / "r.trec")]), "error", f"{index / 'tf.npy'}: {said}")


def test_embeddings_naming_a_file(data: Path, tmp_path: Path) -> None:
    spec = f"dense:model=precomputed,embeddings={data / 'corpus.jsonl'}"
    argv = ["search", "--dataset", str(data), "--retriever", spec, "--out", str(tmp_path / "r.trec")]
    check(run_cli(argv), "error", f"{data / 'corpus.jsonl'}: embeddings= names a file; give the folder")


def test_escape_sequences_in_a_title_never_reach_the_terminal(data: Path) -> None:
    outcome = run_cli(
        ["search", "--dataset", str(data), "--retriever", "bm25", "--query", "red title wing", "--k", "1"]
    )
    assert outcome.code == 0 and outcome.err == ""
    assert "evil" in outcome.out and "RED title" in outcome.out and "[red]" in outcome.out
    assert not any(c in outcome.out for c in "\x1b\x07\x08\r\x9b")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain title", "plain title"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;pwned\x07x", "x"),
        ("\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("a\rb\tc\nd", "a b c d"),
        ("\x1bcreset", "reset"),
        ("\x9b2Jx", "x"),
        ("bell\x07 nul\x00 del\x7f", "bell\ufffd nul\ufffd del\ufffd"),
        ("abc\u202edcba", "abc\ufffddcba"),
        ("half \x1b[3", "half 3"),
        ("café ✓ 北京", "café ✓ 北京"),
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown
