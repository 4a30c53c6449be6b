"""Shared base of retrievers built on stored term counts (BM25, TF-IDF, the rank-bm25 backend).

It owns what they have in common: analysing the corpus once into
:class:`~retrieval.termcounts.TermCounts`, saving those counts (not the
parameter-dependent weights) with the analyzer config and parameters, loading
them memory-mapped, and searching and scoring: queries are scored on
``RANKSCOPE_NUM_THREADS`` threads (default 1; the run is the same) that claim them one at a time,
top-k is chosen among each query's candidates by the compiled kernel of
:mod:`retrieval.topk`, which prunes with MaxScore over each term's weight bounds
(the same run as scoring every candidate). A score is always query weights x term weights: a subclass
only supplies its weighting, ``_fit`` (derive ``weights_``, terms x documents, from
``counts_``) and, if its queries are not weighted by their term counts,
``_query_weights``. The rank-bm25 backend overrides ``search`` and ``score``
instead, as rank-bm25 scores in Python.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rankscope.core.errors import EnvironmentValueError, RankscopeError, SchemaError, duplicate_message
from rankscope.core.progress import is_quiet, progress
from rankscope.retrieval.analysis import (
    Analyzer,
    AnalyzerMismatchWarning,
    get_analyzer,
    restore_analyzer,
    saved_analyzer_param,
    script_mismatch,
)
from rankscope.retrieval.base import (
    QueryInput,
    Retriever,
    check_k,
    doc_positions,
    document_texts,
    ordered_run,
    query_texts,
)
from rankscope.retrieval.storage import (
    IndexFormatError,
    from_saved_params,
    load_index,
    require_fields,
    save_index,
    writing_index,
)
from rankscope.retrieval.streaming import DEFAULT_MEMORY_BUDGET, write_counts
from rankscope.retrieval.termcounts import TermCounts
from rankscope.retrieval.topk import Search, TermBounds, Workspace, found, start_search

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

    from rankscope.corpora.trec import CodedTable

BAR_CANDIDATES = 2_000_000
"""A search whose queries' terms hold more postings than this shows a progress bar of its queries (at
1M documents, 1,000 queries hold about 21M and take a quarter of a second on one thread)."""

POLL_SECONDS = 0.1
"""How often the progress bar looks at the queries scored."""

THREADS_VARIABLE = "RANKSCOPE_NUM_THREADS"
"""Environment variable: how many threads ``search`` scores queries on (default 1). Not a
constructor parameter because it changes no result, so it must not change the spec or the index."""


class EmptyIndexError(RankscopeError, ValueError):
    """The corpus is empty, or no document keeps a single term after analysis."""


class RepeatedDocumentError(SchemaError):
    """``build_index`` was given one doc id twice (``doc_id``), so a caller reading a file can name its lines."""

    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id
        super().__init__(f"corpus given to build_index(): {duplicate_message('doc_id', doc_id)}")


class CountsRetriever(Retriever):
    """Index = term counts + an analyzer; subclasses turn the counts into scores."""

    analyzer: str | Analyzer
    weights_: sp.csr_matrix
    _bounds: tuple[sp.csr_matrix, TermBounds] | None
    query_side: ClassVar[frozenset[str]] = frozenset()
    """Parameters that only change how queries are weighted (``_query_vectors``): changing them re-fits nothing."""

    def index(self, corpus: pd.DataFrame) -> CountsRetriever:
        """Analyse and count the corpus (title and text), then fit the scoring state."""
        doc_ids, texts = document_texts(corpus)
        if not doc_ids:
            raise EmptyIndexError("cannot index an empty corpus")
        analyzer = get_analyzer(self.analyzer)
        mismatch = script_mismatch(texts, analyzer)
        if mismatch:
            warnings.warn(mismatch, AnalyzerMismatchWarning, stacklevel=2)
        counts = TermCounts.build(analyzer, doc_ids, texts)
        if counts.n_terms == 0:
            raise EmptyIndexError(f"no document keeps any term after analysis with {analyzer!r}")
        self.counts_ = counts
        self.analyzer_ = analyzer
        self._fit()
        return self

    def build_index(
        self,
        directory: str | os.PathLike[str],
        documents: Iterable[tuple[str, str]],
        *,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        workers: int = 1,
    ) -> CountsRetriever:
        """``index`` + ``save(directory)`` for corpora larger than memory: ``documents`` are
        (doc_id, text) pairs (text as :func:`retrieval.base.document_text` makes it), read lazily
        and counted in bounded memory on ``workers`` processes (:mod:`retrieval.streaming`); the
        saved arrays are those ``index`` + ``save`` would write. The counts stay memory-mapped."""
        self.counts_ = self.write_index(directory, documents, memory_budget=memory_budget, workers=workers)
        self.analyzer_ = get_analyzer(self.analyzer)
        self._fit()
        return self

    def write_index(
        self,
        directory: str | os.PathLike[str],
        documents: Iterable[tuple[str, str]],
        *,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        workers: int = 1,
    ) -> TermCounts:
        """What :meth:`build_index` saves, written without fitting: the counts as saved, memory-mapped, and this
        retriever unchanged. ``rankscope index`` only saves, and the scoring state is derived from the counts
        whenever the index is opened (BM25's float64 weights: 188 MiB at 1M documents)."""
        import pandas as pd

        analyzer = get_analyzer(self.analyzer)
        with writing_index(directory, self.name, self._meta(analyzer)) as writer:
            written = write_counts(writer, analyzer, documents, memory_budget=memory_budget, workers=workers)
            if not written.doc_ids:
                raise EmptyIndexError("cannot index an empty corpus")
            if written.n_terms == 0:
                raise EmptyIndexError(f"no document keeps any term after analysis with {analyzer!r}")
            ids = pd.Index(written.doc_ids)
            if ids.has_duplicates:
                raise RepeatedDocumentError(ids[ids.duplicated()][0])
        del written, ids  # the ids are read back with the index
        arrays = load_index(directory, self.name)[1]
        return TermCounts(**{name: arrays[name] for name in arrays})  # written just now: not re-checked

    def _fit(self) -> None:
        """Derive the scoring state (``weights_``) from ``counts_`` and the parameters."""
        raise NotImplementedError

    def _query_weights(self, query_terms: sp.csr_matrix) -> sp.csr_matrix:
        """Queries x terms weights from the query term counts (by default the counts themselves)."""
        return query_terms

    def _query_vectors(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Queries x terms weights that ``search`` and ``score`` multiply with ``weights_``
        (query feedback, :mod:`retrieval.prf`, replaces them with expanded queries)."""
        import scipy.sparse as sp

        return sp.csr_matrix(self._query_weights(self._query_counts(texts)))

    def _query_counts(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Queries x terms counts of ``texts``; the last queries' are kept, so searching the same queries
        again after ``set_params`` (every point of a tune grid) analyses them once. The counts depend only
        on the analyzer and the vocabulary, both fixed until the next ``index``."""
        texts = tuple(texts)
        kept = self.__dict__.get("_last_queries")
        if kept is not None and kept[0] is self.counts_ and kept[1] == texts:
            return kept[2]
        counts = self.counts_.query_matrix(self.analyzer_, texts)
        self._last_queries = (self.counts_, texts, counts)
        return counts

    def _scores(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Queries x documents scores; the stored entries of a row are that query's candidates."""
        import scipy.sparse as sp

        return sp.csr_matrix(self._query_vectors(texts) @ self.weights_)

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """Top ``k`` candidates per query by the tie rule (a query matching nothing gets no rows)."""
        query_ids, counts, doc_ids, scores = self._top_k(queries, k, ids=True)
        return ordered_run(query_ids, counts, doc_ids, scores)

    def search_coded(self, queries: QueryInput, k: int = 1000) -> CodedTable:
        """:meth:`search`'s rows as a :class:`~rankscope.corpora.trec.CodedTable` (ids as codes into the
        queries' ids and the corpus's doc ids), which evaluation scores without a ``str`` per row: the
        same numbers as the run table's, at a fraction of the cost (tune scores every grid point so)."""
        from rankscope.corpora.trec import CodedTable

        query_ids, counts, positions, scores = self._top_k(queries, k, ids=False)
        found = counts > 0  # a query matching nothing has no rows, as in search()
        return CodedTable(
            "run",
            np.repeat(np.arange(int(found.sum()), dtype=np.int64), counts[found]),
            np.asarray(query_ids, dtype=object)[found],
            positions,
            np.asarray(self.counts_.doc_ids, dtype=object),
            scores,
        )

    def _top_k(self, queries: QueryInput, k: int, *, ids: bool) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """Each query's top ``k`` documents and scores, in tie-rule order, as :func:`retrieval.topk.flat_top_k`
        gives them: rows per query, then all documents and all scores. The documents are positions in the
        corpus, or with ``ids`` their doc ids. The threads claim queries one at a time, so none waits while
        another has queries left (queries differ in cost by 10x and more)."""
        self._check_fitted("weights_")
        k = check_k(k)
        threads = search_threads()
        query_ids, texts = query_texts(queries)
        query_weights = self._query_vectors(texts)
        rank = self.counts_.doc_id_rank
        bounds = self._term_bounds()

        searching = start_search(query_weights, self.weights_, k, rank, bounds)
        bar = not is_quiet() and candidates(query_weights, self.counts_.df) > BAR_CANDIDATES
        with ThreadPoolExecutor(threads) as pool:  # the kernel releases the GIL; each thread its own workspace
            runs = [pool.submit(searching.run, Workspace()) for _ in range(threads if bar else threads - 1)]
            if bar:  # this thread shows the queries scored
                for _ in progress(scored(searching, runs), desc="searching", total=len(query_ids), unit="query"):
                    pass
            else:
                searching.run(Workspace())  # this thread searches too
            for run in runs:
                run.result()
        counts, positions, scores = found(searching)
        return query_ids, counts, self.counts_.doc_ids[positions] if ids else positions, scores

    def _term_bounds(self) -> TermBounds:
        """Each term's weight bounds in ``weights_`` (for pruning), computed once per fit."""
        cached = getattr(self, "_bounds", None)
        if cached is None or cached[0] is not self.weights_:
            cached = (self.weights_, TermBounds.of(self.weights_))
            self._bounds = cached
        return cached[1]

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Scores of the given documents for one query text (0 where no term matches)."""
        self._check_fitted("weights_")
        positions = doc_positions(self.counts_.doc_index, doc_ids)
        row = self._scores([query])
        return np.asarray(row[:, positions].toarray()[0], dtype=np.float64)

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the counts, the analyzer config and the parameters (pickle-free, atomic)."""
        self._check_fitted("counts_")
        save_index(directory, self.name, self._meta(self.analyzer_), self.counts_.to_arrays())

    def _meta(self, analyzer: Analyzer) -> dict[str, Any]:
        """What a saved index records besides the counts: the parameters and the analyzer config."""
        params = {**self.get_params(), "analyzer": saved_analyzer_param(self.analyzer)}
        return {"params": params, "analyzer": analyzer.to_config()}

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> CountsRetriever:
        """Open a saved index; the counts stay memory-mapped."""
        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "analyzer": dict})
        params: dict[str, Any] = dict(meta["params"])
        try:
            params["analyzer"], analyzer = restore_analyzer(params.get("analyzer"), meta["analyzer"])
        except ValueError as exc:
            raise IndexFormatError(Path(directory) / "meta.json", None, f"analyzer: {exc}") from None
        retriever = from_saved_params(cls, params, directory)
        try:
            retriever.counts_ = TermCounts.from_arrays(arrays)
        except ValueError as exc:
            raise IndexFormatError(Path(directory), None, f"damaged index: {exc}") from None
        retriever.analyzer_ = analyzer
        retriever._fit()
        return retriever

    def set_params(self, **params: Any) -> CountsRetriever:
        """Change parameters (validated as in the constructor); a fitted index is re-fitted from its counts
        unless only query-side parameters changed."""
        fitted = hasattr(self, "counts_")
        if fitted and get_analyzer(params.get("analyzer", self.analyzer)) != self.analyzer_:
            raise ValueError("the analyzer cannot change after index(): the counts depend on it; index again")
        super().set_params(**params)
        if fitted and set(params) - self.query_side:
            # the old scoring state goes first: at 1M documents the weights alone are 440 MB,
            # which would otherwise be held twice while the new ones are computed
            self.__dict__.pop("weights_", None)
            self._bounds = None
            self._fit()
        return self


def search_threads() -> int:
    """Threads to search on, from ``RANKSCOPE_NUM_THREADS`` (a positive integer; unset means 1)."""
    value = os.environ.get(THREADS_VARIABLE, "1")
    threads = int(value) if value.isascii() and value.isdigit() and len(value) < 6 else 0
    if threads < 1:
        raise EnvironmentValueError(
            f"{THREADS_VARIABLE} must be a positive integer below 100000 (threads to search on), got {value!r}"
        )
    return threads


def candidates(query_terms: sp.csr_matrix, df: np.ndarray) -> int:
    """An upper bound of the candidates of all queries: their terms' postings (what decides a progress bar)."""
    return int(df[query_terms.indices[query_terms.data != 0]].sum(dtype=np.int64))


def scored(searching: Search, runs: list[Future[int]]) -> Iterator[None]:
    """One item per query scored, as the threads ``runs`` score them (looked at every ``POLL_SECONDS``), until
    they end: what the progress bar counts."""
    seen, pending = 0, runs
    while pending:
        pending = list(wait(pending, timeout=POLL_SECONDS).not_done)
        done = searching.done
        yield from itertools.repeat(None, done - seen)
        seen = done
