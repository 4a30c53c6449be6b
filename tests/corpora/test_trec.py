"""TREC qrels and run files: reading, writing, strictness, tie order."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import FormatError, SchemaError
from rankscope.corpora.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- qrels -----------------------------------------------------------------------------
def test_qrels_reads_ids_as_strings_and_keeps_file_order(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.txt", "007 0 d10 2\n007 0 d2 0\n7\tQ0\td10\t-1\n\n12 0 NA 1\n")
    qrels = read_trec_qrels(path)
    assert qrels.columns.tolist() == ["query_id", "doc_id", "relevance"]
    assert qrels["query_id"].tolist() == ["007", "007", "7", "12"]
    assert qrels["doc_id"].tolist() == ["d10", "d2", "d10", "NA"]  # "NA" is an id, not a missing value
    assert qrels["relevance"].tolist() == [2, 0, -1, 1]
    assert str(qrels["relevance"].dtype) == "int64"


def test_qrels_match_ir_measures_reader(tmp_path: Path) -> None:
    text = "".join(f"q{q} 0 doc{d} {(q * d) % 4 - 1}\n" for q in range(1, 6) for d in range(1, 9))
    path = _write(tmp_path / "qrels", text)
    ours = {(q, d): r for q, d, r in read_trec_qrels(path).itertuples(index=False)}
    theirs = {(x.query_id, x.doc_id): x.relevance for x in ir_measures.read_trec_qrels(str(path))}
    assert ours == theirs and len(ours) == 40


def test_qrels_crlf_bom_and_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "q.txt"
    plain.write_bytes(b"\xef\xbb\xbf1 0 a 1\r\n1 0 b 3\r\n")
    packed = tmp_path / "q.txt.gz"
    packed.write_bytes(gzip.compress(b"1 0 a 1\n1 0 b 3\n"))
    for path in (plain, packed):
        assert read_trec_qrels(path).values.tolist() == [["1", "a", 1], ["1", "b", 3]]


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("1 0 a 1\n1 0 b\n", 2, "expected 4 fields"),
        ("1 0 a 1\n1 0 b 1 x\n", 2, "found 5 field(s)"),
        ("1 0 a 1 x\n1 0 b 1\n", 1, "found 5 field(s)"),
        ("1 0 a 1\n\n1 0 b high\n", 3, "relevance must be an integer, found 'high'"),
        ("1 0 a 1.5\n", 1, "relevance must be an integer, found '1.5'"),
        ("1 0 a 1\n2 0 a 1\n1 0 a 2\n", 3, "duplicate qrels entry for query, document '1', 'a' (first at line 1)"),
    ],
)
def test_bad_qrels_name_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = _write(tmp_path / "bad.qrels", text)
    with pytest.raises(FormatError) as info:
        read_trec_qrels(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert fragment in str(info.value)


def test_empty_and_invalid_utf8_qrels(tmp_path: Path) -> None:
    empty = _write(tmp_path / "empty", "\n \n")
    with pytest.raises(FormatError, match="empty qrels file"):
        read_trec_qrels(empty)
    broken = tmp_path / "latin1"
    broken.write_bytes(b"1 0 a 1\n1 0 caf\xe9 1\n")
    with pytest.raises(FormatError) as info:
        read_trec_qrels(broken)
    assert info.value.line == 2 and "invalid UTF-8" in str(info.value)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such qrels file"):
        read_trec_qrels(tmp_path / "nope")


def test_qrels_round_trip_and_atomic_overwrite(tmp_path: Path) -> None:
    qrels = pd.DataFrame({"query_id": ["2", "10", "2"], "doc_id": ["x", "y", "z"], "relevance": [1, -1, 0]})
    path = tmp_path / "out.qrels"
    write_trec_qrels(qrels, path)
    assert path.read_text() == "2 0 x 1\n10 0 y -1\n2 0 z 0\n"
    pd.testing.assert_frame_equal(read_trec_qrels(path), qrels, check_dtype=False)
    bad = qrels.assign(doc_id=["x", "has space", "z"])
    with pytest.raises(SchemaError, match="'has space' is empty or contains whitespace"):
        write_trec_qrels(bad, path)
    assert path.read_text() == "2 0 x 1\n10 0 y -1\n2 0 z 0\n"  # previous file untouched
    assert [p.name for p in tmp_path.iterdir()] == ["out.qrels"]  # no temporary left behind


# --- runs ------------------------------------------------------------------------------
def test_run_ranks_follow_scores_and_tie_rule_not_file_ranks(tmp_path: Path) -> None:
    # file ranks are nonsense on purpose: trec_eval ignores them and so do we
    path = _write(
        tmp_path / "run",
        "q1 Q0 d1 1 0.5 t\nq1 Q0 d3 2 0.9 t\nq1 Q0 d2 3 0.5 t\nq0 Q0 d9 1 -2e-1 t\nq1 Q0 d10 9 0.5 t\n",
    )
    run = read_trec_run(path)
    assert run.columns.tolist() == ["query_id", "doc_id", "score", "rank"]
    # q1 first (first appearance); ties at 0.5 by doc_id descending in byte order: d2 > d10 > d1
    assert run["query_id"].tolist() == ["q1", "q1", "q1", "q1", "q0"]
    assert run["doc_id"].tolist() == ["d3", "d2", "d10", "d1", "d9"]
    assert run["rank"].tolist() == [1, 2, 3, 4, 1]
    assert run["score"].tolist() == [0.9, 0.5, 0.5, 0.5, -0.2]


def test_run_tie_order_matches_ir_measures_sorted_scores(tmp_path: Path) -> None:
    lines = [f"q{q} Q0 D{d} 0 {(d * 7 + q) % 5} sys\n" for q in range(3) for d in range(20)]
    path = _write(tmp_path / "run", "".join(lines))
    run = read_trec_run(path)
    for qid, group in run.groupby("query_id", sort=False):
        theirs = [(s.doc_id, s.score) for s in ir_measures.read_trec_run(str(path)) if s.query_id == qid]
        expected = sorted(theirs, key=lambda x: (x[1], x[0]), reverse=True)
        assert list(zip(group["doc_id"], group["score"])) == expected
        assert group["rank"].tolist() == list(range(1, 21))


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("q Q0 a 1 0.5 t\nq Q0 b 2 0.4\n", 2, "expected 6 fields"),
        ("q Q0 a 1 nan t\n", 1, "score must be a finite number, found 'nan'"),
        ("q Q0 a 1 0.5 t\nq Q0 b 2 inf t\n", 2, "found 'inf'"),
        ("q Q0 a one 0.5 t\n", 1, "rank must be a finite number, found 'one'"),
        ("q Q0 a 1 0.5 t\nq Q0 a 2 0.4 t\n", 2, "duplicate run entry for query, document 'q', 'a' (first at line 1)"),
        ("q Q0 a 1 0.5 t\nq Q0 b 2 0.4", 2, "expected 6 fields"),  # truncated last line
    ],
)
def test_bad_runs_name_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = _write(tmp_path / "bad.run", text)
    with pytest.raises(FormatError) as info:
        read_trec_run(path)
    assert info.value.line == line and fragment in str(info.value)


def test_run_round_trip_full_precision_gzip(tmp_path: Path) -> None:
    run = pd.DataFrame(
        {"query_id": ["b", "a", "b", "a"], "doc_id": ["1", "2", "3", "4"], "score": [0.1 + 0.2, 1 / 3, 2.0, 1e-300]}
    )
    path = tmp_path / "run.txt.gz"
    write_trec_run(run, path, tag="mine")
    text = gzip.decompress(path.read_bytes()).decode()
    assert text.splitlines() == [
        "b Q0 3 1 2.0 mine",
        "b Q0 1 2 0.30000000000000004 mine",
        "a Q0 2 1 0.3333333333333333 mine",
        "a Q0 4 2 1e-300 mine",
    ]
    back = read_trec_run(path)
    assert back["score"].tolist() == [2.0, 0.1 + 0.2, 1 / 3, 1e-300]
    theirs = {(s.query_id, s.doc_id): s.score for s in ir_measures.read_trec_run(str(path))}
    assert theirs == {("b", "3"): 2.0, ("b", "1"): 0.1 + 0.2, ("a", "2"): 1 / 3, ("a", "4"): 1e-300}


def test_run_writer_refuses_bad_input(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(SchemaError, match="^run to write: duplicate query, document 'q', 'a'$"):
        write_trec_run(run, tmp_path / "r")
    with pytest.raises(SchemaError, match="run tag"):
        write_trec_run(run.iloc[:1], tmp_path / "r", tag="two words")
    with pytest.raises(SchemaError, match="missing column"):
        write_trec_run(run.drop(columns="score"), tmp_path / "r")
    for bad_id in ("", "tab\there", "new\nline"):
        with pytest.raises(SchemaError, match=re.escape(f"doc_id {bad_id!r} is empty or contains whitespace")):
            write_trec_run(run.assign(doc_id=["a", bad_id]), tmp_path / "r")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("grouped", [True, False])
def test_writers_refuse_exactly_the_repeated_pairs_pandas_finds(tmp_path: Path, grouped: bool) -> None:
    """Runs and qrels with repeats planted, each query's rows together (one pass over the codes) or
    interleaved (the pairs sorted): refused exactly when pandas' duplicated() finds a repeat, naming the
    first row that repeats an earlier one."""
    rng = np.random.default_rng(7 + grouped)
    for trial in range(60):
        queries = rng.integers(0, 6, size=40)
        if grouped:
            queries.sort()
        docs = rng.integers(0, 400 if trial % 3 else 12, size=40)  # few documents: repeats likely
        run = pd.DataFrame({"query_id": [f"q{q}" for q in queries], "doc_id": [f"d{d}" for d in docs]})
        repeated = run.duplicated(["query_id", "doc_id"])
        scored = run.assign(score=rng.random(40))
        labelled = run.assign(relevance=rng.integers(0, 3, size=40))
        for write, table, what in ((write_trec_run, scored, "run"), (write_trec_qrels, labelled, "qrels")):
            path = tmp_path / f"{what}{trial}"
            if repeated.any():
                first = run[repeated].iloc[0]
                message = f"^{what} to write: duplicate query, document '{first['query_id']}', '{first['doc_id']}'$"
                with pytest.raises(SchemaError, match=message):
                    write(table, path)
                assert not path.exists()
            else:
                write(table, path)
                assert len(path.read_text().splitlines()) == 40


def test_writer_does_not_mutate_input(tmp_path: Path) -> None:
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]})
    before = run.copy()
    write_trec_run(run, tmp_path / "r")
    pd.testing.assert_frame_equal(run, before)
    assert (tmp_path / "r").read_text() == "q Q0 b 1 2.0 rankscope\nq Q0 a 2 1.0 rankscope\n"


def test_sort_run_matches_the_tie_rule_by_brute_force() -> None:
    """Random small runs with many ties, ordered by sorting with the rule's definition."""
    import functools

    import numpy as np

    from rankscope.corpora.schema import sort_run, trec_ranks

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        run = pd.DataFrame(
            {
                "query_id": rng.choice(["b", "a", "10", "9"], n),
                "doc_id": [f"d{x}" for x in rng.choice(40, n, replace=False)],
                "score": rng.integers(0, 3, n).astype(float),
            }
        )
        first_seen = {q: i for i, q in enumerate(dict.fromkeys(run["query_id"]))}

        def before(x, y, first_seen=first_seen) -> int:  # query first appearance, score desc, doc_id desc
            kx, ky = (first_seen[x[0]], -x[2]), (first_seen[y[0]], -y[2])
            if kx != ky:
                return -1 if kx < ky else 1
            return -1 if x[1] > y[1] else 1

        expected = sorted(run.itertuples(index=False), key=functools.cmp_to_key(before))
        got = sort_run(run)
        assert list(zip(got["query_id"], got["doc_id"])) == [(r[0], r[1]) for r in expected]
        for _, group in got.groupby("query_id", sort=False):
            assert group["rank"].tolist() == list(range(1, len(group) + 1))
        rank_of = dict(zip(zip(got["query_id"], got["doc_id"]), got["rank"]))
        assert trec_ranks(run).tolist() == [rank_of[k] for k in zip(run["query_id"], run["doc_id"])]


def test_run_words_after_the_tag_are_ignored_as_trec_eval_does(tmp_path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.5 tag more junk\nq1 Q0 d2 2 1.5 tag\nq2 Q0 d1 1 0.5 tag x\n")
    run = read_trec_run(path)
    assert run[["query_id", "doc_id", "score", "rank"]].values.tolist() == [
        ["q1", "d1", 2.5, 1],
        ["q1", "d2", 1.5, 2],
        ["q2", "d1", 0.5, 1],
    ]
    path.write_text("q1 Q0 d1 1 2.5 tag more\nq1 Q0 d2 2 1.5\n")
    with pytest.raises(FormatError, match="line 2: expected 6 fields"):
        read_trec_run(path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1 extra\n")
    with pytest.raises(FormatError, match="line 1: expected 4 fields"):
        read_trec_qrels(qrels)


# --- the two reading paths -----------------------------------------------------------------
@pytest.mark.parametrize("gz", [False, True])
def test_compiled_scan_and_line_by_line_path_read_the_same_tables(tmp_path: Path, gz: bool) -> None:
    """Files are scanned in C; a file the scan doubts is read line by line. On files both accept (single
    and mixed spaces and tabs, CRLF and lone CR, blank lines, words after the tag, a BOM) the tables are
    equal, and in the scanned one equal ids are one str object (what evaluation's fast coding needs)."""
    import random

    from rankscope.corpora.trec import QRELS_LAYOUT, RUN_LAYOUT, _scanned, _table_from_lines

    rng = random.Random(7)
    rows = [
        (f"q{q}", f"d{rng.randrange(500)}", rng.random() * 10 ** rng.randrange(-5, 5), rng.randrange(-1, 4))
        for q in range(40)
    ]
    rows += [(f"q{q}", f"d{d}", float(d % 3), d % 2) for q in range(3) for d in range(600, 640)]  # tied scores
    rows += [("q\u00e9", "d\u4e2d", 1e-300, 7), ("q9", "d9", -0.0, -2)]  # non-ASCII ids, tiny and signed zero
    rows = list({(q, d): (q, d, s, r) for q, d, s, r in rows}.values())
    suffix = ".gz" if gz else ""

    def write(name: str, lines: list[str], bom: bool = False) -> Path:
        path = tmp_path / (name + suffix)
        data = ("\ufeff" if bom else "").encode() + "".join(lines).encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    runs = [
        write("space", [f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s, _ in rows]),
        write("mixed", [f" {q}  Q0\t{d} 1 {s!r} tag extra\r\n\n" for q, d, s, _ in rows], bom=True),
        write("cr", [f"{q}\tQ0\t{d}\t{i}\t{s:.17g}\ttag\r" for i, (q, d, s, _) in enumerate(rows)]),
    ]
    qrels = [
        write("qspace", [f"{q} 0 {d} {r}\n" for q, d, _, r in rows]),
        write("qmixed", [f"{q}\t0  {d} {r:+d}\r\n" for q, d, _, r in rows], bom=True),
    ]
    for paths, layout in ((runs, RUN_LAYOUT), (qrels, QRELS_LAYOUT)):
        for path in paths:
            scanned = _scanned(path, layout).frame()
            assert scanned is not None, path
            pd.testing.assert_frame_equal(scanned, _table_from_lines(path, layout), check_dtype=False)
            by_pair = {(q, d): v for q, d, v in scanned.iloc[:, :3].itertuples(index=False)}
            assert by_pair == {(q, d): s if layout is RUN_LAYOUT else r for q, d, s, r in rows}
            same = scanned["query_id"].to_numpy(dtype=object)
            assert len({id(v) for v in same[same == "q1"]}) == 1


@pytest.mark.parametrize(
    "line",
    [
        "q1 Q0 d1 1 0.5" + "0" * 70 + " t\n",  # a number longer than the scan parses
        "q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n",  # a repeated pair
        "q1 Q0 d1 1 0x1p3 t\n",  # float() reads it, the NUMBER grammar does not
        "q1 Q0 'd1' 1 0.5 t\n",  # a quoted id
        "q1 Q0 d1 1 0.5\n",  # a field missing
    ],
)
def test_the_scan_leaves_doubtful_files_to_the_line_by_line_path(tmp_path: Path, line: str) -> None:
    from rankscope.corpora.trec import RUN_LAYOUT, _scanned

    path = _write(tmp_path / "run", line)
    assert _scanned(path, RUN_LAYOUT) is None
    if "0" * 70 in line:
        assert read_trec_run(path)["score"].tolist() == [0.5]  # valid: the line-by-line path reads it
    else:
        with pytest.raises(FormatError, match="line"):
            read_trec_run(path)


def test_scores_are_read_bit_for_bit_as_float_reads_them(tmp_path: Path) -> None:
    """The scan's number parser (a fast path for short decimals, strtod otherwise) against float()
    on random doubles written in the ways tools write them."""
    import random
    import struct

    rng = random.Random(1)
    texts = []
    for _ in range(20_000):
        value = rng.choice(
            [
                rng.random(),
                rng.uniform(-1e6, 1e6),
                rng.random() * 10 ** rng.randrange(-30, 30),
                struct.unpack("d", struct.pack("Q", rng.getrandbits(62)))[0],
            ]
        )
        text = rng.choice(["{!r}", "{:.3f}", "{:.17g}", "{:.6e}", "{:.15f}", "{:.20f}", "{:+.1f}"]).format(value)
        if len(text) <= 60:
            texts.append(text)
    path = _write(tmp_path / "run", "".join(f"q Q0 d{i} 1 {text} t\n" for i, text in enumerate(texts)))
    read = read_trec_run(path).set_index("doc_id")["score"]
    expected = pd.Series([float(text) for text in texts], index=[f"d{i}" for i in range(len(texts))])
    assert (read[expected.index].to_numpy().view("int64") == expected.to_numpy().view("int64")).all()


@pytest.mark.parametrize("storage", ["python", "pyarrow", "object"])
def test_coded_table_numbers_ids_in_order_of_first_appearance(storage: str) -> None:
    """Codes and distinct ids as a dictionary filled row by row gives them, whatever the columns' storage."""
    from rankscope.corpora.trec import coded_table

    if storage == "pyarrow":
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(5)
    queries = [f"q{i}" for i in rng.integers(0, 30, size=500)]
    docs = [f"d{i}" for i in rng.integers(0, 200, size=500)]
    dtype = object if storage == "object" else pd.StringDtype(storage)
    run = pd.DataFrame({"query_id": pd.array(queries, dtype=dtype), "doc_id": pd.array(docs, dtype=dtype)})
    coded = coded_table(run.assign(score=rng.random(500)), "run")
    for ids, codes, names in ((queries, coded.query, coded.query_names), (docs, coded.doc, coded.doc_names)):
        first: dict[str, int] = {}
        expected = [first.setdefault(value, len(first)) for value in ids]
        assert codes.tolist() == expected
        assert names.tolist() == list(first) and names.dtype == object
