"""Top-k selection over sparse scores, consistent with the tie rule.

Only documents that match at least one query term with a non-zero summed score
(the stored entries of scipy's query x document product) are candidates, so a
query never returns arbitrary non-matching documents and the work is
proportional to the candidates, not the corpus. At the k-th place, ties are cut
by doc_id descending, as the run is ordered (:func:`retrieval.base.make_run`),
so the same k documents come back every time.

:func:`sparse_top_k` is what searching uses: a compiled kernel (``_sparse_topk.c``)
that scores and selects per query without materialising the product. Given the
:class:`TermBounds` of the weights it prunes with MaxScore (documents that cannot reach
the k-th best are never fully scored) and returns exactly the same run.
:func:`top_k_rows` over scipy's product is its reference (same scores bit for bit,
same documents, same order), kept to test the kernel against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

try:
    from rankscope.retrieval import _sparse_topk
except ImportError as exc:  # required, not optional: no slow fallback
    raise ImportError(
        "rankscope's compiled top-k kernel (retrieval._sparse_topk) is not built: "
        "reinstall the package with `pip install -e .` (it needs a C compiler and the Python headers)"
    ) from exc


def top_k(values: np.ndarray, positions: np.ndarray, k: int, doc_id_rank: np.ndarray) -> np.ndarray:
    """Indices into ``values`` of the k best, in run order (score desc, then doc id desc).

    A fast path of the tie rule (partial selection, ``doc_id_rank`` from
    :func:`retrieval.termcounts.doc_id_ranks`); the reference is :func:`corpora.schema.sort_run`, and
    tests/test_tie_rule.py checks this, :func:`top_k_rows` and :func:`sparse_top_k` against it.
    """
    n = len(values)
    if n <= k:
        chosen = np.arange(n)
    else:
        kth = np.partition(values, n - k)[n - k]  # cheaper than argpartition: no index array to carry
        chosen = np.flatnonzero(values >= kth)
        if len(chosen) > k:  # a tie straddles the cut: settle it by doc id
            above = chosen[values[chosen] > kth]
            tied = chosen[values[chosen] == kth]
            best_tied = tied[np.argsort(-doc_id_rank[positions[tied]], kind="stable")[: k - len(above)]]
            chosen = np.concatenate([above, best_tied])
    return chosen[np.lexsort((-doc_id_rank[positions[chosen]], -values[chosen]))]


def top_k_rows(scores: sp.csr_matrix, k: int, doc_id_rank: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For each row of a CSR score matrix: (document positions, scores) of its top k entries, in run order."""
    indptr, indices, data = scores.indptr, scores.indices, scores.data
    positions, values = [], []
    for start, end in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
        row_pos, row_val = indices[start:end], data[start:end]
        chosen = top_k(row_val, row_pos, k, doc_id_rank)
        positions.append(row_pos[chosen])
        values.append(row_val[chosen])
    return positions, values


@dataclass(frozen=True)
class TermBounds:
    """Largest and smallest weight of each term (row) of a terms x documents matrix: what lets
    the kernel bound a term's contribution and prune (0 for a term without postings)."""

    high: np.ndarray  # float64, one per term
    low: np.ndarray

    @classmethod
    def of(cls, term_weights: sp.csr_matrix) -> TermBounds:
        """Bounds of ``term_weights``, whose documents must ascend within each term (canonical CSR)."""
        if not term_weights.has_canonical_format:
            raise ValueError("pruning needs each term's documents ascending and unique (call sum_duplicates())")
        data = np.asarray(term_weights.data, dtype=np.float64)
        starts = np.asarray(term_weights.indptr[:-1], dtype=np.int64)
        filled = np.diff(term_weights.indptr) > 0
        high, low = np.zeros(len(starts)), np.zeros(len(starts))
        if filled.any():  # reduceat over the non-empty terms only (an empty one would take its neighbour's value)
            high[filled] = np.maximum.reduceat(data, starts[filled])
            low[filled] = np.minimum.reduceat(data, starts[filled])
        return cls(high, low)


Workspace = _sparse_topk.Workspace
"""Scratch buffers of the kernel kept from one :func:`sparse_top_k` call to the next (one call at a time):
a thread searching batch after batch passes its own, so no batch allocates or clears memory
proportional to the corpus. It changes no result."""


def sparse_top_k(
    query_weights: sp.csr_matrix,
    term_weights: sp.csr_matrix,
    k: int,
    doc_id_rank: np.ndarray,
    bounds: TermBounds | None = None,
    workspace: _sparse_topk.Workspace | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``top_k_rows(query_weights @ term_weights, k, doc_id_rank)``, computed without the product:
    :func:`flat_top_k` (the same arguments) with its rows cut into one array of positions and one of
    scores per query."""
    counts, found, values = flat_top_k(query_weights, term_weights, k, doc_id_rank, bounds, workspace)
    ends = np.cumsum(counts).tolist()
    rows = list(zip([0, *ends[:-1]], ends))
    return [found[a:b] for a, b in rows], [values[a:b] for a, b in rows]


def flat_top_k(
    query_weights: sp.csr_matrix,
    term_weights: sp.csr_matrix,
    k: int,
    doc_id_rank: np.ndarray,
    bounds: TermBounds | None = None,
    workspace: _sparse_topk.Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's top ``k`` documents by the tie rule, as they come: the number of rows of each query
    (int64), then every query's positions (int64) and scores (float64) one after the other.

    A :func:`start_search` run on this thread with ``workspace`` (:data:`Workspace`; without one the buffers
    last this call). With ``bounds`` (:meth:`TermBounds.of` the same ``term_weights``) queries are scored by
    MaxScore: the same result (tests/retrieval/test_sparse_topk.py), fewer postings read.
    """
    searching = start_search(query_weights, term_weights, k, doc_id_rank, bounds)
    searching.run(workspace)
    return found(searching)


Search = _sparse_topk.Search
"""A search of a batch of queries that threads run together: each thread calls ``run(workspace)`` with its
own :data:`Workspace`, and the threads claim queries one at a time until none is left (with the GIL
released), each query's rows written to its own place; ``done`` counts the queries scored (for a progress
bar), and :func:`found` gives the rows. Any number of threads, in any order, give the same rows."""


def start_search(
    query_weights: sp.csr_matrix,
    term_weights: sp.csr_matrix,
    k: int,
    doc_id_rank: np.ndarray,
    bounds: TermBounds | None = None,
) -> _sparse_topk.Search:
    """A :data:`Search` of the rows of ``query_weights`` (queries x terms) in ``term_weights`` (terms x
    documents), both CSR; with ``bounds``, by MaxScore."""
    if query_weights.shape[1] != term_weights.shape[0] or term_weights.shape[1] != len(doc_id_rank):
        raise ValueError(
            f"shapes do not chain: queries x terms {query_weights.shape}, terms x documents "
            f"{term_weights.shape}, {len(doc_id_rank)} document ranks"
        )
    return _sparse_topk.Search(
        query_weights.indptr,
        query_weights.indices,
        np.asarray(query_weights.data, dtype=np.float64),
        term_weights.indptr,
        term_weights.indices,
        np.asarray(term_weights.data, dtype=np.float64),
        np.asarray(doc_id_rank, dtype=np.int64),
        k,
        None if bounds is None else bounds.high,
        None if bounds is None else bounds.low,
    )


def found(searched: _sparse_topk.Search) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of a search whose every query is scored, as :func:`flat_top_k` gives them (or the error of
    the lowest query that failed: the one a single thread meets first)."""
    counts, positions, scores, _ = searched.result()
    return (
        np.frombuffer(counts, dtype=np.int64),
        np.frombuffer(positions, dtype=np.int64),
        np.frombuffer(scores, dtype=np.float64),
    )
