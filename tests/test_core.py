"""The shared core: strict text reading, atomic writes, the schema, the run tie rule, the CLI hub.

make_run (retrieval.base) is tested in tests/retrieval/test_base.py."""

from __future__ import annotations

import gzip
import os
import random

import pandas as pd
import pytest

from rankscope.cli import build_parser, main
from rankscope.core.errors import FormatError, SchemaError
from rankscope.core.fileio import atomic_write, iter_lines, read_lines, release_pages
from rankscope.corpora.schema import validate


def test_read_lines_strips_bom_and_crlf(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"\xef\xbb\xbf.I 1\r\nfirst\r\n")
    assert read_lines(path) == [".I 1", "first"]


def test_read_lines_reads_gzip(tmp_path):
    path = tmp_path / "q.txt.gz"
    path.write_bytes(gzip.compress(b"a\nb\n"))
    assert read_lines(path) == ["a", "b"]


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nalso ok\nbad \xff here\n")
    with pytest.raises(FormatError, match=r"bad\.txt, line 3: invalid UTF-8 byte 0xff"):
        read_lines(path)


@pytest.mark.parametrize("seed", range(40))
def test_iter_lines_gives_read_lines_lines_and_errors(tmp_path, seed):
    """One line at a time, the same lines, numbers and errors as the whole file (BOM, CRLF, lone CR,
    blank lines, no final newline, .gz, a bad byte anywhere)."""
    rng = random.Random(seed)
    pieces = [b"a", b"\xc3\xa9", b" ", b"\n", b"\r\n", b"\r", b"\xef\xbb\xbf", b"{}"]
    raw = (b"\xef\xbb\xbf" if seed % 2 else b"") + b"".join(rng.choice(pieces) for _ in range(rng.randrange(60)))
    if seed % 5 == 0:
        raw = raw[: len(raw) // 2] + b"\xe9" + raw[len(raw) // 2 :]
    path = tmp_path / ("f.gz" if seed % 3 == 0 else "f")
    path.write_bytes(gzip.compress(raw) if seed % 3 == 0 else raw)

    def outcome(read):
        try:
            return list(read())
        except FormatError as exc:
            return str(exc)

    expected = outcome(lambda: enumerate(read_lines(path), start=1))
    assert outcome(lambda: iter_lines(path)) == expected
    assert seed % 5 != 0 or "invalid UTF-8 byte 0xe9" in expected


def test_atomic_write_keeps_old_content_on_crash(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as handle:
            handle.write("half")
            raise RuntimeError("crash")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.trec"]


def test_atomic_write_gzip_round_trip(tmp_path):
    path = tmp_path / "out.txt.gz"
    with atomic_write(path) as handle:
        handle.write("x\ny\n")
    assert gzip.decompress(path.read_bytes()) == b"x\ny\n"


def test_validate_names_missing_and_found_columns():
    frame = pd.DataFrame({"qid": ["1"], "docno": ["d"], "relevance": [1]})
    with pytest.raises(SchemaError) as err:
        validate(frame, "qrels")
    assert "['query_id', 'doc_id']" in str(err.value)
    assert "found ['qid', 'docno', 'relevance']" in str(err.value)


def test_validate_normalises_types_without_mutating_input():
    frame = pd.DataFrame({"query_id": [1, 2], "doc_id": [7, 8], "relevance": ["2", 0]})
    out = validate(frame, "qrels")
    assert out["query_id"].tolist() == ["1", "2"]
    assert out["relevance"].tolist() == [2, 0]
    assert frame["query_id"].tolist() == [1, 2]


def test_validate_refuses_fractional_relevance():
    frame = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [1.5]})
    with pytest.raises(SchemaError, match="must hold integers; row 0 has 1.5"):
        validate(frame, "qrels")


def test_validate_computes_trec_ranks_with_doc_id_descending_ties():
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "c", "b"], "score": [1.0, 1.0, 2.0]})
    out = validate(run, "run")
    assert dict(zip(out["doc_id"], out["rank"])) == {"b": 1, "c": 2, "a": 3}


def test_cli_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("rankscope 0.1.0")


def test_atomic_write_honours_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "report.html") as handle:
            handle.write("<html></html>")
    finally:
        os.umask(old)
    assert (tmp_path / "report.html").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("argv", "quiet"),
    [
        (["compare"], False),
        (["--quiet", "compare"], True),
        (["compare", "--quiet"], True),  # after the command, too
        (["tune", "--quiet"], True),
    ],
)
def test_quiet_flag_is_read_before_or_after_the_command(argv: list[str], quiet: bool) -> None:
    assert build_parser().parse_args(argv).quiet is quiet


def _resident_file_mb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile")) // 1024


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads RssFile from Linux's /proc")
def test_release_pages_gives_back_a_mapped_arrays_pages_and_keeps_its_values(tmp_path):
    import numpy as np

    values = np.arange(16_000_000, dtype=np.int64)  # 128 MB
    written = np.lib.format.open_memmap(tmp_path / "a.npy", mode="w+", dtype=np.int64, shape=values.shape)
    written[:] = values
    before = _resident_file_mb()
    release_pages(written)  # a shared map: what was written stays in the file
    assert before - _resident_file_mb() > 100
    del written
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    assert np.array_equal(mapped, values)
    before = _resident_file_mb()
    release_pages(mapped[1_000_000:9_000_000])  # 64 MB of the middle: a view's own region only
    released = before - _resident_file_mb()
    assert 50 < released < 80
    assert np.array_equal(mapped, values)
    release_pages(values)  # not a map: left alone
    assert values[-1] == 15_999_999
