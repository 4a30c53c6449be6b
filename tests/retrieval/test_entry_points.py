"""A third-party retriever in a package of its own, built and pip-installed (offline) in a temporary folder:
installed, it is a name every spec can use, so ``rankscope compare --retrievers`` runs it, and it passes
``check_retriever``. The install goes to ``--target`` and subprocesses get it on PYTHONPATH: the project's
environment is never changed, and the package is found only through its entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from rankscope.corpora import load_dataset
from rankscope.evaluation import evaluate
from rankscope.retrieval import registry
from rankscope.retrieval.registry import SpecError
from tests.needs import needs

pytestmark = needs("wheel")


PYPROJECT = """\
[build-system]
requires = ["setuptools>=61", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "rankscope-toy-overlap"
version = "0.1"

[project.entry-points."rankscope.retrievers"]
toy-overlap = "rankscope_toy_overlap:Overlap"

[tool.setuptools]
py-modules = ["rankscope_toy_overlap"]
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, toy_module: types.ModuleType) -> dict[str, str]:
    """Environment variables under which the built package is installed."""
    root = tmp_path_factory.mktemp("third-party")
    source, target = root / "source", root / "site"
    source.mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    shutil.copy(toy_module.__file__, source / "rankscope_toy_overlap.py")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run([*pip, "--target", str(target), str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"pip install of the tiny package failed:\n{done.stderr[-2000:]}")
    assert (target / "rankscope_toy_overlap.py").is_file()
    path = os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "RANKSCOPE_QUIET": "1"}


def _python(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.slow
def test_the_installed_retriever_is_listed_and_passes_check_retriever(installed: dict[str, str]) -> None:
    code = textwrap.dedent(
        """
        import sys
        from rankscope.retrieval.checks import check_retriever
        from rankscope.retrieval.registry import available, retriever_class
        assert "rankscope_toy_overlap" not in sys.modules  # listed from metadata, not imported
        names = available()
        check_retriever("toy-overlap:weight=2")
        cls = retriever_class("toy-overlap")
        print(",".join(names), cls.__module__, cls.name)
        """
    )
    done = _python(installed, "-c", code)
    assert done.returncode == 0, done.stderr
    names, module, name = done.stdout.split()
    assert "toy-overlap" in names.split(",") and "bm25" in names.split(",")
    assert (module, name) == ("rankscope_toy_overlap", "toy-overlap")
    listing = _python(installed, "-m", "rankscope.cli", "retrievers", "toy-overlap")
    assert listing.stdout.splitlines()[2].split()[:3] == ["weight", "a", "float"]


@pytest.mark.slow
def test_compare_runs_the_installed_retriever(installed: dict[str, str], data_dir: Path, toy_module) -> None:
    cranfield = str(data_dir / "cranfield")
    argv = ["--dataset", cranfield, "--retrievers", "bm25", "toy-overlap", "--metrics", "ndcg@10", "--format", "json"]
    done = _python(installed, "-m", "rankscope.cli", "compare", *argv)
    assert done.returncode == 0, done.stderr
    means = json.loads(done.stdout)["mean"]
    data = load_dataset(cranfield)
    toy = type("Overlap", (toy_module.Overlap,), {"name": "toy"})().index(data.corpus)  # the same code, in-process
    expected = evaluate(data.qrels, toy.search(data.queries), ["ndcg@10"]).mean["ndcg@10"]
    assert means["toy-overlap"]["ndcg@10"] == pytest.approx(expected, abs=1e-12)
    assert set(means) == {"bm25", "toy-overlap"}


def test_without_the_package_the_name_is_unknown() -> None:
    with pytest.raises(SpecError, match="unknown retriever 'toy-overlap'; known: .*bm25"):
        registry.retriever_class("toy-overlap")


def test_a_broken_entry_point_is_one_line_naming_it(tmp_path: Path) -> None:
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rankscope.retrievers]\nbroken = no_such_module_here:Thing\n")
    code = "from rankscope.cli import main; raise SystemExit(main(['search', '--dataset', 'none', '--retriever', 'broken', '--out', 'x']))"
    done = _python({**os.environ, "PYTHONPATH": str(tmp_path)}, "-c", code)
    assert done.returncode == 2
    assert done.stderr == (
        "rankscope search: error: retriever 'broken': entry point broken = no_such_module_here:Thing "
        "(rankscope.retrievers, package broken-plugin) failed to load: ModuleNotFoundError: "
        "No module named 'no_such_module_here'\n"
    )
