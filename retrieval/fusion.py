"""Rank fusion: combine runs of different retrievers into one.

Two methods, as plain functions on run DataFrames (so any runs can be fused,
whatever produced them):

- :func:`rrf`, reciprocal rank fusion (Cormack, Clarke and Buettcher 2009):
  ``score(d) = sum over runs r that retrieved d of 1 / (k + rank_r(d))``, k = 60;
- :func:`combsum`, CombSUM (Fox and Shaw 1994) of per-query normalised scores,
  ``minmax`` ((s - min) / (max - min)) or ``zscore`` ((s - mean) / std, population std).

Conventions (the same as ranx, so ``ranx.fuse`` gives the same numbers):
ranks are recomputed from the scores with the tie rule of trec_eval (score
descending, then doc_id descending), whatever a ``rank`` column says; a
document missing from a run contributes 0; a query whose scores are all equal
normalises to 0 in both normalisations (no NaN). The fused run is ordered by the
same tie rule.

:class:`HybridRetriever` (``hybrid``) is fusion as a retriever. Its spec names the
retrievers to fuse joined by ``+``; a sub-spec with parameters is wrapped in
``[...]`` (required when it has a comma, which would otherwise end the hybrid's
own parameter)::

    hybrid:retrievers=bm25+w2v,method=rrf,k=60
    hybrid:retrievers=[bm25:k1=0.9,b=0.4]+[w2v:pooling=idf],method=combsum,norm=zscore,depth=100
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import SchemaError, duplicate_message
from rankscope.corpora.schema import sort_run, validate
from rankscope.retrieval.base import QueryInput, Retriever, UnknownDocumentError, check_k, document_texts, query_texts
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import (
    SpecError,
    load_retriever,
    make_retriever,
    parse_spec,
    register,
    split_top_level,
)
from rankscope.retrieval.storage import IndexFormatError, load_index, plain_name, require_fields, save_index

NORMALISATIONS = ("minmax", "zscore")
METHODS = ("rrf", "combsum")


def rrf(runs: Sequence[pd.DataFrame], k: float = 60) -> pd.DataFrame:
    """Reciprocal rank fusion of ``runs``; ``k`` dampens the weight of the top ranks."""
    if not np.isfinite(k) or k < 0:
        raise ValueError(f"rrf k must be a finite number >= 0, got {k!r}")
    parts = []
    for run in _checked(runs):
        contribution = 1.0 / (k + run["rank"].to_numpy(dtype=np.float64))
        parts.append(run[["query_id", "doc_id"]].assign(score=contribution))
    return _summed(parts)


def combsum(runs: Sequence[pd.DataFrame], norm: str = "minmax") -> pd.DataFrame:
    """CombSUM: per query, normalise each run's scores with ``norm``, then add them up."""
    if norm not in NORMALISATIONS:
        raise ValueError(f"combsum norm must be one of {list(NORMALISATIONS)}, got {norm!r}")
    parts = []
    for run in _checked(runs):
        scores = run.groupby("query_id", sort=False)["score"]
        if norm == "minmax":
            low = scores.transform("min")
            spread = scores.transform("max") - low
        else:
            low = scores.transform("mean")
            spread = scores.transform("std", ddof=0)
        normalised = np.where(spread > 0, (run["score"] - low) / spread.where(spread > 0, 1.0), 0.0)
        parts.append(run[["query_id", "doc_id"]].assign(score=normalised))
    return _summed(parts)


def fuse(runs: Sequence[pd.DataFrame], method: str = "rrf", *, k: float = 60, norm: str = "minmax") -> pd.DataFrame:
    """Fuse with ``method`` (``rrf`` uses ``k``, ``combsum`` uses ``norm``)."""
    if method == "rrf":
        return rrf(runs, k=k)
    if method == "combsum":
        return combsum(runs, norm=norm)
    raise ValueError(f"unknown fusion method {method!r}; known: {list(METHODS)}")


def _checked(runs: Sequence[pd.DataFrame]) -> list[pd.DataFrame]:
    """Validated copies with ranks recomputed by the tie rule; duplicates are refused."""
    if isinstance(runs, pd.DataFrame) or len(runs) == 0:
        raise ValueError("fusion takes a non-empty list of run DataFrames")
    checked = []
    for i, run in enumerate(runs):
        source = f"runs[{i}]"
        valid = sort_run(validate(run, "run", source))
        dup = valid.duplicated(["query_id", "doc_id"])
        if dup.any():
            first = valid[dup].iloc[0]
            raise SchemaError(f"{source}: {duplicate_message('query, document', (first['query_id'], first['doc_id']))}")
        checked.append(valid)
    return checked


def _summed(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Add contributions per (query_id, doc_id) and rank by the tie rule."""
    combined = pd.concat(parts, ignore_index=True)
    summed = combined.groupby(["query_id", "doc_id"], sort=False, as_index=False)["score"].sum()
    return sort_run(summed.assign(score=summed["score"].astype(np.float64)))


def split_retrievers(retrievers: str) -> list[str]:
    """The sub-specs of a hybrid's ``retrievers`` value: ``a+b``, each optionally in ``[...]``.

    A sub-spec with more than one parameter must be bracketed (its commas would
    otherwise end the hybrid's own parameter): ``[bm25:k1=0.9,b=0.4]+w2v``.
    """
    try:
        parts = split_top_level(retrievers, "+")
    except SpecError as exc:
        raise SpecError(f"hybrid retrievers {retrievers!r}: {exc}") from None
    specs = []
    for part in (p.strip() for p in parts):
        if part.startswith("[") and part.endswith("]"):
            part = part[1:-1].strip()
        if not part:
            raise SpecError(f"hybrid retrievers {retrievers!r}: empty retriever spec")
        specs.append(part)
    if len(specs) < 2:
        raise SpecError(f"hybrid retrievers {retrievers!r}: fusion needs at least two, joined by '+'")
    return specs


def check_retrievers(retrievers: str) -> None:
    """Build (without indexing) every sub-retriever, so a bad sub-spec is refused before any work."""
    for spec in split_retrievers(retrievers):
        make_retriever(spec)


@register("hybrid")
class HybridRetriever(Retriever):
    """Fuses the runs of other retrievers: ``hybrid:retrievers=bm25+w2v,method=rrf,k=60``.

    Each sub-retriever returns its top ``depth`` documents per query; those runs
    are fused with ``method`` (``rrf`` with constant ``k``, or ``combsum`` with
    ``norm``), and the fused run is cut at the k asked of :meth:`search`. The
    default, BM25 + Word2Vec by z-score CombSUM, scored best of the combinations
    measured on Cranfield and CISI (docs/retrievers-dense-and-fusion.md).
    """

    parameters = (
        Param(
            "retrievers",
            str,
            "bm25+w2v",
            "the specs to fuse, joined by '+'; a spec with parameters in [...]",
            check=check_retrievers,
        ),
        Param("method", str, "combsum", "rrf or combsum", choices=METHODS),
        Param("k", float, 60.0, "rrf: the constant added to each rank", low=0),
        Param("norm", str, "zscore", "combsum: per-query score normalisation", choices=NORMALISATIONS),
        Param("depth", int, 1000, "documents each retriever returns per query before fusion", low=1),
    )

    def set_params(self, **params: Any) -> HybridRetriever:
        """Change parameters; fusion settings apply at once, new ``retrievers`` need index() again."""
        changed_parts = "retrievers" in params and params["retrievers"] != self.retrievers
        super().set_params(**params)
        if changed_parts:
            for attribute in ("retrievers_", "doc_ids_", "runs_"):
                self.__dict__.pop(attribute, None)
        return self

    def index(self, corpus: pd.DataFrame) -> HybridRetriever:
        """Index every sub-retriever on the corpus."""
        doc_ids, _ = document_texts(corpus)
        self.retrievers_ = [make_retriever(spec).index(corpus) for spec in split_retrievers(self.retrievers)]
        self.doc_ids_ = frozenset(doc_ids)
        self.__dict__.pop("runs_", None)
        return self

    def _runs(self, queries: QueryInput) -> list[pd.DataFrame]:
        """Each sub-retriever's top-``depth`` run. The runs of the last queries searched are kept
        (keyed on the queries, ``depth`` and each sub-retriever's spec), so a change of ``method``,
        ``k`` or ``norm`` only re-fuses: what makes tuning a hybrid cheap."""
        query_ids, texts = query_texts(queries)
        key = (self.depth, tuple(r.spec() for r in self.retrievers_), tuple(query_ids), tuple(texts))
        cached = self.__dict__.get("runs_")
        if cached is None or cached[0] != key:
            self.runs_ = (key, [retriever.search(queries, k=self.depth) for retriever in self.retrievers_])
        return self.runs_[1]

    def _fused(self, queries: QueryInput) -> pd.DataFrame:
        self._check_fitted("retrievers_")
        return fuse(self._runs(queries), self.method, k=self.k, norm=self.norm)

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """The fused run of the sub-retrievers' top-``depth`` lists, cut at ``k`` per query."""
        self._check_fitted("retrievers_")
        k = check_k(k)
        fused = self._fused(queries)
        return fused[fused["rank"] <= k].reset_index(drop=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Fused scores as :meth:`search` gives them; 0 for documents no sub-retriever put in its top ``depth``."""
        self._check_fitted("retrievers_")
        unknown = [d for d in doc_ids if d not in self.doc_ids_]
        if unknown:
            raise UnknownDocumentError(f"score(): document {unknown[0]!r} is not in the index")
        fused = self._fused(pd.DataFrame({"query_id": ["query"], "text": [query]}))
        found = dict(zip(fused["doc_id"], fused["score"]))
        return np.fromiter((found.get(d, 0.0) for d in doc_ids), dtype=np.float64, count=len(doc_ids))

    def save(self, directory: str | os.PathLike[str]) -> None:
        """The fusion parameters and doc ids, then each sub-retriever's index in ``retriever-<i>/``."""
        self._check_fitted("retrievers_")
        parts = [f"retriever-{i}" for i in range(len(self.retrievers_))]
        meta = {"params": self.get_params(), "parts": parts}
        save_index(directory, self.name, meta, {"doc_ids": np.asarray(sorted(self.doc_ids_), dtype=object)})
        for part, retriever in zip(parts, self.retrievers_):
            retriever.save(Path(directory) / part)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> HybridRetriever:
        """Open a saved hybrid; each sub-index must be of the kind its spec in the params names."""
        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "parts": list})
        try:
            retriever = cls(**meta["params"])
        except (TypeError, ValueError) as exc:
            raise IndexFormatError(Path(directory) / "meta.json", None, f"params: {exc}") from None
        names = [parse_spec(spec)[0] for spec in split_retrievers(retriever.retrievers)]
        if not all(plain_name(part) for part in meta["parts"]):
            raise IndexFormatError(Path(directory) / "meta.json", None, "'parts' must be folder names inside the index")
        parts = [load_retriever(Path(directory) / part) for part in meta["parts"]]
        if [part.name for part in parts] != names:
            raise IndexFormatError(
                Path(directory) / "meta.json", None, f"sub-indexes hold {[p.name for p in parts]}, params say {names}"
            )
        retriever.retrievers_ = parts
        retriever.doc_ids_ = frozenset(arrays["doc_ids"])
        return retriever
