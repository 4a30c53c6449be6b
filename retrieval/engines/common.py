"""What the engine retrievers share: the engine's own index in a private folder, the tie rule at the cut, saving.

An engine (PISA, Lucene) indexes and scores with its own analyzer and formula; rankscope only
feeds it documents under their corpus positions (``"0"``, ``"1"``, ...: any doc id is safe, even
one with spaces) and maps its hits back. Engines break ties their own way, so a query is asked
for more than ``k`` hits (:data:`TIE_MARGIN`) and asked again for every hit when the k-th score
is still tied at the end of what came back; the run is then cut by the tie rule
(:func:`retrieval.topk.top_k`, whose reference is :func:`corpora.schema.sort_run`).

A saved index is the engine's files plus ``meta.json`` and the doc ids (:func:`retrieval.storage.save_index`,
checksummed); loading copies the files into a private working folder, because engines write
derived files (PISA's per-k1/b score bounds) next to their index.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.retrieval.base import (
    QueryInput,
    Retriever,
    check_k,
    doc_positions,
    document_texts,
    make_run,
    query_texts,
)
from rankscope.retrieval.storage import (
    IndexFormatError,
    from_saved_params,
    load_index,
    plain_name,
    require_fields,
    save_index,
)
from rankscope.retrieval.termcounts import doc_id_ranks
from rankscope.retrieval.topk import top_k

if TYPE_CHECKING:
    import pandas as pd

TIE_MARGIN = 64
"""Hits asked beyond ``k``; a tie running past them makes the engine return every hit for that query."""

Hits = tuple[np.ndarray, np.ndarray]
"""One query's hits: corpus positions (int64) and scores (float64), in any order."""


class EngineUnavailableError(RankscopeError, ImportError):
    """An engine's package or runtime is not installed; the message says how to install it."""


class EngineError(RankscopeError, RuntimeError):
    """The engine failed on input rankscope gave it (a message from the engine, in one line)."""


class EngineRetriever(Retriever):
    """Index, search, score, save and load around an engine; subclasses talk to the engine.

    A subclass sets ``index_side`` (parameters the engine's index depends on) and implements
    ``_build(folder, texts)`` (index ``texts`` under their positions into ``folder``) and
    ``_hits(texts, depth)`` (each text's best ``depth`` hits, ties in any order).
    """

    index_side: ClassVar[frozenset[str]] = frozenset()
    """Parameters baked into the engine's index: changing them after ``index()`` is refused."""
    skip_files: ClassVar[frozenset[str]] = frozenset()
    """Files of the engine's folder not to save (lock files)."""

    @classmethod
    def unavailable(cls) -> str | None:
        """Why the engine cannot run here (how to install it), or None when it can."""
        return None

    def _require(self) -> None:
        reason = type(self).unavailable()
        if reason:
            raise EngineUnavailableError(reason)

    def _build(self, folder: Path, texts: Sequence[str]) -> None:
        raise NotImplementedError

    def _hits(self, texts: Sequence[str], depth: int) -> list[Hits]:
        raise NotImplementedError

    def _open(self) -> None:
        """Prepare to search the engine folder (called after building and after loading)."""

    def index(self, corpus: pd.DataFrame) -> EngineRetriever:
        """Index the corpus (title and text) with the engine's own indexer into a private folder."""
        doc_ids, texts = document_texts(corpus)
        if not doc_ids:
            raise EngineError("cannot index an empty corpus")
        self._require()
        workdir = tempfile.TemporaryDirectory(prefix=f"rankscope-{self.name}-")
        self._build(Path(workdir.name) / "engine", texts)
        self._adopt(workdir, np.asarray(doc_ids, dtype=object))
        return self

    def _adopt(self, workdir: tempfile.TemporaryDirectory[str], doc_ids: np.ndarray) -> None:
        self.workdir_ = workdir  # removed when the retriever is garbage-collected
        self.engine_dir_ = Path(workdir.name) / "engine"
        self.doc_ids_ = doc_ids
        self.doc_id_rank_ = doc_id_ranks(doc_ids)
        self.doc_index_ = {doc: i for i, doc in enumerate(doc_ids)}
        self._open()

    def ranked(self, texts: Sequence[str], k: int) -> list[Hits]:
        """Each text's top ``k`` hits in run order (score descending, then doc id descending)."""
        n_docs = len(self.doc_ids_)
        depth = min(n_docs, k + TIE_MARGIN)
        found = self._hits(texts, depth)
        again = [i for i, (positions, scores) in enumerate(found) if _tie_reaches_end(scores, k, depth, n_docs)]
        if again:
            for i, hits in zip(again, self._hits([texts[i] for i in again], n_docs)):
                found[i] = hits
        best = []
        for positions, scores in found:
            chosen = top_k(scores, positions, k, self.doc_id_rank_)
            best.append((positions[chosen], scores[chosen]))
        return best

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """Top ``k`` hits per query by the tie rule (a query the engine matches nothing for gets no rows)."""
        self._check_fitted("engine_dir_")
        k = check_k(k)
        query_ids, texts = query_texts(queries)
        best = self.ranked(texts, k)
        return make_run(query_ids, [self.doc_ids_[p] for p, _ in best], [s for _, s in best], ordered=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The engine's scores of the given documents for one query (0 for a document it does not match)."""
        self._check_fitted("engine_dir_")
        wanted = doc_positions(self.doc_index_, doc_ids)
        dense = np.zeros(len(self.doc_ids_), dtype=np.float64)
        positions, scores = self._hits([query], len(self.doc_ids_))[0]
        dense[positions] = scores
        return dense[wanted]

    def set_params(self, **params: Any) -> EngineRetriever:
        """Change parameters; one the engine's index depends on cannot change after ``index()``."""
        baked = sorted(name for name in set(params) & self.index_side if params[name] != getattr(self, name))
        if hasattr(self, "engine_dir_") and baked:
            raise ValueError(f"{self.name}: {', '.join(baked)} cannot change after index(): index again")
        super().set_params(**params)
        return self

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the engine's index files, the doc ids and the parameters (atomic, checksummed)."""
        self._check_fitted("engine_dir_")
        files = {
            path.name: path.read_bytes()
            for path in sorted(self._index_files())
            if path.is_file() and path.name not in self.skip_files
        }
        meta = {"params": self.get_params(), "engine_files": sorted(files)}
        save_index(directory, self.name, meta, {"doc_ids": self.doc_ids_}, files=files)

    def _index_files(self) -> list[Path]:
        """The engine's own index files (what ``_build`` wrote, not files derived at search time)."""
        return list(self.engine_dir_.iterdir())

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> EngineRetriever:
        """Open a saved index: its engine files are copied into a private working folder."""
        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "engine_files": list})
        retriever = from_saved_params(cls, meta["params"], directory)
        if "doc_ids" not in arrays:
            raise IndexFormatError(Path(directory), None, "missing array 'doc_ids'")
        retriever._require()
        workdir = tempfile.TemporaryDirectory(prefix=f"rankscope-{cls.name}-")
        engine_dir = Path(workdir.name) / "engine"
        engine_dir.mkdir()
        for name in meta["engine_files"]:
            if not plain_name(name):
                raise IndexFormatError(Path(directory) / "meta.json", None, f"engine file {name!r} is not a plain name")
            source = Path(directory) / name
            if not source.is_file():
                raise IndexFormatError(source, None, "an engine file listed in meta.json is missing")
            shutil.copyfile(source, engine_dir / name)
        retriever._adopt(workdir, np.asarray(arrays["doc_ids"], dtype=object))
        return retriever


@contextlib.contextmanager
def engine_output(engine: str) -> Iterator[None]:
    """Keep what a compiled engine prints (logs, progress bars written to file descriptors 1 and 2)
    out of rankscope's output; if the call fails, its last printed line is the error's text."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 1)
        os.dup2(captured.fileno(), 2)
        try:
            yield
        except Exception as exc:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            captured.seek(0)
            lines = [line for line in captured.read().decode("utf-8", "replace").splitlines() if line.strip()]
            said = lines[-1].strip() if lines else ""
            raise EngineError(f"{engine} failed: {type(exc).__name__}: {exc}" + (f" ({said})" if said else "")) from exc
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _tie_reaches_end(scores: np.ndarray, k: int, depth: int, n_docs: int) -> bool:
    """True when the engine may hold more hits tied with the k-th best than it returned."""
    if len(scores) < depth or depth >= n_docs or len(scores) < k:
        return False
    kth = np.sort(scores)[::-1][k - 1]
    return bool(kth == scores.min())
