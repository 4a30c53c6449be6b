"""Progress bars of long retrieval steps: printed when progress is on, silent when quiet, results unchanged."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from rankscope.core import progress
from rankscope.retrieval import counts_retriever
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.word2vec import Word2VecRetriever


def _corpus(n_docs: int) -> pd.DataFrame:
    words = [f"w{i}" for i in range(50)]
    texts = [" ".join(words[(i * 7 + j) % 50] for j in range(6)) for i in range(n_docs)]
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(n_docs)], "title": "", "text": texts})


@pytest.fixture
def bars_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress forced on, as on a terminal (stderr is captured, so not a tty: lines otherwise)."""
    monkeypatch.setattr(progress, "_quiet", False)
    monkeypatch.setattr(progress, "shows_bars", lambda: True)


@pytest.fixture
def bars_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "_quiet", True)


def test_progress_slices_cover_the_items_once_and_count_items(
    bars_on: None, capsys: pytest.CaptureFixture[str]
) -> None:
    items = list(range(10))
    assert list(progress.progress_slices(items, 4, desc="demo", unit="thing")) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    err = capsys.readouterr().err
    assert "demo" in err and "/10" in err and "thing" in err  # counts items, not the 3 slices


def test_a_single_step_shows_no_bar(bars_on: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress.progress_slices([1, 2], 4, desc="demo")) == [[1, 2]]
    assert list(progress.progress(["only"], desc="demo", total=1)) == ["only"]
    assert capsys.readouterr().err == ""


def test_progress_names_the_item_being_worked_on(bars_on: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress.progress(["bm25", "tfidf"], desc="retrievers", total=2, label=str)) == ["bm25", "tfidf"]
    err = capsys.readouterr().err
    assert "retrievers" in err and "[bm25]" not in err  # the postfix follows the counts, after a comma
    assert ", bm25]" in err and ", tfidf]" in err


def test_quiet_environment_variable_silences_bars(monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "_quiet", None)
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    monkeypatch.setenv("RANKSCOPE_QUIET", "1")
    assert progress.is_quiet()
    monkeypatch.setenv("RANKSCOPE_QUIET", "0")
    assert not progress.is_quiet()


def test_progress_slices_refuses_a_non_positive_size() -> None:
    with pytest.raises(ValueError, match="positive"):
        list(progress.progress_slices([1], 0, desc="demo"))


def test_indexing_shows_a_bar_and_the_same_counts_as_when_quiet(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(5000)  # more than one 4096-text chunk
    monkeypatch.setattr(progress, "_quiet", True)
    quiet = BM25().index(corpus)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "_quiet", False)
    shown = BM25().index(corpus)
    err = capsys.readouterr().err
    assert "indexing" in err and "/5000" in err
    for name, array in quiet.counts_.to_arrays().items():
        assert np.array_equal(array, shown.counts_.to_arrays()[name]), name


def test_a_large_search_shows_a_bar_of_queries(
    bars_on: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(200)
    queries = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "text": ["w1 w2", "w3", "w4 w5 w6"]})
    model = BM25().index(corpus)
    one_batch = model.search(queries, k=5)
    assert capsys.readouterr().err == ""  # few candidates: over at once, nothing to show
    monkeypatch.setattr(counts_retriever, "BAR_CANDIDATES", 1)
    batched = model.search(queries, k=5)
    err = capsys.readouterr().err
    assert "searching" in err and "/3" in err
    pd.testing.assert_frame_equal(one_batch, batched)


def test_quiet_search_prints_nothing(
    bars_off: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(counts_retriever, "BAR_CANDIDATES", 1)
    model = BM25().index(_corpus(5000))
    model.search(pd.DataFrame({"query_id": ["q1", "q2"], "text": ["w1", "w2"]}), k=3)
    assert capsys.readouterr().err == ""


def test_word2vec_training_shows_epochs_and_trains_the_same_vectors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(60)
    monkeypatch.setattr(progress, "_quiet", True)
    quiet = Word2VecRetriever(epochs=4, vector_size=8).index(corpus)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "_quiet", False)
    shown = Word2VecRetriever(epochs=4, vector_size=8).index(corpus)
    err = capsys.readouterr().err
    assert "training word2vec" in err and "/4" in err and "epoch" in err
    assert np.array_equal(quiet.keyed_vectors_.vectors, shown.keyed_vectors_.vectors)
    assert np.array_equal(quiet.doc_vectors_, shown.doc_vectors_)


def test_word2vec_analyses_and_searches_in_chunks_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(60)
    queries = pd.DataFrame({"query_id": [f"q{i}" for i in range(7)], "text": [f"w{i} w{i + 9}" for i in range(7)]})
    model = Word2VecRetriever(epochs=2, vector_size=8).index(corpus)
    whole = model.search(queries, k=4)
    monkeypatch.setattr("rankscope.retrieval.word2vec.CHUNK", 3)
    monkeypatch.setattr("rankscope.retrieval.dense_index.CHUNK", 3)  # search chunks live beside FAISS
    monkeypatch.setattr(progress, "_quiet", False)
    chunked = Word2VecRetriever(epochs=2, vector_size=8).index(corpus)
    err = capsys.readouterr().err
    assert "analysing documents" in err and "/60" in err
    assert np.array_equal(model.doc_vectors_, chunked.doc_vectors_)
    pd.testing.assert_frame_equal(whole, chunked.search(queries, k=4))
    err = capsys.readouterr().err
    assert "searching" in err and "/7" in err


def test_the_bar_names_the_step_running_now(bars_on: None, capsys: pytest.CaptureFixture[str]) -> None:
    """While the item for ``w2v`` is being made (a slow search inside the generator), the bar says
    w2v, not the step before (issue 29 item 7: ``systems 3/4 [w2v]`` showed while dense encoded)."""
    import sys

    names = ["bm25", "w2v", "dense"]

    def made():  # type: ignore[no-untyped-def]
        for name in names:
            print(f"<making {name}>", file=sys.stderr)
            yield name

    assert list(progress.progress(made(), desc="systems", total=3, steps=names)) == names
    err = capsys.readouterr().err
    for name in names:
        before = err[: err.index(f"<making {name}>")]
        assert before.rstrip().endswith(f", {name}]"), before[-80:]


LOOP = """
from rankscope.core.progress import progress, progress_slices
for _ in progress(["bm25", "tfidf", "dense"], desc="systems", total=3, unit="system", label=str):
    pass
for _ in progress_slices(list(range(1000)), 50, desc="indexing", unit="doc"):
    pass
for _ in progress(iter(range(250)), desc="scoring", unit="query"):
    pass
print("done")
"""


def _piped(env_quiet: str | None) -> subprocess.CompletedProcess[str]:
    """LOOP in a real process whose stderr is a pipe (not a terminal), as in CI or ``2> log``."""
    env = {k: v for k, v in os.environ.items() if k != "RANKSCOPE_QUIET"}
    if env_quiet is not None:
        env["RANKSCOPE_QUIET"] = env_quiet
    return subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True, env=env, check=True, timeout=60)


def test_in_a_pipe_progress_is_sparse_lines_with_counts() -> None:
    """Issue 49 item 8: with stderr not a terminal there was no progress at all (a long ``rag`` in CI was
    silent); now a line per step, or per tenth of a long loop, with the counts, and no bar's carriage returns."""
    done = _piped(None)
    assert done.stdout == "done\n"
    lines = [re.sub(r", \d+ s$", "", line) for line in done.stderr.splitlines()]
    assert lines[:3] == ["systems: 1/3 system (bm25)", "systems: 2/3 system (tfidf)", "systems: 3/3 system (dense)"]
    assert lines[3:13] == [f"indexing: {n}/1000 doc" for n in range(100, 1001, 100)]  # 20 slices, 10 lines
    assert lines[13:] == ["scoring: 1 query", "scoring: 10 query", "scoring: 100 query"]  # no total: 1, 10, 100
    assert "\r" not in done.stderr and all(re.search(r", \d+ s$", line) for line in done.stderr.splitlines())


def test_in_a_pipe_quiet_prints_nothing() -> None:
    assert _piped("1").stderr == ""
