"""Word2Vec + FAISS: documents and queries as pooled word vectors, searched by cosine.

Word vectors are either trained with gensim on the indexed corpus (``vectors=corpus``:
skip-gram, parameters suited to small collections, deterministic: one worker thread
and a fixed seed; gensim draws its initial vectors from the seed, not from Python's
string hash, so PYTHONHASHSEED does not matter) or pretrained (:mod:`retrieval.word_vectors`:
the packaged ``glove-6b-50d`` or a word2vec/GloVe/fastText file). The share of
document and query tokens the vectors do not know is reported by :meth:`diagnostics`. They are
pooled per text (:mod:`retrieval.pooling`), L2-normalised and searched with a
FAISS inner-product index (:mod:`retrieval.dense_index`); the candidates FAISS
returns are rescored in float64 so that ``search`` and ``score`` agree exactly.

A query without any word the model knows gets an empty ranking, an
:class:`EmptyQueryWarning` and increments ``n_empty_queries_``; a document
without any known word is left out of the FAISS index (it scores 0 in ``score``).

Saved pickle-free: the word vectors in word2vec binary format (readable by any
word2vec tool), the FAISS index as ``faiss.write_index`` bytes, the rest as
``.npy`` + ``meta.json`` (:mod:`retrieval.storage`); checksums in ``meta.json``
tie the three together.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.progress import progress, progress_slices
from rankscope.retrieval.analysis import (
    ANALYZER,
    PRESETS,
    Analyzer,
    get_analyzer,
    restore_analyzer,
    saved_analyzer_param,
)
from rankscope.retrieval.base import QueryInput, Retriever, check_k, doc_positions, document_texts, query_texts
from rankscope.retrieval.dense_index import (
    EF_SEARCH,
    FAISS_FILE,
    FAISS_INDEX,
    HNSW_M,
    NLIST,
    NPROBE,
    FaissSearch,
    from_bytes,
    read_checked,
    sha256,
    to_bytes,
)
from rankscope.retrieval.params import Param
from rankscope.retrieval.pooling import POOLINGS, first_component, l2_normalise, pool, remove_component, word_weights
from rankscope.retrieval.registry import register
from rankscope.retrieval.storage import IndexFormatError, from_saved_params, load_index, require_fields, save_index
from rankscope.retrieval.word_vectors import (
    CORPUS,
    default_analyzer,
    import_gensim_models,
    load_word_vectors,
    oov_rate,
    read_vector_file,
)

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

VECTORS_FILE = "vectors.bin"
_SEARCH_TIME = ("ef_search", "nprobe")
"""Parameters that only affect searching."""
_ENCODING = ("pooling", "faiss_index", "hnsw_m", "nlist")
"""Parameters that change document vectors or the FAISS index but not the word vectors."""
AUTO = "auto"
"""``analyzer=auto``: :func:`retrieval.word_vectors.default_analyzer` (stemmed for corpus-trained vectors)."""
CHUNK = 4096
"""Texts analysed, or queries searched, per step: one progress-bar update per chunk."""


class EmptyQueryWarning(UserWarning):
    """A query has no word the model knows: it gets an empty ranking."""


def _non_empty(vectors: str) -> None:
    if not vectors:
        raise ValueError("vectors must be 'corpus', 'glove-6b-50d' or a path to a vector file")


@register("w2v")
class Word2VecRetriever(FaissSearch, Retriever):
    """Pooled Word2Vec vectors searched with FAISS (``faiss_index`` ``flat``: exact, ``hnsw``/``ivf``: approximate)."""

    pooling = Param(str, "sif", "how a text's word vectors are pooled (retrieval.pooling)", choices=POOLINGS)
    vectors = Param(
        str,
        CORPUS,
        "corpus: train on the collection; glove-6b-50d: the packaged GloVe; or a vector file's path",
        check=_non_empty,
    )
    vector_size = Param(int, 100, "dimensions of trained word vectors", low=1)
    window = Param(int, 5, "training context window (words each side)", low=1)
    min_count = Param(int, 1, "training ignores words rarer than this", low=1)
    epochs = Param(int, 20, "training passes over the corpus", low=1)
    sg = Param(int, 1, "1: skip-gram, 0: CBOW", choices=(0, 1))
    seed = Param(int, 0, "seed of the training (results are deterministic)")
    faiss_index = FAISS_INDEX
    hnsw_m = HNSW_M
    ef_search = EF_SEARCH
    nlist = NLIST
    nprobe = NPROBE
    analyzer: Param[str | Analyzer] = ANALYZER.replace(
        default=AUTO,
        choices=lambda: (AUTO, *PRESETS),
        help=f"{AUTO}: english for corpus-trained vectors, english-nostem for pretrained; else as for bm25",
    )

    # --- building ----------------------------------------------------------------
    def index(self, corpus: pd.DataFrame) -> Word2VecRetriever:
        """Train (or load) word vectors, pool the documents and build the FAISS index."""
        analyzer = get_analyzer(default_analyzer(self.vectors) if self.analyzer == AUTO else self.analyzer)
        doc_ids, texts = document_texts(corpus)
        tokens = _tokenize(analyzer, texts, "analysing documents")
        keyed = self._word_vectors(tokens)
        self.n_empty_queries_ = 0
        self.analyzer_ = analyzer
        self.keyed_vectors_ = keyed
        self.doc_ids_ = np.asarray(doc_ids, dtype=object)
        self.doc_index_ = {doc: i for i, doc in enumerate(doc_ids)}
        self.counts_ = _count_matrix(tokens, keyed.key_to_index)
        self.total_tokens_ = sum(len(t) for t in tokens)
        self.query_tokens_ = [0, 0]
        self._encode_documents()
        return self

    def _word_vectors(self, tokens: list[list[str]]) -> Any:
        if self.vectors != CORPUS:
            return load_word_vectors(self.vectors)
        models = import_gensim_models()
        if not any(tokens):
            raise ValueError("cannot train Word2Vec: the corpus has no index terms after analysis")
        # gensim silently trains on only the first 10,000 tokens of a longer text: cut texts into pieces
        limit = models.word2vec.MAX_WORDS_IN_BATCH
        pieces = [toks[start : start + limit] for toks in tokens for start in range(0, len(toks), limit)]
        bar = _EpochBar(self.epochs)
        try:
            model = models.Word2Vec(
                sentences=pieces,
                vector_size=self.vector_size,
                window=self.window,
                min_count=self.min_count,
                epochs=self.epochs,
                sg=self.sg,
                seed=self.seed,
                workers=1,
                callbacks=[bar],
            )
        finally:
            bar.on_train_end(None)
        if len(model.wv) == 0:
            raise ValueError(f"cannot train Word2Vec: no word occurs at least min_count={self.min_count} times")
        return model.wv

    def _encode_documents(self) -> None:
        """Pool, remove the SIF component, normalise and index the documents (from stored counts)."""
        counts = self.counts_
        self.weights_ = word_weights(
            self.pooling,
            term_counts=np.asarray(counts.sum(axis=0)).ravel(),
            doc_freqs=np.diff(counts.tocsc().indptr),
            n_docs=counts.shape[0],
            total_tokens=self.total_tokens_,
        )
        pooled = pool(counts, self.keyed_vectors_.vectors, self.weights_, self.pooling)
        self.component_ = first_component(pooled) if self.pooling == "sif" else None
        nonempty = np.asarray(counts.sum(axis=1)).ravel() > 0
        self._set_rows(np.flatnonzero(nonempty))
        self.doc_vectors_ = self._finish(pooled[self.rows_]).astype(np.float32)
        self._build_faiss()

    def _set_rows(self, rows: np.ndarray) -> None:
        """Documents in the FAISS index (``rows_``: FAISS id -> corpus position) and the inverse map (-1: empty)."""
        self.rows_ = rows
        self.row_of_ = np.full(len(self.doc_ids_), -1, dtype=np.int64)
        self.row_of_[rows] = np.arange(len(rows))

    def _finish(self, pooled: np.ndarray) -> np.ndarray:
        if self.component_ is not None:
            pooled = remove_component(pooled, self.component_)
        return l2_normalise(pooled)

    def set_params(self, **params: Any) -> Word2VecRetriever:
        """Change parameters: pooling/index changes re-encode from stored counts; training ones need index()."""
        old = self.get_params()
        super().set_params(**params)
        changed = {key for key, value in params.items() if old[key] != value}
        if not hasattr(self, "counts_") or changed <= set(_SEARCH_TIME):
            return self
        if changed <= set(_SEARCH_TIME + _ENCODING):
            self._encode_documents()
        else:  # other word vectors or terms: what was learned no longer applies
            for attribute in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
                delattr(self, attribute)
        return self

    # --- scoring -----------------------------------------------------------------
    def _encode_queries(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Unit query vectors (float64) and a mask of queries without any known word."""
        tokens = _tokenize(self.analyzer_, texts, "analysing queries")
        counts = _count_matrix(tokens, self.keyed_vectors_.key_to_index)
        self.query_tokens_[0] += sum(len(t) for t in tokens)
        self.query_tokens_[1] += int(counts.sum())
        pooled = pool(counts, self.keyed_vectors_.vectors, self.weights_, self.pooling)
        empty = np.asarray(counts.sum(axis=1)).ravel() == 0
        return self._finish(pooled), empty

    def diagnostics(self) -> dict[str, float]:
        """Out-of-vocabulary rates: share of document tokens, and of the tokens of every query
        searched or scored since ``index``/``load``, that the word vectors do not know; with an
        approximate index, its recall against exact search at the last search's depth."""
        self._check_fitted("faiss_")
        return {
            "oov_documents": oov_rate(self.total_tokens_, int(self.counts_.sum())),
            "oov_queries": oov_rate(*self.query_tokens_),
            **self._index_diagnostics(),
        }

    def _warn_empty(self, query_ids: Sequence[str], empty: np.ndarray) -> None:
        n_empty = int(empty.sum())
        if n_empty:
            self.n_empty_queries_ += n_empty
            shown = [query_ids[i] for i in np.flatnonzero(empty)[:5]]
            warnings.warn(
                f"{n_empty} query(ies) have no word known to the model (e.g. {shown}): empty ranking",
                EmptyQueryWarning,
                stacklevel=3,
            )

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """Top-k documents by cosine; ties by doc_id descending; empty ranking for unknown-word queries."""
        k = check_k(k)
        self._check_fitted("faiss_")
        query_ids, texts = query_texts(queries)
        query_vectors, empty = self._encode_queries(texts)
        self._warn_empty(query_ids, empty)
        active = np.flatnonzero(~empty)
        ids = [query_ids[i] for i in active]
        return self._search_vectors(ids, query_vectors[active], k, self.doc_ids_[self.rows_])

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Cosine of ``query`` with each given document (0 for a document without known words)."""
        self._check_fitted("faiss_")
        positions = doc_positions(self.doc_index_, doc_ids)
        query_vectors, empty = self._encode_queries([query])
        self._warn_empty(["<score() query>"], empty)
        rows = self.row_of_[positions]
        scores = np.zeros(len(positions), dtype=np.float64)
        known = rows >= 0
        scores[known] = self.doc_vectors_[rows[known]].astype(np.float64) @ query_vectors[0]
        return scores

    # --- persistence -------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> None:
        """Word vectors (word2vec binary), FAISS index (write_index format), arrays and meta."""
        self._check_fitted("faiss_")
        vector_bytes = _word2vec_bytes(self.keyed_vectors_)
        faiss_bytes = to_bytes(self.faiss_)
        params = {**self.get_params(), "analyzer": saved_analyzer_param(self.analyzer)}
        meta = {
            "params": params,
            "analyzer": self.analyzer_.to_config(),
            "total_tokens": self.total_tokens_,
            "sha256": {VECTORS_FILE: sha256(vector_bytes), FAISS_FILE: sha256(faiss_bytes)},
        }
        counts = self.counts_
        arrays = {
            "doc_ids": self.doc_ids_,
            "counts_indptr": counts.indptr.astype(np.int64),
            "counts_indices": counts.indices.astype(np.int64),
            "counts_data": counts.data,
            "weights": self.weights_,
            "component": self.component_ if self.component_ is not None else np.empty(0),
            "rows": self.rows_,
            "doc_vectors": self.doc_vectors_,
        }
        save_index(directory, self.name, meta, arrays, files={VECTORS_FILE: vector_bytes, FAISS_FILE: faiss_bytes})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Word2VecRetriever:
        """Open a saved index; the word vectors and FAISS index must match the checksums in meta.json."""
        import scipy.sparse as sp

        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "analyzer": dict, "total_tokens": int, "sha256": dict})
        params = dict(meta["params"])
        try:
            saved = params.get("analyzer")
            preset = default_analyzer(params.get("vectors", CORPUS)) if saved == AUTO else saved
            restored, analyzer = restore_analyzer(preset, meta["analyzer"])
        except (TypeError, ValueError) as exc:
            raise IndexFormatError(Path(directory) / "meta.json", None, f"params: {exc}") from None
        params["analyzer"] = AUTO if saved == AUTO and restored == preset else restored
        retriever = from_saved_params(cls, params, directory)
        checksums = meta["sha256"]
        names = (VECTORS_FILE, FAISS_FILE)
        if not isinstance(checksums, dict) or not all(isinstance(checksums.get(name), str) for name in names):
            problem = f"sha256 must give a checksum for each of {names}"
            raise IndexFormatError(Path(directory) / "meta.json", None, problem)
        blobs = {name: read_checked(Path(directory) / name, checksums[name]) for name in names}
        keyed = read_vector_file(Path(directory) / VECTORS_FILE)
        damage = _saved_arrays_problem(arrays, len(keyed))
        if damage:
            raise IndexFormatError(Path(directory), None, f"damaged index: {damage}")
        n_docs = len(arrays["doc_ids"])
        retriever.n_empty_queries_ = 0
        retriever.query_tokens_ = [0, 0]
        retriever.analyzer_ = analyzer
        retriever.keyed_vectors_ = keyed
        retriever.doc_ids_ = arrays["doc_ids"]
        retriever.doc_index_ = {doc: i for i, doc in enumerate(retriever.doc_ids_)}
        retriever.counts_ = sp.csr_matrix(
            (arrays["counts_data"], arrays["counts_indices"], arrays["counts_indptr"]), shape=(n_docs, len(keyed))
        )
        retriever.total_tokens_ = int(meta["total_tokens"])
        retriever.weights_ = np.asarray(arrays["weights"])
        retriever.component_ = np.asarray(arrays["component"]) if len(arrays["component"]) else None
        retriever._set_rows(np.asarray(arrays["rows"]))
        retriever.doc_vectors_ = np.asarray(arrays["doc_vectors"])
        retriever.faiss_ = from_bytes(blobs[FAISS_FILE])
        if retriever.faiss_.ntotal != len(retriever.rows_):
            raise IndexFormatError(Path(directory) / FAISS_FILE, None, "holds a different number of documents")
        return retriever


_SAVED_ARRAYS = (
    "doc_ids",
    "counts_indptr",
    "counts_indices",
    "counts_data",
    "weights",
    "component",
    "rows",
    "doc_vectors",
)


def _saved_arrays_problem(arrays: dict[str, np.ndarray], n_words: int) -> str | None:
    """What makes saved arrays disagree with each other or hold impossible values, or None (an edited
    index must not answer). Cheap: one pass over each array."""
    missing = [name for name in _SAVED_ARRAYS if name not in arrays]
    if missing:
        return f"missing array(s) {missing}"
    doc_ids, rows, vectors = arrays["doc_ids"], np.asarray(arrays["rows"]), np.asarray(arrays["doc_vectors"])
    indptr, indices, data = arrays["counts_indptr"], arrays["counts_indices"], arrays["counts_data"]
    n_docs = len(doc_ids)
    if len(set(doc_ids)) != n_docs:
        return "doc_ids must be unique"
    if len(indptr) != n_docs + 1 or indptr[0] != 0 or indptr[-1] != len(indices) or (np.diff(indptr) < 0).any():
        return "counts_indptr must start at 0, never decrease and end at the number of counts"
    if len(indices) and (indices.min() < 0 or indices.max() >= n_words):
        return "counts_indices must be word positions of the vectors file"
    if len(data) != len(indices) or not (np.isfinite(data) & (data > 0)).all():
        return "counts_data must hold one positive count per word position"
    if not np.isfinite(arrays["weights"]).all() or not np.isfinite(arrays["component"]).all():
        return "weights and component must be finite"
    if rows.dtype.kind not in "iu" or (len(rows) and (rows.min() < 0 or rows.max() >= n_docs)):
        return "rows must be document positions"
    if len(np.unique(rows)) != len(rows):
        return "rows must not repeat a document"
    if vectors.ndim != 2 or len(vectors) != len(rows) or not np.isfinite(vectors).all():
        return "doc_vectors must hold one finite vector per indexed document"
    return None


class _EpochBar:
    """gensim training callback advancing a progress bar once per epoch.

    It only observes (gensim calls these four hooks), so training and its
    result are exactly what they are without it.
    """

    def __init__(self, epochs: int) -> None:
        self._ticks = progress(range(epochs), desc="training word2vec", total=epochs, unit="epoch")

    def on_train_begin(self, model: Any) -> None:
        next(self._ticks, None)  # shows the bar at 0

    def on_epoch_begin(self, model: Any) -> None:
        pass

    def on_epoch_end(self, model: Any) -> None:
        next(self._ticks, None)

    def on_train_end(self, model: Any) -> None:
        self._ticks.close()


def _tokenize(analyzer: Analyzer, texts: Sequence[str], desc: str) -> list[list[str]]:
    """Index terms of each text, analysed a chunk at a time so a bar can show progress (same result)."""
    pieces = progress_slices(texts, CHUNK, desc=desc, unit="text")
    return [terms for piece in pieces for terms in analyzer.tokenize_many(piece)]


def _word2vec_bytes(keyed: Any) -> bytes:
    bad = next((word for word in keyed.index_to_key if not word or any(c.isspace() for c in word)), None)
    if bad is not None:
        raise ValueError(f"word {bad!r} contains whitespace: the word2vec format cannot store it")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / VECTORS_FILE
        keyed.save_word2vec_format(str(path), binary=True)
        return path.read_bytes()


def _count_matrix(token_lists: Sequence[Sequence[str]], key_to_index: dict[str, int]) -> sp.csr_matrix:
    """Texts x embedding vocabulary: how often each known word occurs in each text."""
    import scipy.sparse as sp

    lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
    tokens = itertools.chain.from_iterable(token_lists)
    ids = np.fromiter(map(key_to_index.get, tokens, itertools.repeat(-1)), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(token_lists)), lengths)
    known = ids >= 0
    matrix = sp.csr_matrix(
        (np.ones(int(known.sum())), (rows[known], ids[known])), shape=(len(token_lists), len(key_to_index))
    )
    matrix.sum_duplicates()
    return matrix
