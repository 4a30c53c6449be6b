"""What a user installs: one top-level package, with the compiled kernel inside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy, so the build leaves no build/ folder in the repository
    shutil.copytree(
        REPO, source, ignore=shutil.ignore_patterns(".git", ".venv", ".mypy_cache", "build", "*.so", "__pycache__")
    )
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)]
    done = subprocess.run(build, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stderr[-2000:]}")
    (path,) = out.glob("rankscope-*.whl")
    return zipfile.ZipFile(path)


@pytest.mark.slow
def test_wheel_holds_one_top_level_package(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"rankscope"}
    for sub in ("core", "corpora", "evaluation", "retrieval", "workflows"):
        assert f"rankscope/{sub}/__init__.py" in names
    assert any(n.startswith("rankscope/retrieval/_sparse_topk.") for n in names)
    top_level = next(n for n in names if n.endswith("top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["rankscope"]


@pytest.mark.slow
def test_wheel_ships_its_type_hints(wheel: zipfile.ZipFile) -> None:
    """PEP 561: py.typed marks the package as typed, and each compiled module has its stub beside it."""
    names = set(wheel.namelist())
    assert "rankscope/py.typed" in names
    for stub in ("corpora/_trec_scan.pyi", "retrieval/_sparse_topk.pyi", "retrieval/_word_codes.pyi"):
        assert f"rankscope/{stub}" in names
