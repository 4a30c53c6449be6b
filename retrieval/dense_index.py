"""FAISS inner-product search over unit vectors (so scores are cosines), with exact tie handling.

``flat`` is ``IndexFlatIP``: exact, the default. ``hnsw`` is ``IndexHNSWFlat``
with the inner-product metric: approximate, for large corpora; it is built on
one thread because FAISS inserts in parallel otherwise and the graph (hence the
results) would depend on thread scheduling.

FAISS returns exactly k rows and cuts ties at the k-th score arbitrarily, so
:func:`candidates` fetches more rows until the k-th score is strictly above the
last fetched one (within float32 rounding); the caller rescores the candidates
and applies the tie rule, so the same k documents come back every time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

import numpy as np

INDEX_KINDS = ("flat", "hnsw")
TIE_TOLERANCE = 1e-5
"""Scores this close to the k-th are treated as possible ties (float32 inner products)."""

W2V_EXTRA = 'Word2Vec retrieval needs gensim and faiss: pip install "rankscope[w2v]"'


def import_faiss() -> ModuleType:
    """faiss, or an ImportError naming the extra that installs it."""
    try:
        import faiss
    except ImportError:
        raise ImportError(W2V_EXTRA) from None
    return faiss


@contextlib.contextmanager
def _one_thread(faiss: ModuleType) -> Iterator[None]:
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


def build_index(vectors: np.ndarray, kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 200) -> object:
    """A FAISS inner-product index holding ``vectors`` (rows = FAISS ids 0..n-1)."""
    if kind not in INDEX_KINDS:
        raise ValueError(f"faiss_index must be one of {list(INDEX_KINDS)}, got {kind!r}")
    faiss = import_faiss()
    data = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = data.shape[1]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
        index.add(data)
        return index
    index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    with _one_thread(faiss):
        index.add(data)
    return index


def candidates(index: object, queries: np.ndarray, k: int, ef_search: int = 128) -> list[np.ndarray]:
    """Per query, FAISS ids of its top k and of every row that may tie with the k-th."""
    total = index.ntotal
    if total == 0 or len(queries) == 0:
        return [np.empty(0, dtype=np.int64) for _ in range(len(queries))]
    data = np.ascontiguousarray(queries, dtype=np.float32)
    want = min(k, total)
    fetch = min(total, want + 8)
    result: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(data)
    pending = np.arange(len(data))
    while len(pending):
        if hasattr(index, "hnsw"):
            index.hnsw.efSearch = max(ef_search, fetch)
        scores, ids = index.search(data[pending], fetch)
        unresolved = []
        for row, query in enumerate(pending):
            found = ids[row] >= 0
            got_ids, got_scores = ids[row][found], scores[row][found]
            result[query] = got_ids.astype(np.int64)
            may_tie_beyond = len(got_ids) == fetch and got_scores[-1] >= got_scores[want - 1] - TIE_TOLERANCE
            if fetch < total and may_tie_beyond:
                unresolved.append(query)
        pending = np.asarray(unresolved, dtype=np.int64)
        fetch = min(total, fetch * 2)
    return result


def to_bytes(index: object) -> bytes:
    """The bytes ``faiss.write_index`` writes (so the saved file is readable by ``faiss.read_index``)."""
    return import_faiss().serialize_index(index).tobytes()


def from_bytes(data: bytes) -> object:
    """Inverse of :func:`to_bytes`."""
    return import_faiss().deserialize_index(np.frombuffer(data, dtype=np.uint8))
