"""Shared fixtures: where the real test collections are."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_corpora_dir() -> Path | None:
    """RANKSCOPE_DATA if set, else ../shared/corpora beside the repo (the CI layout)."""
    env = os.environ.get("RANKSCOPE_DATA")
    candidate = Path(env) if env else REPO.parent / "shared" / "corpora"
    return candidate if candidate.is_dir() else None


def pytest_configure(config: pytest.Config) -> None:
    """Make a relative RANKSCOPE_DATA absolute, so code run from another folder (notebooks) finds it too."""
    env = os.environ.get("RANKSCOPE_DATA")
    if env:
        os.environ["RANKSCOPE_DATA"] = str(Path(env).resolve())


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_corpora_dir()
    if path is None:
        pytest.skip("real collections not found: set RANKSCOPE_DATA to the folder holding cranfield/, cisi/, ...")
    return path


@pytest.fixture(scope="session", autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user cache (embeddings, extracted models) in a temporary folder, never the user's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(autouse=True)
def _no_progress_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_QUIET", "1")


@pytest.fixture
def forkable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forking allowed as in a command's process before it loads an OpenMP runtime: no other Python thread
    (an earlier test may have left an idle one) and no OpenMP runtime (an earlier test may have imported
    faiss; the children of the tests using this never run its parallel regions)."""
    from rankscope.core import forked

    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread()])
    monkeypatch.setattr(forked, "openmp_loaded", lambda: False)


@pytest.fixture(scope="session")
def dask_client() -> Iterator[object]:
    """One Dask LocalCluster of 2 worker processes on loopback for every test that needs a cluster
    (starting one costs seconds); skipped without the distributed extra."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0"
    ) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.fixture(scope="session")
def trec_eval_dir() -> Path:
    """trec_eval's own test files: RANKSCOPE_TREC_EVAL_TEST, else ``trec_eval-test/`` beside the collections."""
    env = os.environ.get("RANKSCOPE_TREC_EVAL_TEST")
    corpora = shared_corpora_dir()
    candidate = Path(env) if env else (corpora or REPO.parent / "shared" / "corpora").parent / "trec_eval-test"
    if not (candidate / "qrels.test").is_file():
        pytest.skip("trec_eval's test files not found: set RANKSCOPE_TREC_EVAL_TEST to the folder holding qrels.test")
    return candidate


# The quick tier's CPU budget per test (tests/cpu_budget.py): its hooks are this conftest's
from tests.cpu_budget import pytest_runtest_call, pytest_runtest_makereport  # noqa: E402, F401
