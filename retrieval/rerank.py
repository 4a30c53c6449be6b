"""A rerank stage: re-score each query's top ``depth`` from a first stage with another system.

``rerank:first=bm25,by=dense:model=minilm,depth=100,alpha=0`` searches with ``first``,
scores each query's top ``depth`` documents with ``by`` and ranks them by that score
(or, with ``alpha`` > 0, by ``alpha * minmax(first score) + (1 - alpha) * minmax(by score)``,
both min-max normalised over the query's top ``depth``); the first stage's documents
below ``depth`` follow in the first stage's order. A sub-spec with a comma goes in
brackets: ``first=[bm25:k1=0.9,b=0.4]``.

``by`` may be a spec (a retriever indexed on the same corpus, scored with its
``score(query, doc_ids)``) or, in Python, any object with ``score(query, doc_ids)``,
an object with ``predict(pairs)`` such as a sentence-transformers ``CrossEncoder``
loaded from a local folder (given ``(query, document text)`` pairs), or a callable
``f(query, document_texts) -> scores``.

Scores (documented, so ``score()`` and ``search()`` agree): a reranked document gets
its reranking score; a document below ``depth`` gets its first-stage score shifted so
that the best of them lies 1 below the lowest reranked score
(``s - s_depth + min(reranked) - 1``, with ``s_depth`` the first-stage score at rank
``depth``). The shift keeps the first stage's score ties, so the tie rule (score
descending, then doc_id descending) orders every part as usual, including ties among
reranked scores.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.retrieval.base import (
    QueryInput,
    Retriever,
    RetrieverProtocol,
    check_k,
    document_texts,
    make_run,
    part_notes,
    query_texts,
)
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import load_retriever, make_retriever, parse_spec, register
from rankscope.retrieval.storage import (
    IndexFormatError,
    from_saved_params,
    load_index,
    replacing_index,
    require_fields,
    save_index,
)

if TYPE_CHECKING:
    import pandas as pd

PARTS = ("first", "by")


def unbracket(spec: str) -> str:
    """A sub-spec without the ``[...]`` that protects its commas."""
    spec = spec.strip()
    return spec[1:-1].strip() if spec.startswith("[") and spec.endswith("]") else spec


def _check_spec(spec: str) -> None:
    make_retriever(unbracket(spec))  # unknown names and parameters fail now, not after indexing


@runtime_checkable
class HasScore(Protocol):
    def score(self, query: str, doc_ids: Sequence[str]) -> Any: ...


@runtime_checkable
class HasPredict(Protocol):
    def predict(self, pairs: list[tuple[str, str]]) -> Any: ...


@register("rerank")
class RerankRetriever(Retriever):
    """``first`` retrieves, ``by`` re-scores each query's top ``depth``, optionally mixed with weight ``alpha``."""

    first = Param(
        str,
        "bm25",
        "the first stage: a spec ([...] around one with commas); from Python also a retriever",
        objects=(Retriever, RetrieverProtocol),
        check=_check_spec,
    )
    by = Param(
        str,
        "dense",
        "the reranker: a spec; from Python also an object with score(query, doc_ids) or predict(pairs) "
        "(a CrossEncoder), or a callable f(query, document_texts)",
        objects=(HasScore, HasPredict, Callable),
        check=_check_spec,
    )
    depth = Param(int, 100, "documents per query reranked (the first stage's top depth)", low=1)
    alpha = Param(float, 0.0, "weight of the min-max normalised first-stage score; 0: by's score alone", low=0, high=1)

    def set_params(self, **params: Any) -> RerankRetriever:
        """``depth`` and ``alpha`` apply at once; another ``first`` or ``by`` needs index() again."""
        new_parts = any(key in params and params[key] is not getattr(self, key) for key in PARTS)
        super().set_params(**params)
        if new_parts:
            for attribute in ("first_", "by_", "texts_"):
                self.__dict__.pop(attribute, None)
        return self

    def notes(self) -> list[str]:
        """Its stages' notes (the default reranker is the static dense model)."""
        return part_notes([self.first, self.by])

    def index(self, corpus: pd.DataFrame) -> RerankRetriever:
        """Index the first stage, and ``by`` when it is a spec or a retriever; keep the texts for text scorers."""
        doc_ids, texts = document_texts(corpus)
        self.first_ = _built(self.first).index(corpus)
        by = _built(self.by)
        self.by_ = by.index(corpus) if isinstance(self.by, str) or isinstance(by, Retriever) else by
        self.texts_ = dict(zip(doc_ids, texts))
        return self

    def _by_scores(self, queries: Sequence[str], doc_lists: Sequence[list[str]]) -> list[np.ndarray]:
        """``by``'s scores of each query's documents; a scorer with ``score_many`` (``dense``) gets all
        queries at once, so an encoder embeds them in batches instead of one call per query."""
        by = self.by_
        if hasattr(by, "score_many"):
            found = by.score_many(queries, doc_lists)
        elif hasattr(by, "score"):
            found = [by.score(query, docs) for query, docs in zip(queries, doc_lists)]
        else:
            found = []
            for query, docs in zip(queries, doc_lists):
                texts = [self.texts_[d] for d in docs]
                found.append(by.predict([(query, t) for t in texts]) if hasattr(by, "predict") else by(query, texts))
        return [_checked(scores, len(docs)) for scores, docs in zip(found, doc_lists)]

    def _rescored(self, head: pd.DataFrame, scores: np.ndarray) -> tuple[np.ndarray, float]:
        """Reranked scores of the head (first stage's top depth, in rank order; ``scores`` from ``by``)
        and the shift for the rest."""
        first = head["score"].to_numpy(dtype=np.float64)
        if self.alpha > 0:
            scores = self.alpha * _minmax(first) + (1.0 - self.alpha) * _minmax(scores)
        return scores, float(scores.min()) - 1.0 - float(first[-1])

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """The first stage's run to max(k, depth), its top ``depth`` reranked, cut at ``k``."""
        k = check_k(k)
        self._check_fitted("first_")
        query_ids, texts = query_texts(queries)
        first = self.first_.search(queries, k=max(k, self.depth))
        text_of = dict(zip(query_ids, texts))
        groups = list(first.groupby("query_id", sort=False))
        heads = [ranking[ranking["rank"] <= self.depth] for _, ranking in groups]
        by_scores = self._by_scores([text_of[q] for q, _ in groups], [h["doc_id"].tolist() for h in heads])
        ids, doc_lists, score_lists = [], [], []
        for (query_id, ranking), head, scores in zip(groups, heads, by_scores):
            tail = ranking[ranking["rank"] > self.depth]
            reranked, shift = self._rescored(head, scores)
            ids.append(query_id)
            doc_lists.append(np.concatenate([head["doc_id"].to_numpy(), tail["doc_id"].to_numpy()]))
            score_lists.append(np.concatenate([reranked, tail["score"].to_numpy(dtype=np.float64) + shift]))
        run = make_run(ids, doc_lists, score_lists)
        return run[run["rank"] <= k].reset_index(drop=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The scores :meth:`search` gives: reranked in the top ``depth``, shifted first-stage scores below."""
        import pandas as pd

        self._check_fitted("first_")
        doc_ids = [str(d) for d in doc_ids]
        scores = np.asarray(self.first_.score(query, doc_ids), dtype=np.float64)  # also checks the ids
        head = self.first_.search(pd.DataFrame({"query_id": ["query"], "text": [query]}), k=self.depth)
        if head.empty:
            return scores
        reranked, shift = self._rescored(head, self._by_scores([query], [head["doc_id"].tolist()])[0])
        found = dict(zip(head["doc_id"], reranked))
        return np.array([found.get(d, s + shift) for d, s in zip(doc_ids, scores)], dtype=np.float64)

    def diagnostics(self) -> dict[str, float]:
        """The stages' own diagnostics, prefixed ``first `` and ``by ``."""
        self._check_fitted("first_")
        found = {}
        for role, part in (("first", self.first_), ("by", self.by_)):
            if hasattr(part, "diagnostics"):
                found.update({f"{role} {name}": value for name, value in part.diagnostics().items()})
        return found

    def save(self, directory: str | os.PathLike[str]) -> None:
        """The parameters and each stage's index in ``first/`` and ``by/`` (both must be given as specs)."""
        self._check_fitted("first_")
        if not (isinstance(self.first, str) and isinstance(self.by, str)):
            raise RankscopeError("a rerank stage built from Python objects cannot be saved: give first and by as specs")
        with replacing_index(directory) as staging:  # the parts swapped in with the rest, in one step
            save_index(staging, self.name, {"params": self.get_params(), "parts": list(PARTS)}, {})
            self.first_.save(staging / "first")
            self.by_.save(staging / "by")

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RerankRetriever:
        """Open a saved rerank stage; each part must be of the kind its spec names."""
        meta, _ = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict})
        retriever = from_saved_params(cls, meta["params"], directory)
        for role in PARTS:
            part = load_retriever(Path(directory) / role)
            expected = parse_spec(unbracket(getattr(retriever, role)))[0]
            if part.name != expected:
                raise IndexFormatError(
                    Path(directory) / role, None, f"holds a {part.name} index, params say {expected}"
                )
            setattr(retriever, f"{role}_", part)
        retriever.texts_ = {}  # both parts are specs, which score by id: no texts are needed
        return retriever


def _built(part: Any) -> Any:
    return make_retriever(unbracket(part)) if isinstance(part, str) else part


def _checked(scores: Any, n_docs: int) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(scores) != n_docs or not np.isfinite(scores).all():
        raise RankscopeError(f"rerank by returned {len(scores)} scores (or non-finite ones) for {n_docs} documents")
    return scores


def _minmax(values: np.ndarray) -> np.ndarray:
    """(v - min) / (max - min); all equal -> 0 (as fusion's min-max)."""
    spread = values.max() - values.min()
    return (values - values.min()) / spread if spread > 0 else np.zeros_like(values)
