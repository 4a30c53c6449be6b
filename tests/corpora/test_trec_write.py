"""The compiled writer of a TREC run's lines (``corpora/_trec_write.c``) gives the bytes of the
f-string it replaced, ``f"{q} Q0 {d} {k} {s!r} {tag}\\n"``, for every kind of double: ``repr``'s
shortest round-trip text, exponents, signed zero, infinities, NaN, subnormals, and any Unicode id; with
orjson's texts of the scores given (``shortest``) as without them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.corpora import _trec_write
from rankscope.corpora.schema import sort_run, validate
from rankscope.corpora.trec import _shortest, read_trec_run, write_trec_run

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    0.1 + 0.2,
    1 / 3,
    2.5,
    1e16,
    1e22,
    1e-5,
    1e-4,
    123456789.0,
    1e300,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    math.inf,
    -math.inf,
    math.nan,
    9007199254740993.0,
]


def reference(queries: list[str], docs: list[str], ranks: list[int], scores: list[float], tag: str) -> str:
    return "".join(f"{q} Q0 {d} {k} {s!r} {tag}\n" for q, d, k, s in zip(queries, docs, ranks, scores))


def test_every_kind_of_double_is_written_as_repr_writes_it() -> None:
    rng = np.random.default_rng(7)
    random = (rng.standard_normal(5_000) * 10.0 ** rng.integers(-320, 300, 5_000)).tolist()
    scores = SPECIAL + random + rng.random(5_000).astype(np.float32).astype(np.float64).tolist()
    n = len(scores)
    queries = [f"q{i % 37}" for i in range(n)]
    docs = [["d", "é", "日本語", "doc-🙂", "x" * 50][i % 5] + str(i) for i in range(n)]
    ranks = [int(r) for r in rng.integers(1, 2**40, n)]
    assert _trec_write.run_lines(queries, docs, ranks, scores, " my-tag\n") == reference(
        queries, docs, ranks, scores, "my-tag"
    )
    assert _trec_write.run_lines([], [], [], [], " t\n") == ""


def test_orjson_texts_are_copied_only_where_they_are_reprs_text() -> None:
    # every bit pattern's magnitude, scores of retrieval's ranges, float32 values, and the boundaries of
    # repr's positional range (1e-4 and 1e16, where orjson and repr choose different notations)
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**64, size=300_000, dtype=np.uint64).view(np.float64)  # NaNs too: orjson writes null
    edges = np.array([sign * 10.0**e * m for sign in (1, -1) for e in range(-6, 18) for m in (1.0, 1.0000001, 9.99)])
    scores = np.concatenate(
        [
            np.array(SPECIAL),
            bits,
            edges,
            rng.random(200_000) * 40,
            rng.standard_normal(200_000) * 10.0 ** rng.integers(-8, 20, 200_000),
            rng.random(50_000).astype(np.float32).astype(np.float64),
        ]
    )
    listed = scores.tolist()
    n = len(listed)
    queries, docs, ranks = ["q"] * n, ["d"] * n, [1] * n
    expected = reference(queries, docs, ranks, listed, "t")
    assert _trec_write.run_lines(queries, docs, ranks, listed, " t\n", _shortest(scores)) == expected
    with pytest.raises(ValueError, match="fewer numbers"):
        _trec_write.run_lines(["q", "q"], ["d", "e"], [1, 2], [1.0, 2.0], " t\n", b"[1.0]")
    with pytest.raises(ValueError, match="more numbers"):
        _trec_write.run_lines(["q"], ["d"], [1], [1.0], " t\n", b"[1.0,2.0]")
    with pytest.raises(ValueError, match="JSON array"):
        _trec_write.run_lines(["q"], ["d"], [1], [1.0], " t\n", b"1.0")


def test_anything_but_str_int_float_is_refused_not_written_otherwise() -> None:
    with pytest.raises(TypeError, match="scores must be float"):
        _trec_write.run_lines(["q"], ["d"], [1], [3], " t\n")  # repr(3) is "3", a double's is "3.0"
    with pytest.raises(TypeError, match="ranks must be int"):
        _trec_write.run_lines(["q"], ["d"], [1.0], [3.0], " t\n")
    with pytest.raises(TypeError, match="doc ids must be str"):
        _trec_write.run_lines(["q"], [7], [1], [3.0], " t\n")
    with pytest.raises(ValueError, match="differ in length"):
        _trec_write.run_lines(["q", "r"], ["d"], [1], [3.0], " t\n")


def test_a_run_file_is_the_bytes_of_the_lines_it_replaced(tmp_path: Path, monkeypatch) -> None:
    import rankscope.corpora.trec as trec

    monkeypatch.setattr(trec, "_LINES", 7)  # several pieces, joined in order
    rng = np.random.default_rng(3)
    run = pd.DataFrame(
        {
            "query_id": [f"q{i // 10}" for i in range(50)],
            "doc_id": [f"d{i}é" for i in range(50)],
            "score": np.round(rng.random(50), 1),  # ties, broken by doc_id as the file's ranks say
        }
    )
    path = tmp_path / "run.trec"
    write_trec_run(run, path, tag="sys")
    ordered = sort_run(validate(run, "run", "test"))  # the tie rule's order and ranks, as written before
    expected = reference(
        ordered["query_id"].tolist(),
        ordered["doc_id"].tolist(),
        ordered["rank"].tolist(),
        ordered["score"].tolist(),
        "sys",
    )
    assert path.read_bytes() == expected.encode("utf-8")
    assert read_trec_run(path)["rank"].tolist() == ordered["rank"].tolist() != sorted(ordered["rank"].tolist())
