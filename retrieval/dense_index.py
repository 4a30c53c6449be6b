"""FAISS inner-product search over document vectors, with exact tie handling and the recall of approximate indexes.

Index kinds (``faiss_index``):

- ``flat``: ``IndexFlatIP``, exact, the default;
- ``hnsw``: ``IndexHNSWFlat`` with the inner-product metric (``hnsw_m`` links per node,
  efConstruction 200, ``ef_search`` at search time): approximate, for large corpora;
- ``ivf``: ``IndexIVFFlat`` with ``nlist`` k-means cells (FAISS's fixed clustering
  seed), ``nprobe`` cells visited per query: approximate.

Approximate indexes are built on one thread, because FAISS inserts (and clusters) in
parallel otherwise and the index (hence the results) would depend on thread scheduling.

FAISS returns exactly k rows and cuts ties at the k-th score arbitrarily, so
:func:`candidates` fetches more rows until the k-th score is strictly above the
last fetched one (within float32 rounding); :class:`FaissSearch` rescores the
candidates in float64 and applies the tie rule, so the same k documents come back
every time. With an approximate index it also runs the exact search and records the
**ANN recall at the run's depth**: per query, the share of the exact top k (by the tie
rule) that the approximate top k holds, averaged over the queries searched.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.errors import ParameterError, RankscopeError
from rankscope.core.extras import require_extra
from rankscope.core.progress import progress_slices
from rankscope.retrieval.base import make_run
from rankscope.retrieval.params import Param
from rankscope.retrieval.storage import IndexFormatError

if TYPE_CHECKING:
    import pandas as pd

INDEX_KINDS = ("flat", "hnsw", "ivf")


class VectorValueError(RankscopeError, ValueError):
    """A vector holds NaN or an infinite value."""


TIE_TOLERANCE = 1e-5
"""Scores this close to the k-th are treated as possible ties (float32 inner products)."""
FAISS_FILE = "index.faiss"
CHUNK = 4096
"""Queries searched per step: one progress-bar update per chunk."""


def import_faiss() -> ModuleType:
    """faiss, or the one line naming the extra that installs it."""
    return require_extra("faiss", "w2v", "Word2Vec retrieval")


FAISS_INDEX = Param(
    str, "flat", "flat: exact; hnsw, ivf: approximate (ANN recall reported)", choices=INDEX_KINDS, name="faiss_index"
)
HNSW_M = Param(int, 32, "hnsw: links per node", low=1, name="hnsw_m")
EF_SEARCH = Param(int, 128, "hnsw: candidates examined per query", low=1, name="ef_search")
NLIST = Param(int, 100, "ivf: k-means cells (at most the number of documents)", low=1, name="nlist")
NPROBE = Param(int, 10, "ivf: cells visited per query", low=1, name="nprobe")
INDEX_PARAMS = (FAISS_INDEX, HNSW_M, EF_SEARCH, NLIST, NPROBE)
"""The FAISS parameters of every vector retriever (``w2v``, ``dense``)."""


@contextlib.contextmanager
def _one_thread(faiss: ModuleType) -> Iterator[None]:
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


def build_index(
    vectors: np.ndarray, kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 200, nlist: int = 100
) -> Any:  # a faiss.Index (faiss has no type hints)
    """A FAISS inner-product index holding ``vectors`` (rows = FAISS ids 0..n-1)."""
    if kind not in INDEX_KINDS:
        raise ParameterError(f"faiss_index must be one of {list(INDEX_KINDS)}, got {kind!r}")
    faiss = import_faiss()
    data = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = data.shape[1]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
        index.add(data)
        return index
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
    else:
        if len(data) < nlist:
            raise ParameterError(
                f"faiss_index=ivf with nlist={nlist} needs at least {nlist} documents, got {len(data)}: "
                f"lower nlist (about the square root of the documents is usual)"
            )
        index = faiss.index_factory(dim, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # small collections: no warning, the clustering is the same
    with _one_thread(faiss):
        index.train(data)
        index.add(data)
    return index


def _set_search_params(index: object, fetch: int, ef_search: int, nprobe: int) -> None:
    if hasattr(index, "hnsw"):
        index.hnsw.efSearch = max(ef_search, fetch)
    if hasattr(index, "nprobe"):
        index.nprobe = nprobe


def candidates(index: Any, queries: np.ndarray, k: int, ef_search: int = 128, nprobe: int = 10) -> list[np.ndarray]:
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
        _set_search_params(index, fetch, ef_search, nprobe)
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


def non_finite(vectors: np.ndarray, names: Sequence[str], original: np.ndarray | None = None) -> str | None:
    """What is wrong with the first NaN or infinite value of a matrix, saying its row, the name of
    that row (``names[row]``, e.g. "query 'q3'") and the value (as in ``original`` if given: the
    matrix before a cast to float32 made a huge value infinite); None if every value is finite.
    A NaN would sort arbitrarily in FAISS and an infinite score ties every document: a run without an error."""
    bad = ~np.isfinite(vectors)
    if not bad.any():
        return None
    row, column = (int(i) for i in np.argwhere(bad)[0])
    value = float((vectors if original is None else original)[row, column])
    return f"row {row} ({names[row]}) holds {value!r} at column {column}: vectors must be finite numbers"


def ann_recall(approximate: pd.DataFrame, exact: pd.DataFrame) -> float:
    """Mean over the queries with exact results of |approximate top k ∩ exact top k| / |exact top k|."""
    if exact.empty:
        return 1.0
    shared = exact.merge(approximate[["query_id", "doc_id"]], on=["query_id", "doc_id"], how="left", indicator=True)
    found = (shared["_merge"] == "both").groupby(shared["query_id"], sort=False).mean()
    return float(found.mean())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_checked(path: Path, expected: str) -> bytes:
    """The bytes of an index file whose SHA-256 must be ``expected`` (from meta.json)."""
    if not path.is_file():
        raise IndexFormatError(path, None, "missing from the index directory")
    data = path.read_bytes()
    if sha256(data) != expected:
        raise IndexFormatError(path, None, "checksum differs from meta.json (damaged or from another save)")
    return data


def to_bytes(index: object) -> bytes:
    """The bytes ``faiss.write_index`` writes (so the saved file is readable by ``faiss.read_index``)."""
    return import_faiss().serialize_index(index).tobytes()


def from_bytes(data: bytes) -> Any:  # a faiss.Index (faiss has no type hints)
    """Inverse of :func:`to_bytes`."""
    return import_faiss().deserialize_index(np.frombuffer(data, dtype=np.uint8))


class FaissSearch:
    """Searching ``doc_vectors_`` (float32 rows, FAISS ids 0..n-1) for retrievers with the parameters
    ``faiss_index``, ``hnsw_m``, ``ef_search``, ``nlist`` and ``nprobe``."""

    faiss_index: str
    hnsw_m: int
    ef_search: int
    nlist: int
    nprobe: int
    doc_vectors_: np.ndarray

    def _build_faiss(self) -> None:
        """(Re)build the FAISS index from ``doc_vectors_``; forgets the recall of the previous one."""
        self.faiss_ = build_index(self.doc_vectors_, self.faiss_index, self.hnsw_m, nlist=self.nlist)
        self.__dict__.pop("ann_recall_", None)
        self.__dict__.pop("exact_faiss_", None)

    def _search_vectors(
        self, query_ids: Sequence[str], query_vectors: np.ndarray, k: int, row_doc_ids: np.ndarray
    ) -> pd.DataFrame:
        """The top-k run of float64 ``query_vectors`` (rows of ``row_doc_ids`` = FAISS ids); with an
        approximate index, ``ann_recall_`` becomes ``(k, recall against the exact search)``.
        A query vector holding NaN or inf is refused, naming the query."""
        problem = non_finite(query_vectors, [f"query {q!r}" for q in query_ids])
        if problem:
            raise VectorValueError(f"query vectors: {problem}")
        run = self._run(self.faiss_, query_ids, query_vectors, k, row_doc_ids)
        if self.faiss_index != "flat":
            if not hasattr(self, "exact_faiss_"):
                self.exact_faiss_ = build_index(self.doc_vectors_, "flat")
            exact = self._run(self.exact_faiss_, query_ids, query_vectors, k, row_doc_ids)
            self.ann_recall_ = (k, ann_recall(run, exact))
        return run

    def _run(
        self, index: Any, query_ids: Sequence[str], query_vectors: np.ndarray, k: int, row_doc_ids: np.ndarray
    ) -> pd.DataFrame:
        found = [
            rows
            for piece in progress_slices(np.arange(len(query_ids)), CHUNK, desc="searching", unit="query")
            for rows in candidates(index, query_vectors[piece], k, self.ef_search, self.nprobe)
        ]
        doc_lists = [row_doc_ids[rows] for rows in found]
        score_lists = [self.doc_vectors_[rows].astype(np.float64) @ query_vectors[i] for i, rows in enumerate(found)]
        run = make_run(list(query_ids), doc_lists, score_lists)
        return run[run["rank"] <= k].reset_index(drop=True)

    def _index_diagnostics(self) -> dict[str, float]:
        """``ann_recall@K`` after a search with an approximate index, else nothing."""
        if self.faiss_index == "flat" or not hasattr(self, "ann_recall_"):
            return {}
        depth, recall = self.ann_recall_
        return {f"ann_recall@{depth}": recall}
