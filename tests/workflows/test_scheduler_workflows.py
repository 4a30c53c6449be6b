"""tune, compare and rag with a scheduler write what they write in one process, byte for byte
(grid points, systems, chunking x retriever systems as tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli import main  # noqa: E402
from tests.needs import needs

pytestmark = needs("distributed")


@pytest.mark.slow
def test_tune_on_local_2_writes_the_same_files(data_dir: Path, tmp_path: Path) -> None:
    """Must show: rankscope tune --dataset cranfield --scheduler local:2 equals the single-process tune."""
    base = ["tune", "--dataset", str(data_dir / "cranfield"), "--k1", "0.6:1.4:0.4", "--b", "0.3:0.9:0.3"]
    assert main([*base, "--figure-format", "svg", "--workers", "1", "--out", str(tmp_path / "single")]) == 0
    assert main([*base, "--figure-format", "svg", "--scheduler", "local:2", "--out", str(tmp_path / "dask")]) == 0
    written = sorted(p.name for p in (tmp_path / "single").iterdir())
    assert {"grid.csv", "folds.csv", "summary.json"} <= set(written)
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == written
    for name in (
        written
    ):  # the provenance (the command line, the second it was made) and the seconds spent differ, nothing else
        assert without_provenance(tmp_path / "dask" / name) == without_provenance(tmp_path / "single" / name), name
    dask = json.loads((tmp_path / "dask" / "provenance.json").read_text())
    assert "--scheduler local:2" in dask["command"]


@pytest.mark.slow
def test_compare_on_local_2_gives_the_same_tables_and_runs(data_dir: Path, tmp_path: Path) -> None:
    """Each system's run is a task; the tables, significance and run files equal one process's."""
    base = ["compare", "--dataset", str(data_dir / "cranfield"), "--retrievers", "bm25", "tfidf", "bm25:k1=0.9,b=0.4"]
    base += ["--depth", "100", "--figure-format", "svg"]
    assert main([*base, "--out", str(tmp_path / "single")]) == 0
    assert main([*base, "--scheduler", "local:2", "--out", str(tmp_path / "dask")]) == 0
    same = ["summary.csv", "per_query.csv", "significance.csv", "summary.json"]
    same += [p.name for p in (tmp_path / "single").glob("*.trec")]
    assert len(same) > 5
    for name in same:
        assert without_provenance(tmp_path / "dask" / name) == without_provenance(tmp_path / "single" / name), name


@pytest.mark.slow
def test_rag_on_a_scheduler_writes_the_same_files(dask_client, data_dir: Path, tmp_path: Path) -> None:
    """Each chunking x retriever is a task (sent to a running scheduler's address); every file but the
    provenance equals one process's."""
    base = ["rag", "--dataset", str(data_dir / "cisi"), "--chunking", "words:100:25", "sentences:300"]
    base += ["--retrievers", "bm25", "tfidf", "--budget", "500", "1000", "--depth", "100", "--figure-format", "svg"]
    assert main([*base, "--out", str(tmp_path / "single")]) == 0
    assert main([*base, "--scheduler", dask_client.scheduler.address, "--out", str(tmp_path / "dask")]) == 0
    written = sorted(p.name for p in (tmp_path / "single").iterdir())
    assert {"summary.csv", "per_query.csv", "tokens.csv", "chunks.csv", "run.sentences_300_bm25.trec"} <= set(written)
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == written
    for name in written:
        assert without_provenance(tmp_path / "dask" / name) == without_provenance(tmp_path / "single" / name), name


def without_provenance(path: Path) -> bytes:
    """The file's bytes, its provenance record (rankscope/reporting/provenance.py) left out."""
    if path.name == "provenance.json":
        return b""
    if path.name == "summary.json":
        data = json.loads(path.read_text())
        del data["provenance"]
        data.pop("timing", None)  # tune's seconds spent differ too
        return json.dumps(data).encode()
    if path.name in ("report.md", "report.html"):
        return path.read_bytes().split(b"Provenance")[0]
    return path.read_bytes()


def test_warnings_a_task_gives_on_a_worker_are_given_here_once(dask_client) -> None:
    """Before: a warning given on a worker went to the worker's log, once per worker, unformatted (rag's
    answer pattern that does not compile: two raw UserWarnings of two lines each for local:2); now each
    text once, here, where the command prints it as its one warning line."""
    import warnings

    from rankscope.workflows.common.fanout import run_tasks

    calls = [("pattern '(' does not compile", UserWarning)] * 3 + [("an overflow", RuntimeWarning)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = list(run_tasks(warnings.warn, calls, dask_client))
    assert results == [None] * 4
    assert [(w.category, str(w.message)) for w in caught] == [
        (UserWarning, "pattern '(' does not compile"),
        (RuntimeWarning, "an overflow"),
    ]
