"""BM25 sharded over Dask: the run equals one process's bit for bit, for any number of shards and
workers, also when a worker is killed mid-search; a scheduler that cannot be reached is one line."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main  # noqa: E402
from rankscope.core import scheduler  # noqa: E402
from rankscope.corpora import load_dataset  # noqa: E402
from rankscope.retrieval.registry import make_retriever  # noqa: E402
from rankscope.retrieval.sharded import sharded_search  # noqa: E402
from tests.needs import needs

pytestmark = needs("distributed")


@pytest.fixture(scope="module")
def cranfield(data_dir: Path):
    return load_dataset(str(data_dir / "cranfield"))


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "shards"), [("bm25", 3), ("bm25:variant=okapi,k1=0.9,b=0.4", 2)])
def test_sharded_run_equals_the_single_process_run(dask_client, cranfield, spec: str, shards: int) -> None:
    """okapi's idf floor uses the mean idf of the whole vocabulary: the global statistics, not a shard's."""
    single = make_retriever(spec).index(cranfield.corpus).search(cranfield.queries, k=100)
    sharded = sharded_search(make_retriever(spec), cranfield.corpus, cranfield.queries, 100, dask_client, shards=shards)
    pd.testing.assert_frame_equal(sharded, single, check_exact=True)


@pytest.mark.slow
def test_a_worker_killed_mid_search_changes_nothing(dask_client, cranfield) -> None:
    """The worker holding a shard's counts is killed while the search runs; Dask computes its tasks again."""
    single = make_retriever("bm25").index(cranfield.corpus).search(cranfield.queries, k=100)
    found: dict[str, pd.DataFrame] = {}
    search = threading.Thread(
        target=lambda: found.update(
            run=sharded_search(make_retriever("bm25"), cranfield.corpus, cranfield.queries, 100, dask_client, shards=6)
        )
    )
    pids = dask_client.run(os.getpid)
    search.start()
    deadline = time.monotonic() + 60
    while not any(dask_client.has_what().values()) and time.monotonic() < deadline:
        time.sleep(0.005)
    holder = next(worker for worker, keys in dask_client.has_what().items() if keys)
    assert search.is_alive()  # killed mid-search, not after it
    os.kill(pids[holder], signal.SIGKILL)
    search.join(timeout=120)
    assert not search.is_alive()
    pd.testing.assert_frame_equal(found["run"], single, check_exact=True)
    dask_client.wait_for_workers(2, timeout=60)  # the nanny restarted it
    assert holder not in dask_client.has_what() or pids[holder] not in dask_client.run(os.getpid).values()


@pytest.mark.slow
def test_cli_search_with_local_2_writes_the_same_bytes(data_dir: Path, tmp_path: Path) -> None:
    """Must show: rankscope search --dataset cranfield --retriever bm25 --scheduler local:2 --out a.trec."""
    base = ["search", "--dataset", str(data_dir / "cranfield"), "--retriever", "bm25"]
    assert main([*base, "--out", str(tmp_path / "single.trec")]) == 0
    assert main([*base, "--scheduler", "local:2", "--out", str(tmp_path / "a.trec")]) == 0
    assert (tmp_path / "a.trec").read_bytes() == (tmp_path / "single.trec").read_bytes()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("tcp://127.0.0.1:9", "cannot reach the Dask scheduler at tcp://127.0.0.1:9: "),
        ("local:0", "scheduler 'local:0': write local:N with N worker processes (1-999), e.g. local:2"),
    ],
)
def test_a_bad_or_unreachable_scheduler_is_one_line(
    value: str, said: str, data_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(scheduler, "CONNECT_TIMEOUT", 1)
    args = ["search", "--dataset", str(data_dir / "cranfield"), "--retriever", "bm25", "--scheduler", value]
    assert main([*args, "--out", str(tmp_path / "a.trec")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"rankscope search: error: {said}")
    assert not (tmp_path / "a.trec").exists()


def test_a_retriever_that_cannot_be_sharded_is_refused_before_any_work(data_dir: Path, tmp_path: Path, capsys) -> None:
    args = ["search", "--dataset", str(data_dir / "cranfield"), "--retriever", "bm25:prf=rm3", "--scheduler", "local:1"]
    assert main([*args, "--out", str(tmp_path / "a.trec")]) == 2
    assert "--scheduler shards bm25 without prf" in capsys.readouterr().err
