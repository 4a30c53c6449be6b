"""The compiled kernel equals its reference: scipy's product, then numpy top-k by the tie rule.

Scores must be bit for bit equal (same summation order, no fused multiply-add) and the
documents and their order identical, including ties at the cut, negative weights, sums that
cancel to exactly zero (not candidates), k beyond the candidates and queries with no terms.
The same holds with pruning (MaxScore over :class:`TermBounds`), which must also read fewer postings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankscope.corpora.schema import as_strings
from rankscope.retrieval import _sparse_topk
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.tfidf import TfidfRetriever
from rankscope.retrieval.topk import (
    TermBounds,
    Workspace,
    flat_top_k,
    found,
    sparse_top_k,
    start_search,
    top_k_rows,
)


def random_problem(rng: np.random.Generator, n_docs: int, n_terms: int, n_queries: int):
    """Small-integer (ties), signed (negative and cancelling) weights; some terms and queries empty."""
    weights = sp.random(
        n_terms,
        n_docs,
        density=0.2,
        format="csr",
        random_state=rng,
        data_rvs=lambda n: rng.integers(-3, 4, size=n).astype(np.float64),
    )
    weights.eliminate_zeros()
    queries = sp.random(
        n_queries,
        n_terms,
        density=0.3,
        format="csr",
        random_state=rng,
        data_rvs=lambda n: rng.choice([1.0, 2.0, -1.0, 0.5], size=n),
    )
    rank = rng.permutation(n_docs).astype(np.int64)
    return queries, weights, rank


def assert_same(queries: sp.csr_matrix, weights: sp.csr_matrix, k: int, rank: np.ndarray) -> int:
    """Kernel, exhaustive and pruned, vs reference on every row; returns how many rows had a zero-sum
    document dropped."""
    expected_positions, expected_values = top_k_rows(sp.csr_matrix(queries @ weights), k, rank)
    cancelled = 0
    for bounds in (None, TermBounds.of(weights)):
        positions, values = sparse_top_k(queries, weights, k, rank, bounds)
        assert len(positions) == len(values) == queries.shape[0] == len(expected_positions)
        for got_p, got_v, want_p, want_v in zip(positions, values, expected_positions, expected_values):
            np.testing.assert_array_equal(got_p, want_p)
            np.testing.assert_array_equal(got_v, want_v)  # exact, not approximate
    for row in range(queries.shape[0]):
        touched = np.unique(weights[queries[row].indices].indices)
        cancelled += len(touched) > len(sp.csr_matrix(queries[row] @ weights).indices)
    return cancelled


@pytest.mark.slow
def test_kernel_equals_reference_on_random_signed_integer_weights() -> None:
    rng = np.random.default_rng(11)
    cancelled = 0
    for _ in range(60):
        queries, weights, rank = random_problem(
            rng, int(rng.integers(1, 80)), int(rng.integers(1, 30)), int(rng.integers(0, 12))
        )
        for k in (1, 3, 10, 1000):  # 1000 is beyond every row's candidates
            cancelled += assert_same(queries, weights, k, rank)
    assert cancelled > 0  # the inputs did exercise sums that cancel to exactly zero


def skewed_problem(rng: np.random.Generator, n_docs: int, n_terms: int, n_queries: int, integer: bool):
    """Zipfian document frequencies over several of the kernel's 4096-document windows, BM25-like
    weights (frequent terms weigh less): small integers (most scores tie) or reals (sums that
    depend on the order of additions); queries of 1-6 distinct terms counted 1 or 2 times."""
    df = np.maximum(1, n_docs // (2 * np.arange(1, n_terms + 1)))
    docs = [np.sort(rng.choice(n_docs, size=n, replace=False)) for n in df]
    idf = 1 + np.arange(n_terms) // 5
    values = [
        (rng.integers(1, 4, size=n) * w).astype(np.float64) if integer else w * rng.random(n) for n, w in zip(df, idf)
    ]
    weights = sp.csr_matrix(
        (np.concatenate(values), np.concatenate(docs), np.concatenate([[0], np.cumsum(df)])), shape=(n_terms, n_docs)
    )
    rows = [rng.choice(n_terms, size=rng.integers(1, 7), replace=False) for _ in range(n_queries)]
    queries = sp.csr_matrix(
        (
            rng.choice([1.0, 2.0], size=sum(len(r) for r in rows)),
            np.concatenate(rows),
            np.concatenate([[0], np.cumsum([len(r) for r in rows])]),
        ),
        shape=(n_queries, n_terms),
    )
    return queries, weights, rng.permutation(n_docs).astype(np.int64)


def postings_read(queries: sp.csr_matrix, weights: sp.csr_matrix, k: int, rank: np.ndarray, bounds) -> int:
    extra = () if bounds is None else (bounds.high, bounds.low)
    arrays = (queries.indptr, queries.indices, queries.data, weights.indptr, weights.indices, weights.data)
    searching = _sparse_topk.Search(*arrays, rank, k, *extra)
    searching.run()
    return searching.result()[3]


@pytest.mark.slow
@pytest.mark.parametrize("integer", [True, False])
def test_pruning_reads_fewer_postings_for_the_same_top_k(integer: bool) -> None:
    """MaxScore over several windows, with ties at every cut (integer weights) or real sums: the same
    documents and scores as the reference, and far fewer postings read for a short top k (bounds
    tighten once per window, so a corpus of one or two windows prunes little)."""
    rng = np.random.default_rng(3 if integer else 4)
    for n_docs in (5000, 30000):
        queries, weights, rank = skewed_problem(rng, n_docs, 60, 40, integer)
        for k in (1, 10, 100, 5000):
            assert_same(queries, weights, k, rank)
        # a k beyond every query's candidates prunes nothing: every posting is read
        bounds = TermBounds.of(weights)
        assert postings_read(queries, weights, n_docs, rank, bounds) == postings_read(
            queries, weights, n_docs, rank, None
        )
    # 30,000 documents (8 windows): 54k of 146k postings read with integer weights, 48k of 149k with reals
    assert postings_read(queries, weights, 10, rank, bounds) < 0.4 * postings_read(queries, weights, 10, rank, None)


def test_bounds_are_each_terms_largest_and_smallest_weight() -> None:
    weights = sp.csr_matrix(np.array([[0.0, 2.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]))
    bounds = TermBounds.of(weights)
    assert bounds.high.tolist() == [2.0, 0.0, 3.0] and bounds.low.tolist() == [-1.0, 0.0, 3.0]
    unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    with pytest.raises(ValueError, match="ascending"):
        TermBounds.of(unsorted)


def test_pruning_falls_back_to_scoring_every_posting_when_a_bound_is_not_finite() -> None:
    """A NaN weight makes the bound NaN: the query is scored exhaustively, which reports the NaN."""
    weights = sp.csr_matrix(np.array([[1.0, np.nan], [0.5, 0.0]]))
    rank = np.array([0, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="NaN"):
        sparse_top_k(sp.csr_matrix(np.array([[1.0, 1.0]])), weights, 1, rank, TermBounds.of(weights))
    positions, values = sparse_top_k(sp.csr_matrix(np.array([[0.0, 2.0]])), weights, 1, rank, TermBounds.of(weights))
    assert positions[0].tolist() == [0] and values[0].tolist() == [1.0]  # the NaN term is not in this query


def test_kernel_equals_reference_on_random_real_weights_with_int64_indices() -> None:
    rng = np.random.default_rng(5)
    weights = sp.random(300, 2000, density=0.05, format="csr", random_state=rng)
    weights.data = rng.normal(size=weights.nnz)  # float sums: the order of additions matters
    queries = sp.random(40, 300, density=0.05, format="csr", random_state=rng)
    for matrix in (weights, queries):
        matrix.indices, matrix.indptr = matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64)
    assert_same(queries, weights, 7, rng.permutation(2000).astype(np.int64))


def test_hand_computed_ties_negative_and_cancelled_scores() -> None:
    # 5 documents, 2 terms; doc 3's two postings cancel (1 - 1 = 0): not a candidate
    weights = sp.csr_matrix(np.array([[2.0, 1.0, 0.0, 1.0, -1.0], [0.0, 1.0, 2.0, -1.0, 0.0]]))
    queries = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 0.0], [-1.0, 0.0]]))
    rank = np.array([0, 1, 2, 3, 4], dtype=np.int64)  # doc ids already in byte order
    positions, values = sparse_top_k(queries, weights, 10, rank)
    # query 0: docs 0, 1, 2 tie at 2.0 (doc id descending: 2, 1, 0), then doc 4 at -1.0
    assert positions[0].tolist() == [2, 1, 0, 4] and values[0].tolist() == [2.0, 2.0, 2.0, -1.0]
    assert positions[1].tolist() == [] and values[1].tolist() == []  # no terms, no rows
    assert positions[2].tolist() == [4, 3, 1, 0] and values[2].tolist() == [1.0, -1.0, -1.0, -2.0]
    cut, cut_values = sparse_top_k(queries[:1], weights, 2, rank)
    assert cut[0].tolist() == [2, 1] and cut_values[0].tolist() == [2.0, 2.0]  # the tie settled by doc id


def test_sparse_top_k_declares_the_arguments_of_flat_top_k() -> None:
    """Typed as what it wraps (not ``*args, **kwargs``), so .ci/mypy checks its callers (retrieval/prf.py)."""
    import inspect

    wrapper, wrapped = inspect.signature(sparse_top_k), inspect.signature(flat_top_k)
    assert list(wrapper.parameters.values()) == list(wrapped.parameters.values())
    assert list(wrapper.parameters) == ["query_weights", "term_weights", "k", "doc_id_rank", "bounds", "workspace"]
    weights = sp.csr_matrix(np.array([[2.0, 1.0], [0.0, 3.0]]))
    rank = np.array([0, 1], dtype=np.int64)
    by_name = sparse_top_k(
        query_weights=sp.csr_matrix(np.array([[1.0, 1.0]])),
        term_weights=weights,
        k=1,
        doc_id_rank=rank,
        bounds=TermBounds.of(weights),
        workspace=Workspace(),
    )
    assert by_name[0][0].tolist() == [1] and by_name[1][0].tolist() == [4.0]


def test_no_queries_and_read_only_inputs() -> None:
    weights = sp.csr_matrix(np.array([[1.0, 0.0], [0.5, 2.0]]))
    for array in (weights.data, weights.indices, weights.indptr):
        array.flags.writeable = False  # as memory-mapped saved indexes are
    rank = np.array([1, 0], dtype=np.int64)
    assert sparse_top_k(sp.csr_matrix((0, 2)), weights, 5, rank) == ([], [])
    positions, values = sparse_top_k(sp.csr_matrix(np.array([[1.0, 1.0]])), weights, 5, rank)
    assert positions[0].tolist() == [1, 0] and values[0].tolist() == [2.0, 1.5]


def test_malformed_input_raises_instead_of_reading_out_of_bounds() -> None:
    weights = sp.csr_matrix(np.array([[1.0, 2.0]]))
    query = sp.csr_matrix(np.array([[1.0]]))
    with pytest.raises(ValueError, match="shapes do not chain"):
        sparse_top_k(query, weights, 1, np.array([0], dtype=np.int64))
    broken = weights.copy()
    broken.indices = np.array([0, 7], dtype=np.int32)  # document 7 of 2
    with pytest.raises(ValueError, match="document position 7 is out of range"):
        sparse_top_k(query, broken, 1, np.array([0, 1], dtype=np.int64))
    nan = weights.copy()
    nan.data = np.array([1.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        sparse_top_k(query, nan, 1, np.array([0, 1], dtype=np.int64))


@pytest.mark.parametrize("k", [10, 100])
def test_search_runs_equal_the_reference_on_a_real_collection(collection, k: int) -> None:
    """BM25 and both TF-IDF variants: search() through the pruned kernel = reference product + top-k."""
    queries = collection.queries
    for retriever in (BM25(), BM25(variant="okapi"), TfidfRetriever(), TfidfRetriever(variant="classic")):
        retriever.index(collection.corpus)
        run = retriever.search(queries, k=k)
        counts = retriever.counts_
        matrix = retriever._scores(list(queries["text"]))
        positions, values = top_k_rows(matrix, k, counts.doc_id_rank)
        expected = pd.DataFrame(
            {
                "query_id": as_strings(np.repeat(queries["query_id"].to_numpy(), [len(p) for p in positions])),
                "doc_id": np.concatenate([counts.doc_ids[p] for p in positions]),
                "score": np.concatenate(values),
            }
        )
        pd.testing.assert_frame_equal(
            run[["query_id", "doc_id", "score"]].astype({"doc_id": str}),
            expected.astype({"doc_id": str}),
            check_exact=True,
        )


def test_pruned_search_equals_exhaustive_search_with_feedback(collection, monkeypatch) -> None:
    """RM3 and Bo1 expand queries to many real-valued terms: pruned and exhaustive runs are identical."""
    for spec in ({"prf": "rm3"}, {"prf": "bo1", "variant": "okapi"}):
        retriever = BM25(**spec).index(collection.corpus)
        pruned = retriever.search(collection.queries, k=10)
        with monkeypatch.context() as patch:
            patch.setattr(BM25, "_term_bounds", lambda self: None)  # the kernel without bounds scores every posting
            exhaustive = retriever.search(collection.queries, k=10)
        pd.testing.assert_frame_equal(pruned, exhaustive, check_exact=True)


def test_missing_build_says_how_to_fix_it() -> None:
    code = "import sys; sys.modules['rankscope.retrieval._sparse_topk'] = None; import retrieval.topk"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode != 0
    assert "is not built" in result.stderr and "pip install -e ." in result.stderr


def test_a_workspace_reused_query_after_query_leaks_no_score() -> None:
    """One workspace through many calls (one query each, then all at once), with and without bounds, over
    problems of two corpus sizes: every query's result equals that of a fresh workspace. A score or a
    touched mark left in the dense accumulator or MaxScore's window would add to, or hide, a document of
    a later query."""
    rng = np.random.default_rng(21)
    workspace = Workspace()
    for n_docs in (9000, 300):  # the dense accumulator is re-allocated when the corpus size changes
        queries, weights, rank = skewed_problem(rng, n_docs, 40, 30, integer=False)
        for bounds in (None, TermBounds.of(weights)):
            for k in (1, 10):
                want = sparse_top_k(queries, weights, k, rank, bounds)
                one_by_one = [sparse_top_k(queries[[q]], weights, k, rank, bounds, workspace) for q in range(30)]
                assert [p.tolist() for got, _ in one_by_one for p in got] == [p.tolist() for p in want[0]]
                assert [v.tolist() for _, got in one_by_one for v in got] == [v.tolist() for v in want[1]]
                together = sparse_top_k(queries, weights, k, rank, bounds, workspace)
                assert [p.tolist() for p in together[0]] == [p.tolist() for p in want[0]]


@pytest.mark.parametrize("pruned", [False, True])
def test_a_workspace_is_clean_after_a_failed_call(pruned: bool) -> None:
    """A call stopped by a bad document position midway (after document 0 was scored) leaves the workspace
    as it found it: the next query scores document 0 from zero again, it does not start from the stale 1.0."""
    rank = np.array([0, 1], dtype=np.int64)
    broken = sp.csr_matrix((np.array([1.0, 1.0]), np.array([0, 7]), np.array([0, 2])), shape=(1, 2))
    clean = sp.csr_matrix(np.array([[2.0, 3.0]]))
    query = sp.csr_matrix(np.array([[1.0]]))
    workspace = Workspace()
    with pytest.raises(ValueError, match="document position 7 is out of range"):
        sparse_top_k(query, broken, 2, rank, TermBounds.of(broken) if pruned else None, workspace)
    positions, values = sparse_top_k(query, clean, 2, rank, TermBounds.of(clean) if pruned else None, workspace)
    assert positions[0].tolist() == [1, 0] and values[0].tolist() == [3.0, 2.0]


def test_the_workspace_argument_must_be_a_workspace() -> None:
    weights = sp.csr_matrix(np.array([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="workspace must be a Workspace or None, got dict"):
        flat_top_k(sp.csr_matrix(np.array([[1.0]])), weights, 1, np.array([0, 1], dtype=np.int64), None, {})  # type: ignore[arg-type]


@pytest.mark.parametrize("pruned", [False, True])
def test_a_search_claimed_in_turns_by_two_workspaces_gives_the_rows_of_one(pruned: bool) -> None:
    """Two workspaces take turns on one Search, claiming 1 to 4 queries a turn (as two threads may): the rows
    equal the reference's, each query's in its own place, and ``done`` counts the queries scored."""
    rng = np.random.default_rng(8)
    queries, weights, rank = skewed_problem(rng, 5000, 40, 37, integer=True)
    want_positions, want_values = top_k_rows(sp.csr_matrix(queries @ weights), 7, rank)
    searching = start_search(queries, weights, 7, rank, TermBounds.of(weights) if pruned else None)
    workspaces, turns = [Workspace(), Workspace()], 0
    while searching.done < 37:
        before = searching.done
        assert (
            searching.run(workspaces[turns % 2], 1 + turns % 4)
            == searching.done - before
            == min(1 + turns % 4, 37 - before)
        )
        turns += 1
    assert turns == 16 and searching.run(workspaces[0]) == 0  # 1+2+3+4 three times, 1+2+3, 1; then nothing left
    counts, positions, values = found(searching)
    assert counts.tolist() == [len(p) for p in want_positions]
    assert positions.tolist() == np.concatenate(want_positions).tolist()
    assert values.tolist() == np.concatenate(want_values).tolist()  # exact


def test_a_search_on_four_threads_gives_the_rows_of_one() -> None:
    rng = np.random.default_rng(9)
    queries, weights, rank = skewed_problem(rng, 20000, 60, 400, integer=False)
    bounds = TermBounds.of(weights)
    alone = flat_top_k(queries, weights, 5, rank, bounds)
    searching = start_search(queries, weights, 5, rank, bounds)
    with ThreadPoolExecutor(4) as pool:
        scored = list(pool.map(lambda _: searching.run(Workspace()), range(4)))
    assert sum(scored) == searching.done == 400
    for got, want in zip(found(searching), alone):
        np.testing.assert_array_equal(got, want)


def test_a_search_stops_at_a_failed_query_and_reports_it() -> None:
    """Query 3 meets a NaN score: claims stop there (query 4 is never scored), and the error names query 3.
    Rows are given only once every query is scored."""
    rank = np.arange(3, dtype=np.int64)
    weights = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [np.nan, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    queries = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 0, 1.0], [1.0, 0, 1.0], [0, 1.0, 0], [1.0, 1.0, 0]]))
    searching = start_search(queries, weights, 2, rank)
    first, second = Workspace(), Workspace()
    assert searching.run(first, 3) == 3  # queries 0-2
    with pytest.raises(RuntimeError, match="2 of the 5 queries are not scored yet"):
        found(searching)
    assert searching.run(second) == 0 and searching.run(first) == 0  # query 3 fails; 4 is not claimed
    assert searching.done == 3
    with pytest.raises(ValueError, match=r"^query 3 of the batch has a NaN score"):
        found(searching)


def test_threads_report_the_lowest_failed_query_whichever_fails_first() -> None:
    """Queries from 50 on meet a NaN score (of the rare term 59): query 50 only after scoring every term's
    postings, the later ones at once. Four threads claim them in order, so while one scores query 50 the
    others fail on later queries first: the error is query 50's all the same, the one a single thread meets."""
    rng = np.random.default_rng(10)
    _, weights, rank = skewed_problem(rng, 200_000, 60, 1, integer=False)
    weights = weights.copy()
    weights.data[weights.indptr[59]] = np.nan
    queries = sp.lil_matrix((300, 60))
    queries[:50, :10] = 1.0
    queries[50, :] = 1.0
    queries[51:, 59] = 1.0
    queries = sp.csr_matrix(queries)
    with pytest.raises(ValueError, match=r"^query 50 of the batch has a NaN score"):
        flat_top_k(queries, weights, 5, rank)
    for _ in range(3):
        searching = start_search(queries, weights, 5, rank)
        with ThreadPoolExecutor(4) as pool:
            runs = [pool.submit(searching.run, Workspace()) for _ in range(4)]
        assert sum(run.result() for run in runs) == 50  # queries 0-49
        with pytest.raises(ValueError, match=r"^query 50 of the batch has a NaN score"):
            found(searching)
