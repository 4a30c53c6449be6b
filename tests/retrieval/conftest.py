"""Fixtures for retriever tests: a small hand-written corpus and the real collections."""

from __future__ import annotations

import importlib.util
import os
import types
from pathlib import Path

import pandas as pd
import pytest

from rankscope.corpora import load_dataset


@pytest.fixture
def tiny_corpus() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["d1", "d2", "d3", "d4", "d5"],
            "title": ["", "", "", "", ""],
            "text": [
                "boundary layer flow over a flat plate",
                "heat transfer in laminar boundary layer flow flow",
                "supersonic flow around a cone",
                "boundary conditions for heat conduction",
                "the of and",
            ],
        }
    )


@pytest.fixture
def tiny_queries() -> pd.DataFrame:
    return pd.DataFrame(
        {"query_id": ["q1", "q2", "q3", "q4"], "text": ["boundary layer flow", "heat", "xylophone", "flow flow cone"]}
    )


@pytest.fixture(scope="module", params=["cranfield", "cisi"])
def collection(request: pytest.FixtureRequest, data_dir: Path):
    """A real collection, read by corpora.load_dataset."""
    return load_dataset(str(data_dir / request.param))


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retrievers registered during the test are forgotten afterwards (built-ins are loaded first, kept)."""
    from rankscope.retrieval import registry

    registry.available()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


TOY_RETRIEVER = Path(__file__).parent / "helpers" / "toy_retriever.py"
"""A small correct retriever in a file of its own, so a test can also ship it in a package."""


@pytest.fixture(scope="session")
def toy_module() -> types.ModuleType:
    """helpers/toy_retriever.py, imported by path (tests are not a package under --import-mode=importlib)."""
    spec = importlib.util.spec_from_file_location("rankscope_test_toy_retriever", TOY_RETRIEVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


USER_ENGINES = os.environ.get("RANKSCOPE_ENGINES") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankscope" / "engines"
)
"""The user's engine folder (Anserini's jar), read before the session moves the cache to a temporary folder."""


@pytest.fixture(autouse=True)
def _installed_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine retrievers find an engine the user installed (`rankscope engines install lucene`); read only."""
    monkeypatch.setenv("RANKSCOPE_ENGINES", USER_ENGINES)
