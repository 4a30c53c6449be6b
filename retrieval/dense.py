"""Dense retrieval with any text encoder: documents and queries embedded, searched with FAISS.

``dense`` (``model=auto``, the default: the best encoder installed, all-MiniLM-L6-v2 with the ``st``
extra, else the static model2vec, and then compare's notes say so),
``dense:model=model2vec`` (the packaged static model, no torch),
``dense:model=minilm`` (the packaged all-MiniLM-L6-v2, sentence-transformers + torch),
``dense:model=/path/to/folder`` (a local sentence-transformers or model2vec model),
``dense:model=precomputed,embeddings=/path/to/folder`` (vectors made elsewhere, e.g. by
a hosted API: ``docs.npy`` + ``docs.ids`` and ``queries.npy`` + ``queries.ids``, one id
a line, row i of the matrix for the i-th id), or in Python any encoder object or callable
``texts -> ndarray`` (:mod:`retrieval.encoders`).

Texts are encoded longest first in batches of ``batch_size`` with a progress bar, so that a
transformer pads each batch to nearly its own texts' length (the vectors come back in the
texts' order; a transformer's vectors depend on its batch's padding only by float rounding).
A sentence-transformers model reads the first ``max_seq_length`` word pieces of a text
(all-MiniLM-L6-v2: 256); how many documents were cut is in the retriever's notes. Vectors are compared
as the model expects (``similarity=auto``: cosine, or the sentence-transformers model's
own similarity function): for cosine they are L2-normalised, so FAISS inner products
are cosines. Document vectors are cached on disk in ``<cache>/embeddings/`` (``cache``
is ``$XDG_CACHE_HOME/rankscope``, by default ``~/.cache/rankscope``), keyed by the
encoder's identity and a fingerprint of the documents (ids and texts), so a second
``compare`` on the same collection does not encode the documents again; the raw
encoder output is cached, the normalisation is applied after reading it.

A query with no text at all (empty or only spaces) gets an empty ranking, as in every
retriever; any other text gets the nearest documents, whatever its words.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.core.fileio import atomic_write, read_lines
from rankscope.core.progress import progress_slices
from rankscope.retrieval.base import QueryInput, Retriever, check_k, doc_positions, document_texts, query_texts
from rankscope.retrieval.dense_index import (
    EF_SEARCH,
    FAISS_FILE,
    FAISS_INDEX,
    HNSW_M,
    NLIST,
    NPROBE,
    FaissSearch,
    VectorValueError,
    from_bytes,
    non_finite,
    read_checked,
    sha256,
    to_bytes,
)
from rankscope.retrieval.encoders import (
    AUTO,
    SIMILARITIES,
    CallableEncoder,
    Encoder,
    best_installed,
    get_encoder,
    static_model_note,
    truncation_note,
)
from rankscope.retrieval.params import Param, SpecError
from rankscope.retrieval.pooling import l2_normalise
from rankscope.retrieval.registry import register
from rankscope.retrieval.storage import IndexFormatError, from_saved_params, load_index, require_fields, save_index

if TYPE_CHECKING:
    import pandas as pd

PRECOMPUTED = "precomputed"
CACHE_FORMAT = 1
"""Part of every cache key: a change of what is cached makes old entries unused."""


def _non_empty(model: str) -> None:
    if not model:
        raise ValueError("model must name an encoder, a folder or precomputed")


class PrecomputedEmbeddings:
    """Vectors made elsewhere: ``docs.npy`` + ``docs.ids`` and ``queries.npy`` + ``queries.ids`` in a folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise FormatError(
                self.folder,
                None,
                "embeddings= names a file; give the folder holding docs.npy, docs.ids, queries.npy, queries.ids",
            )
        self.docs = self._read("docs")
        self.queries = self._read("queries")
        dims = {matrix.shape[1] for matrix, _ in (self.docs, self.queries)}
        if len(dims) != 1:
            raise FormatError(self.folder, None, f"docs.npy and queries.npy differ in dimension: {sorted(dims)}")

    def _read(self, part: str) -> tuple[np.ndarray, dict[str, int]]:
        matrix_path, ids_path = self.folder / f"{part}.npy", self.folder / f"{part}.ids"
        try:
            matrix = np.load(matrix_path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            if not matrix_path.is_file():
                raise FileNotFoundError(f"{matrix_path}: no such file (precomputed embeddings)") from None
            raise FormatError(matrix_path, None, f"not a .npy matrix ({exc})") from None
        if not isinstance(matrix, np.ndarray):  # np.load opens a zip of arrays (numpy.savez) whatever its name
            matrix.close()
            raise FormatError(
                matrix_path, None, "a .npz archive of arrays, not a .npy matrix (write it with numpy.save)"
            )
        ids = [line.strip() for line in read_lines(ids_path)]
        if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.number) or np.iscomplexobj(matrix):
            raise FormatError(
                matrix_path, None, f"expected a 2-d matrix of real numbers, got {matrix.dtype} of shape {matrix.shape}"
            )
        if len(ids) != len(matrix):
            raise FormatError(ids_path, None, f"{len(ids)} ids but {matrix_path.name} has {len(matrix)} rows")
        positions: dict[str, int] = {}
        for line, doc in enumerate(ids, start=1):
            if not doc or doc in positions:
                raise FormatError(ids_path, line, "empty id" if not doc else f"id {doc!r} given twice")
            positions[doc] = line - 1
        with np.errstate(over="ignore"):
            vectors = matrix.astype(np.float32)  # what is searched: a value beyond float32's range is infinite
        problem = non_finite(vectors, [f"{_ROW_NAMES[part]} {i!r}" for i in ids], matrix)
        if problem:
            raise FormatError(matrix_path, None, problem)
        return vectors, positions

    def rows(self, part: str, ids: Sequence[str]) -> np.ndarray:
        """The vectors of ``ids`` (every one must have a row)."""
        matrix, positions = self.docs if part == "docs" else self.queries
        missing = [i for i in ids if i not in positions]
        if missing:
            raise FormatError(
                self.folder / f"{part}.ids", None, f"no embedding for {len(missing)} id(s), e.g. {missing[0]!r}"
            )
        return matrix[[positions[i] for i in ids]]


_ROW_NAMES = {"docs": "document", "queries": "query"}


@register("dense")
class DenseRetriever(FaissSearch, Retriever):
    """Texts embedded by an encoder, documents searched by FAISS (cosine or dot product)."""

    matches_unknown_words: ClassVar[bool] = True

    model = Param(
        str,
        AUTO,
        "auto (minilm when installed, else model2vec), an encoder name (model2vec, minilm, or registered), "
        "a model folder, or precomputed; "
        "from Python also an encoder object or a callable texts -> ndarray",
        objects=(Encoder, Callable),
        check=_non_empty,
    )
    embeddings = Param(str, None, "model=precomputed: folder of docs.npy/.ids and queries.npy/.ids", optional=True)
    similarity = Param(str, "auto", "auto: as the model expects; cosine; dot", choices=("auto", *SIMILARITIES))
    batch_size = Param(int, 256, "texts encoded per batch", low=1)
    cache = Param(bool, True, "keep document vectors in <cache>/embeddings, keyed by model + corpus")
    faiss_index = FAISS_INDEX
    hnsw_m = HNSW_M
    ef_search = EF_SEARCH
    nlist = NLIST
    nprobe = NPROBE

    @classmethod
    def check_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The table's checks, then: ``embeddings`` exactly when ``model=precomputed``."""
        checked = super().check_params(values)
        if (checked["model"] == PRECOMPUTED) != (checked["embeddings"] is not None):
            raise SpecError(
                f"{cls.name}: model={checked['model']!r}, embeddings={checked['embeddings']!r} is not allowed; "
                "model=precomputed needs embeddings=FOLDER, and embeddings= is only for model=precomputed"
            )
        return checked

    def effective_params(self) -> dict[str, Any]:
        """Parameters with ``model=auto`` shown as the encoder it means here (minilm or model2vec)."""
        params = self.get_params()
        if params["model"] == AUTO:
            params["model"] = best_installed()
        return params

    # --- encoders ------------------------------------------------------------------
    def _source(self) -> Encoder | PrecomputedEmbeddings:
        if self.model == PRECOMPUTED:
            return PrecomputedEmbeddings(self.embeddings)
        if isinstance(self.model, str):
            return get_encoder(self.model)
        if isinstance(self.model, Encoder):
            return self.model
        return CallableEncoder(self.model)

    def _similarity(self, source: Encoder | PrecomputedEmbeddings) -> str:
        if self.similarity != "auto":
            return self.similarity
        return "cosine" if isinstance(source, PrecomputedEmbeddings) else source.similarity

    def _encode(self, texts: Sequence[str], names: Sequence[str], desc: str) -> np.ndarray:
        """The encoder's vectors of ``texts``, refused if not one finite row per text (``names`` say
        whose text each is, for the message)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # longest first; stable on ties
        batches = [
            np.asarray(self.source_.encode(list(batch)), dtype=np.float32)
            for batch in progress_slices([texts[i] for i in order], self.batch_size, desc=desc, unit="text")
        ]
        if not batches:
            return np.empty((0, 0), dtype=np.float32)
        if any(b.ndim != 2 for b in batches) or sum(len(b) for b in batches) != len(texts):
            shapes = [b.shape for b in batches]
            raise RankscopeError(f"the encoder returned {shapes} for {len(texts)} texts")
        vectors = np.empty((len(texts), batches[0].shape[1]), dtype=np.float32)
        vectors[order] = np.vstack(batches)
        problem = non_finite(vectors, names)
        if problem:
            raise VectorValueError(f"the encoder's output: {problem}")
        return vectors

    def _finish(self, vectors: np.ndarray) -> np.ndarray:
        return l2_normalise(np.asarray(vectors, dtype=np.float64)) if self.similarity_ == "cosine" else vectors

    # --- building --------------------------------------------------------------------
    def index(self, corpus: pd.DataFrame) -> DenseRetriever:
        """Embed the documents (or read them from the cache) and build the FAISS index."""
        doc_ids, texts = document_texts(corpus)
        self.source_ = self._source()
        self.model_name_ = best_installed() if self.model == AUTO else self.model
        truncated = getattr(self.source_, "truncated", None)
        if truncated is not None:
            self.truncated_ = (truncated(texts), len(texts), self.source_.max_length)
        self.similarity_ = self._similarity(self.source_)
        if isinstance(self.source_, PrecomputedEmbeddings):
            raw = self.source_.rows("docs", doc_ids)
        else:
            raw = self._cached_document_vectors(doc_ids, texts)
        self.doc_ids_ = np.asarray(doc_ids, dtype=object)
        self.doc_index_ = {doc: i for i, doc in enumerate(doc_ids)}
        self.doc_vectors_ = self._finish(raw).astype(np.float32)
        self._build_faiss()
        return self

    def _cached_document_vectors(self, doc_ids: list[str], texts: list[str]) -> np.ndarray:
        identity = self.source_.identity
        names = [f"document {doc!r}" for doc in doc_ids]
        if not self.cache or identity is None:
            return self._encode(texts, names, "encoding documents")
        path = cache_path(identity, doc_ids, texts)
        if path.is_file():
            return read_cached(path, names)
        vectors = self._encode(texts, names, "encoding documents")
        buffer = io.BytesIO()
        np.save(buffer, vectors, allow_pickle=False)
        with atomic_write(path, "wb") as handle:
            handle.write(buffer.getvalue())
        return vectors

    def set_params(self, **params: Any) -> DenseRetriever:
        """Search-time parameters apply at once; index parameters rebuild FAISS; the rest needs index()."""
        old = self.get_params()
        super().set_params(**params)
        changed = {key for key, value in params.items() if old[key] is not value and old[key] != value}
        if not hasattr(self, "faiss_") or changed <= {"ef_search", "nprobe", "batch_size", "cache"}:
            return self
        if changed <= {"ef_search", "nprobe", "faiss_index", "hnsw_m", "nlist"}:
            self._build_faiss()
        else:
            for attribute in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
                delattr(self, attribute)
        return self

    # --- searching ---------------------------------------------------------------------
    def _query_vectors(self, query_ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        if isinstance(self.source_, PrecomputedEmbeddings):
            raw = self.source_.rows("queries", query_ids)
        else:
            raw = self._encode(texts, [f"query {q!r}" for q in query_ids], "encoding queries")
        return self._finish(raw).astype(np.float64)

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """Top-k documents by similarity; ties by doc_id descending; no rows for a query without text."""
        k = check_k(k)
        self._check_fitted("faiss_")
        query_ids, texts = query_texts(queries)
        keep = [i for i, text in enumerate(texts) if text.strip()]
        ids = [query_ids[i] for i in keep]
        vectors = self._query_vectors(ids, [texts[i] for i in keep])
        return self._search_vectors(ids, vectors, k, self.doc_ids_)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Similarity of ``query`` with each given document (0 for a query without text)."""
        return self.score_many([query], [doc_ids])[0]

    def score_many(self, queries: Sequence[str], doc_lists: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """:meth:`score` for many queries, their texts encoded in batches (what a rerank stage calls)."""
        self._check_fitted("faiss_")
        positions = [doc_positions(self.doc_index_, docs) for docs in doc_lists]
        if isinstance(self.source_, PrecomputedEmbeddings):
            raise RankscopeError("dense:model=precomputed cannot embed a new query text; score() needs an encoder")
        keep = [i for i, query in enumerate(queries) if query.strip()]
        vectors = dict(zip(keep, self._query_vectors([str(i) for i in keep], [queries[i] for i in keep])))
        return [
            self.doc_vectors_[rows].astype(np.float64) @ vectors[i] if i in vectors else np.zeros(len(rows))
            for i, rows in enumerate(positions)
        ]

    def notes(self) -> list[str]:
        """The static model is weak: say so (and that ``auto`` fell back to it), and what to use instead;
        after indexing with a model that cuts long texts, how many documents it cut."""
        resolved = best_installed() if self.model == AUTO else self.model
        notes = [static_model_note(auto=self.model == AUTO)] if resolved == "model2vec" else []
        truncated = self.__dict__.get("truncated_")
        if truncated is not None and truncated[0]:
            notes.append(truncation_note(*truncated))
        return notes

    def diagnostics(self) -> dict[str, float]:
        """The recall of an approximate index against exact search at the last search's depth."""
        self._check_fitted("faiss_")
        return self._index_diagnostics()

    # --- persistence -------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Parameters, document vectors and the FAISS index; a Python encoder object cannot be named in a file."""
        self._check_fitted("faiss_")
        if not isinstance(self.model, str):
            raise RankscopeError("a dense retriever with a Python encoder cannot be saved: use a model name or folder")
        faiss_bytes = to_bytes(self.faiss_)
        meta = {
            "params": self.get_params(),
            "encoder": self.model_name_,  # what model=auto meant here: a load elsewhere encodes queries alike
            "similarity": self.similarity_,
            "sha256": sha256(faiss_bytes),
        }
        arrays = {"doc_ids": self.doc_ids_, "doc_vectors": self.doc_vectors_}
        save_index(directory, self.name, meta, arrays, files={FAISS_FILE: faiss_bytes})

    @classmethod
    def load(cls, directory: str | Path) -> DenseRetriever:
        """Open a saved index; the encoder is loaded again by name (queries need it)."""
        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "similarity": str, "sha256": str})
        retriever = from_saved_params(cls, meta["params"], directory)
        retriever.model_name_ = str(meta.get("encoder", retriever.model))
        retriever.source_ = get_encoder(retriever.model_name_) if retriever.model == AUTO else retriever._source()
        retriever.similarity_ = meta["similarity"]
        retriever.doc_ids_ = np.asarray(arrays["doc_ids"], dtype=object)
        retriever.doc_index_ = {doc: i for i, doc in enumerate(retriever.doc_ids_)}
        retriever.doc_vectors_ = np.asarray(arrays["doc_vectors"], dtype=np.float32)
        problem = non_finite(retriever.doc_vectors_, [f"document {doc!r}" for doc in retriever.doc_ids_])
        if problem:
            raise IndexFormatError(Path(directory) / "doc_vectors.npy", None, problem)
        retriever.faiss_ = from_bytes(read_checked(Path(directory) / FAISS_FILE, str(meta["sha256"])))
        if retriever.faiss_.ntotal != len(retriever.doc_ids_):
            raise IndexFormatError(Path(directory) / FAISS_FILE, None, "holds a different number of documents")
        return retriever


def documents_digest(doc_ids: Sequence[str], texts: Sequence[str]) -> str:
    """SHA-256 of the documents as indexed (ids and texts, in order)."""
    digest = hashlib.sha256()
    for doc, text in zip(doc_ids, texts):
        digest.update(doc.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def cache_path(identity: str, doc_ids: Sequence[str], texts: Sequence[str]) -> Path:
    """``<cache>/embeddings/<sha256 of encoder identity + corpus fingerprint>.npy``."""
    from rankscope.corpora.paths import cache_root

    key = json.dumps([CACHE_FORMAT, identity, documents_digest(doc_ids, texts)])
    return cache_root() / "embeddings" / f"{hashlib.sha256(key.encode('utf-8')).hexdigest()}.npy"


def read_cached(path: Path, names: Sequence[str]) -> np.ndarray:
    """A cached matrix of the documents ``names``; a damaged entry is an error naming the file (delete it
    to encode again)."""
    try:
        vectors = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise FormatError(path, None, f"damaged embedding cache entry ({exc}): delete it to encode again") from None
    if vectors.ndim != 2 or len(vectors) != len(names) or not np.issubdtype(vectors.dtype, np.floating):
        raise FormatError(path, None, f"cache entry holds {vectors.shape}, expected {len(names)} rows: delete it")
    problem = non_finite(vectors, names)
    if problem:
        raise FormatError(path, None, f"damaged embedding cache entry, {problem}: delete it to encode again")
    return vectors
