"""Rank fusion: combine runs of different retrievers into one.

Two methods, as plain functions on run DataFrames (so any runs can be fused,
whatever produced them):

- :func:`rrf`, reciprocal rank fusion (Cormack, Clarke and Buettcher 2009):
  ``score(d) = sum over runs r that retrieved d of 1 / (k + rank_r(d))``, k = 60;
- :func:`combsum`, CombSUM (Fox and Shaw 1994) of per-query normalised scores,
  ``minmax`` ((s - min) / (max - min)) or ``zscore`` ((s - mean) / std, population std).

Both take optional ``weights``, one per run, multiplying that run's contribution
(with two runs and weights ``w, 1 - w``, CombSUM is the convex combination of
Bruch, Gai and Ingber 2023); without weights every run counts 1.

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
    hybrid:retrievers=bm25+[dense:model=minilm],weight=0.3

``weight`` is the first retriever's share: weights ``weight`` for it and
``(1 - weight) / (n - 1)`` for each of the other ``n - 1``. The default, 0.7, leans on the
first retriever (list the one you trust first, BM25 in the default): fused with a part far weaker
than itself, z-score CombSUM at 0.7 stayed within noise of BM25 alone where equal weights lost
significantly (0.027 and 0.052 nDCG@10 on Cranfield and CISI with the static ``dense`` model),
and with ``w2v`` it keeps most of the gain (benchmarks/fusion_defaults.py,
docs/retrievers-dense-and-fusion.md). ``weight=none`` counts every run 1 (the same ranking as
``weight = 1 / n``, which :meth:`HybridRetriever.effective_params` reports).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.errors import SchemaError, duplicate_message
from rankscope.corpora.schema import sort_run, validate
from rankscope.retrieval.base import (
    QueryInput,
    Retriever,
    UnknownDocumentError,
    check_k,
    document_texts,
    part_notes,
    query_texts,
)
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import (
    SpecError,
    load_retriever,
    make_retriever,
    parse_spec,
    register,
    split_top_level,
)
from rankscope.retrieval.storage import (
    IndexFormatError,
    from_saved_params,
    load_index,
    plain_name,
    replacing_index,
    require_fields,
    save_index,
)

if TYPE_CHECKING:
    import pandas as pd

NORMALISATIONS = ("minmax", "zscore")
METHODS = ("rrf", "combsum")


def rrf(runs: Sequence[pd.DataFrame], k: float = 60, weights: Sequence[float] | None = None) -> pd.DataFrame:
    """Reciprocal rank fusion of ``runs``; ``k`` dampens the weight of the top ranks; ``weights``
    (one per run, default all 1) multiply each run's ``1 / (k + rank)``."""
    return _rrf(_checked(runs), k, _check_weights(weights, len(runs)))


def _rrf(runs: list[pd.DataFrame], k: float, weights: Sequence[float] | None) -> pd.DataFrame:
    if not np.isfinite(k) or k < 0:
        raise ValueError(f"rrf k must be a finite number >= 0, got {k!r}")
    parts = []
    for run in runs:
        contribution = 1.0 / (k + run["rank"].to_numpy(dtype=np.float64))
        parts.append(run[["query_id", "doc_id"]].assign(score=contribution))
    return _summed(parts, weights)


def combsum(runs: Sequence[pd.DataFrame], norm: str = "minmax", weights: Sequence[float] | None = None) -> pd.DataFrame:
    """CombSUM: per query, normalise each run's scores with ``norm``, then add them up, each run's
    times its weight (``weights``, one per run, default all 1)."""
    return _combsum(_checked(runs), norm, _check_weights(weights, len(runs)))


def _combsum(runs: list[pd.DataFrame], norm: str, weights: Sequence[float] | None) -> pd.DataFrame:
    if norm not in NORMALISATIONS:
        raise ValueError(f"combsum norm must be one of {list(NORMALISATIONS)}, got {norm!r}")
    parts = []
    for run in runs:
        scores = run.groupby("query_id", sort=False)["score"]
        if norm == "minmax":
            low = scores.transform("min")
            spread = scores.transform("max") - low
        else:
            low = scores.transform("mean")
            spread = scores.transform("std", ddof=0)
        normalised = np.where(spread > 0, (run["score"] - low) / spread.where(spread > 0, 1.0), 0.0)
        parts.append(run[["query_id", "doc_id"]].assign(score=normalised))
    return _summed(parts, weights)


def fuse(
    runs: Sequence[pd.DataFrame],
    method: str = "rrf",
    *,
    k: float = 60,
    norm: str = "minmax",
    weights: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Fuse with ``method`` (``rrf`` uses ``k``, ``combsum`` uses ``norm``); ``weights``: one per run."""
    if method not in METHODS:
        raise ValueError(f"unknown fusion method {method!r}; known: {list(METHODS)}")
    return _fuse_checked(_checked(runs), method, k, norm, _check_weights(weights, len(runs)))


def _fuse_checked(
    runs: list[pd.DataFrame], method: str, k: float, norm: str, weights: Sequence[float] | None
) -> pd.DataFrame:
    """:func:`fuse` of runs :func:`_checked` already validated (a hybrid re-fuses its cached runs)."""
    return _rrf(runs, k, weights) if method == "rrf" else _combsum(runs, norm, weights)


def _check_weights(weights: Sequence[float] | None, n_runs: int) -> tuple[float, ...] | None:
    """One finite weight >= 0 per run, or None (every run counts 1)."""
    if weights is None:
        return None
    values = tuple(float(w) for w in weights)
    if len(values) != n_runs:
        raise ValueError(f"fusion weights: {len(values)} given for {n_runs} runs")
    if not all(np.isfinite(w) and w >= 0 for w in values):
        raise ValueError(f"fusion weights must be finite numbers >= 0, got {list(values)}")
    return values


def _checked(runs: Sequence[pd.DataFrame]) -> list[pd.DataFrame]:
    """Validated copies with ranks recomputed by the tie rule; duplicates are refused."""
    import pandas as pd

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


def _summed(parts: list[pd.DataFrame], weights: Sequence[float] | None = None) -> pd.DataFrame:
    """Add contributions (each part's times its weight, if any) per (query_id, doc_id); rank by the tie rule."""
    import pandas as pd

    if weights is not None:
        parts = [part.assign(score=part["score"].to_numpy() * w) for part, w in zip(parts, weights)]
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
    measured on Cranfield and CISI, with BM25's share 0.7: the weight never significantly below BM25
    alone, with ``w2v`` or with a far weaker part, on either (docs/retrievers-dense-and-fusion.md).
    """

    retrievers = Param(
        str, "bm25+w2v", "the specs to fuse, joined by '+'; a spec with parameters in [...]", check=check_retrievers
    )
    method = Param(str, "combsum", "rrf or combsum", choices=METHODS)
    k = Param(float, 60.0, "rrf: the constant added to each rank", low=0)
    norm = Param(str, "zscore", "combsum: per-query score normalisation", choices=NORMALISATIONS)
    depth = Param(int, 1000, "documents each retriever returns per query before fusion", low=1)
    weight = Param(
        float,
        0.7,
        "the first retriever's share of the fused score, the others share the rest equally; none: all count 1",
        low=0,
        high=1,
        optional=True,
    )

    def effective_params(self) -> dict[str, Any]:
        """Parameters with ``weight`` unset shown as ``1 / n``: every run weighted equally (same ranking)."""
        params = self.get_params()
        if params["weight"] is None:
            params["weight"] = 1.0 / len(split_retrievers(self.retrievers))
        return params

    def fusion_weights(self) -> tuple[float, ...] | None:
        """Each run's weight from ``weight`` (None when unset: every run counts 1)."""
        if self.weight is None:
            return None
        n = len(split_retrievers(self.retrievers))
        return (self.weight, *[(1.0 - self.weight) / (n - 1)] * (n - 1))

    def fused_parts(self) -> list[str]:
        """At its default fusion settings, its parts (so ``a + b + c`` is one fusion of three); else itself."""
        defaults = {p.name: p.default for p in self.parameters if p.name != "retrievers"}
        if any(getattr(self, name) != value for name, value in defaults.items()):
            return super().fused_parts()
        return [f"[{spec}]" for spec in split_retrievers(self.retrievers)]

    def set_params(self, **params: Any) -> HybridRetriever:
        """Change parameters; fusion settings apply at once, new ``retrievers`` need index() again."""
        changed_parts = "retrievers" in params and params["retrievers"] != self.retrievers
        super().set_params(**params)
        if changed_parts:
            for attribute in ("retrievers_", "doc_ids_", "runs_"):
                self.__dict__.pop(attribute, None)
        return self

    def notes(self) -> list[str]:
        """Its parts' notes (a default dense part is weak, and so pulls the fusion down)."""
        return part_notes(split_retrievers(self.retrievers))

    def index(self, corpus: pd.DataFrame) -> HybridRetriever:
        """Index every sub-retriever on the corpus."""
        doc_ids, _ = document_texts(corpus)
        self.retrievers_ = [make_retriever(spec).index(corpus) for spec in split_retrievers(self.retrievers)]
        self.doc_ids_ = frozenset(doc_ids)
        self.__dict__.pop("runs_", None)
        return self

    def _runs(self, queries: QueryInput) -> list[pd.DataFrame]:
        """Each sub-retriever's top-``depth`` run, validated for fusion. The runs of the last queries
        searched are kept (keyed on the queries, ``depth`` and each sub-retriever's spec), so a change
        of ``method``, ``k``, ``norm`` or ``weight`` only re-fuses: what makes tuning a hybrid cheap."""
        query_ids, texts = query_texts(queries)
        key = (self.depth, tuple(r.spec() for r in self.retrievers_), tuple(query_ids), tuple(texts))
        cached = self.__dict__.get("runs_")
        if cached is None or cached[0] != key:
            self.runs_ = (key, _checked([retriever.search(queries, k=self.depth) for retriever in self.retrievers_]))
        return self.runs_[1]

    def _fused(self, queries: QueryInput) -> pd.DataFrame:
        self._check_fitted("retrievers_")
        return _fuse_checked(self._runs(queries), self.method, self.k, self.norm, self.fusion_weights())

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """The fused run of the sub-retrievers' top-``depth`` lists, cut at ``k`` per query."""
        self._check_fitted("retrievers_")
        k = check_k(k)
        fused = self._fused(queries)
        return fused[fused["rank"] <= k].reset_index(drop=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Fused scores as :meth:`search` gives them; 0 for documents no sub-retriever put in its top ``depth``."""
        import pandas as pd

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
        with replacing_index(directory) as staging:  # the parts swapped in with the rest, in one step
            save_index(staging, self.name, meta, {"doc_ids": np.asarray(sorted(self.doc_ids_), dtype=object)})
            for part, retriever in zip(parts, self.retrievers_):
                retriever.save(staging / part)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> HybridRetriever:
        """Open a saved hybrid; each sub-index must be of the kind its spec in the params names."""
        meta, arrays = load_index(directory, cls.name)
        require_fields(meta, directory, {"params": dict, "parts": list})
        retriever = from_saved_params(cls, meta["params"], directory)
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
