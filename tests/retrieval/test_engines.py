"""The engine retrievers (pisa, lucene): hand-computed BM25 of each engine, k1/b at query time, the tie
rule at the cut, and the one-line error when an engine is not installed."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.retrieval.engines.common import TIE_MARGIN
from rankscope.retrieval.registry import make_retriever, retriever_class

CORPUS = pd.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4"],
        "title": ["", "", "", ""],
        "text": [
            "boundary layer flow over a flat plate",  # 7 tokens, 5 without Lucene's stopwords
            "heat transfer in supersonic flow flows",  # flows stems to flow: tf 2
            "the shock wave",
            "plate buckling",
        ],
    }
)
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _needs(engine: str) -> None:
    reason = retriever_class(engine).unavailable()
    if reason:
        pytest.skip(reason)


def _bm25(tf: float, dl: float, avgdl: float, k1: float, b: float) -> float:
    return tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_pisa_scores_are_robertson_bm25_over_all_tokens() -> None:
    """PISA: idf = max(1e-6, log((N - df + 0.5) / (df + 0.5))) x (k1 + 1); lengths count stopwords
    (Terrier's list is removed from queries only)."""
    _needs("pisa")
    k1, b = 1.2, 0.75
    retriever = make_retriever(f"pisa:k1={k1},b={b}").index(CORPUS)
    lengths, n = [7, 6, 3, 2], 4
    avgdl = sum(lengths) / n

    def idf(df: int) -> float:
        return max(1e-6, math.log((n - df + 0.5) / (df + 0.5))) * (k1 + 1)

    run = retriever.search({"q": "flow plate"}, k=10)
    expected = {
        "d1": (idf(2) + idf(2)) * _bm25(1, 7, avgdl, k1, b),
        "d2": idf(2) * _bm25(2, 6, avgdl, k1, b),
        "d4": idf(2) * _bm25(1, 2, avgdl, k1, b),
    }
    assert run["doc_id"].tolist() == sorted(expected, key=expected.get, reverse=True)
    np.testing.assert_allclose(run["score"], sorted(expected.values(), reverse=True), rtol=1e-5)  # idf floored
    heat = retriever.search({"q": "heat"}, k=10)  # in one document of four: a positive idf
    assert heat["doc_id"].tolist() == ["d2"]
    np.testing.assert_allclose(heat["score"], [idf(1) * _bm25(1, 6, avgdl, k1, b)], rtol=1e-5)


def test_pisa_takes_k1_and_b_at_query_time_and_keeps_its_stemmer() -> None:
    _needs("pisa")
    retriever = make_retriever("pisa").index(CORPUS)
    retriever.set_params(k1=2.0, b=0.1)
    fresh = make_retriever("pisa:k1=2.0,b=0.1").index(CORPUS)
    pd.testing.assert_frame_equal(retriever.search({"q": "flow plate"}), fresh.search({"q": "flow plate"}))
    assert not retriever.search({"q": "flow plate"}).equals(
        make_retriever("pisa").index(CORPUS).search({"q": "flow plate"})
    )
    with pytest.raises(ValueError, match="stemmer cannot change after index"):
        retriever.set_params(stemmer="none")


def test_engine_ties_beyond_the_margin_are_cut_by_the_tie_rule() -> None:
    """More tied documents than k + TIE_MARGIN: the engine is asked for every hit and the k highest ids win."""
    _needs("pisa")
    n = TIE_MARGIN + 40
    ids = [f"t{i:03d}" for i in range(n)]
    corpus = pd.DataFrame({"doc_id": ids, "title": [""] * n, "text": ["same words here"] * n})
    run = make_retriever("pisa").index(corpus).search({"q": "words"}, k=3)
    assert run["doc_id"].tolist() == sorted(ids, reverse=True)[:3]


@pytest.mark.java
def test_lucene_scores_are_lucene_bm25_rounded_to_four_decimals() -> None:
    """Lucene's BM25 (no k1 + 1; idf = log(1 + (N - df + 0.5) / (df + 0.5)); lengths without its 33
    stopwords, exact in its one-byte norm up to 40), rounded to 4 decimals by Anserini."""
    _needs("lucene")
    k1, b = 0.9, 0.4
    retriever = make_retriever("lucene").index(CORPUS)
    lengths, n = [6, 5, 2, 2], 4  # "over" is not one of Lucene's stopwords; "a", "in", "the" are
    avgdl = sum(lengths) / n

    def idf(df: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    run = retriever.search({"q": "flow plate"}, k=10)
    expected = {
        "d1": 2 * idf(2) * _bm25(1, 6, avgdl, k1, b),
        "d2": idf(2) * _bm25(2, 5, avgdl, k1, b),
        "d4": idf(2) * _bm25(1, 2, avgdl, k1, b),
    }
    assert run["doc_id"].tolist() == sorted(expected, key=expected.get, reverse=True)
    rounded = np.float32([round(v, 4) for v in sorted(expected.values(), reverse=True)])
    np.testing.assert_array_equal(run["score"].to_numpy(), rounded.astype(np.float64))
    retriever.set_params(k1=1.5)
    assert run["score"].iloc[0] != retriever.search({"q": "flow plate"}, k=1)["score"].iloc[0]


@pytest.mark.java
def test_parity_benchmark_lengths_are_lucenes_one_byte_norms(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_engine_parity's emulated lengths are Lucene's own SmallFloat round trip, and the first one
    Lucene does not keep is 41 (docs/engines.md: exact up to 40 terms, then rounded down)."""
    _needs("lucene")
    from rankscope.retrieval.engines.lucene import _anserini

    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its neighbour extras.py
    spec = importlib.util.spec_from_file_location("bench_engine_parity", BENCHMARKS / "bench_engine_parity.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    small_float = _anserini("org.apache.lucene.util.SmallFloat")
    lengths = np.arange(5000)
    stored = np.array([small_float.byte4ToInt(small_float.intToByte4(int(n))) for n in lengths])
    np.testing.assert_array_equal(bench.lucene_lengths(lengths), stored)
    assert lengths[stored != lengths][0] == 41


def test_search_with_lucene_not_installed_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    monkeypatch.setenv("RANKSCOPE_ENGINES", str(tmp_path))  # no jar there
    code = main(
        ["search", "--dataset", str(data_dir / "cranfield"), "--retriever", "lucene", "--out", str(tmp_path / "r")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("rankscope search: error: the lucene retriever needs")
    assert ("rankscope engines install lucene" in err[-1]) or ("rankscope[lucene]" in err[-1])
