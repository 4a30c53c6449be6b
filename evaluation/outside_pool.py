"""Sampling outside the judged pool: the documents nobody judged, drawn with known inclusion probabilities.

A pool sees only what its systems retrieved; a relevant document none of them found is invisible to
every metric. To estimate how many there are, each query's unjudged documents (the whole corpus less
the judged pairs) are cut into strata by a cheap scorer's rank: with the cuts ``(100, 1000)``,
``ranks 1-100`` (the scorer's top 100 less what was judged), ``ranks 101-1000`` and ``rest`` (every
other document of the corpus, ranked lower or not at all). Each query's budget is shared out over its
strata by :func:`rankscope.evaluation.strata.allocate` (top ranks weighted more, one pair per stratum
first) and drawn by simple random sampling without replacement, with a generator seeded by the seed
and the query id, so a query's draw does not depend on the other queries. A pair's inclusion
probability is ``drawn / size`` of its stratum. A judged pair is never drawn: to sample again after
labelling, add the labels to the judged pairs (they are then known exactly) and draw anew.

The ``rest`` stratum is never listed: its documents are drawn as positions among the corpus's
documents less the excluded ones, so a large corpus costs memory only for the ranked strata.
:func:`rankscope.evaluation.recall_estimate.estimate_recall` turns the labelled sample into R and recall.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run, validate
from rankscope.evaluation.strata import allocate

DEFAULT_CUTS = (100, 1000)
REST = "rest"
SAMPLE_COLUMNS = ("query_id", "doc_id", "stratum", "inclusion_probability")


def parse_cuts(text: str) -> tuple[int, ...]:
    """``"100,1000"`` as ``(100, 1000)``: increasing positive ranks, or a one-line RankscopeError."""
    parts = [part.strip() for part in str(text).split(",")]
    if any(not (part.isascii() and part.isdigit()) for part in parts):
        raise RankscopeError(
            f"strata cuts must be increasing positive ranks separated by commas, like 100,1000; got {text!r}"
        )
    cuts = tuple(int(part) for part in parts)
    if cuts[0] < 1 or any(b <= a for a, b in zip(cuts, cuts[1:])):
        raise RankscopeError(f"strata cuts must be increasing positive ranks, like 100,1000; got {text!r}")
    return cuts


def stratum_names(cuts: Sequence[int]) -> list[str]:
    """``["ranks 1-100", "ranks 101-1000", "rest"]`` for the cuts ``(100, 1000)``."""
    firsts = [1, *(cut + 1 for cut in cuts[:-1])]
    return [f"ranks {first}-{last}" for first, last in zip(firsts, cuts)] + [REST]


@dataclass(frozen=True)
class OutsideStrata:
    """Each query's unjudged documents in strata (see the module doc).

    ``members[q][h]``: corpus positions of query q's ranked stratum h (rank order); ``excluded[q]``: the
    sorted positions the ``rest`` stratum leaves out (judged, or ranked within the last cut);
    ``sizes[q, h]``: documents in each stratum, ``rest`` last.
    """

    queries: tuple[str, ...]
    doc_ids: np.ndarray
    cuts: tuple[int, ...]
    members: tuple[tuple[np.ndarray, ...], ...]
    excluded: tuple[np.ndarray, ...]
    sizes: np.ndarray

    @property
    def names(self) -> list[str]:
        return stratum_names(self.cuts)

    def stratum_of(self, query: int, positions: np.ndarray) -> np.ndarray:
        """The stratum of each of query's corpus ``positions`` that is not judged (judged ones: -1)."""
        codes = np.full(len(positions), len(self.cuts), dtype=np.int64)
        for h, members in enumerate(self.members[query]):
            codes[np.isin(positions, members)] = h
        last = len(self.cuts)
        judged = np.isin(positions, self.excluded[query]) & (codes == last)
        codes[judged] = -1
        return codes


def outside_strata(
    judged: pd.DataFrame,
    scorer_run: pd.DataFrame,
    doc_ids: Sequence[str] | np.ndarray,
    cuts: Sequence[int] = DEFAULT_CUTS,
) -> OutsideStrata:
    """The strata of every query of ``judged`` (columns ``query_id, doc_id``: every pair judged so far)
    by ``scorer_run``'s ranks (trec_eval's order) over the corpus ``doc_ids``."""
    cuts = parse_cuts(",".join(str(cut) for cut in cuts))
    corpus = pd.Index(pd.Series(np.asarray(doc_ids, dtype=object)).astype(str))
    if corpus.empty:
        raise RankscopeError("sampling outside the pool needs a corpus; the corpus has no documents")
    if not corpus.is_unique:
        raise RankscopeError(f"the corpus repeats the document id {corpus[corpus.duplicated()][0]!r}")
    missing = {"query_id", "doc_id"} - set(judged.columns)
    if missing:
        raise RankscopeError(f"the judged pairs need the columns {sorted(missing)}")
    pairs = judged.assign(query_id=judged["query_id"].astype(str), doc_id=judged["doc_id"].astype(str))
    queries = tuple(sorted(pairs["query_id"].unique()))
    if not queries:
        raise RankscopeError("sampling outside the pool needs judged pairs: no query has any")
    ranked = sort_run(validate(scorer_run, "run", "scorer run"))
    ranked = ranked[ranked["rank"] <= cuts[-1]]
    stranger = ~ranked["doc_id"].isin(corpus)
    if stranger.any():
        row = ranked[stranger].iloc[0]
        raise RankscopeError(
            f"the scorer run ranks {row['doc_id']!r} for query {row['query_id']!r}, not a document of the corpus"
        )
    judged_at = pairs.assign(position=corpus.get_indexer(pairs["doc_id"])).groupby("query_id")["position"]
    judged_by_query = {query: np.unique(group[group >= 0].to_numpy()) for query, group in judged_at}
    ranked = ranked.assign(position=corpus.get_indexer(ranked["doc_id"]))
    ranks_by_query = {query: group for query, group in ranked.groupby("query_id", sort=False)}
    bounds = [0, *cuts]
    members, excluded, sizes = [], [], []
    empty = ranked.iloc[:0]
    for query in queries:
        done = judged_by_query[query]
        scored = ranks_by_query.get(query, empty)
        position, rank = scored["position"].to_numpy(), scored["rank"].to_numpy()
        strata = tuple(
            position[(rank > low) & (rank <= high) & ~np.isin(position, done)] for low, high in zip(bounds, bounds[1:])
        )
        left_out = np.union1d(done, position)
        members.append(strata)
        excluded.append(left_out)
        sizes.append([len(stratum) for stratum in strata] + [len(corpus) - len(left_out)])
    return OutsideStrata(
        queries, corpus.to_numpy(), cuts, tuple(members), tuple(excluded), np.array(sizes, dtype=np.int64)
    )


@dataclass(frozen=True)
class OutsideSample:
    """The drawn pairs (:data:`SAMPLE_COLUMNS`, ``stratum`` by name) and, per query and stratum
    (``strata.queries`` by ``strata.names``), the population ``sizes`` and the pairs ``drawn``."""

    strata: OutsideStrata
    pairs: pd.DataFrame
    drawn: np.ndarray

    @property
    def table(self) -> pd.DataFrame:
        """One row per query and stratum: ``query_id, stratum, size, drawn, probability``."""
        names = self.strata.names
        sizes = self.strata.sizes
        return pd.DataFrame(
            {
                "query_id": np.repeat(self.strata.queries, len(names)),
                "stratum": names * len(self.strata.queries),
                "size": sizes.ravel(),
                "drawn": self.drawn.ravel(),
                "probability": (self.drawn / np.maximum(sizes, 1)).ravel(),
            }
        )


def budget_of(size: int, pairs: int | None, share: float | None) -> int:
    """One query's budget: ``pairs``, or ``share`` of its unjudged documents rounded up."""
    if share is not None:
        return math.ceil(share * size - 1e-9)
    assert pairs is not None
    return pairs


def draw_outside(
    strata: OutsideStrata, *, pairs: int | None = None, share: float | None = None, seed: int = 0
) -> OutsideSample:
    """Draw ``pairs`` unjudged documents per query, or ``share`` (0 < share <= 1) of them (see the module doc)."""
    if (pairs is None) == (share is None):
        raise RankscopeError("say how many pairs to draw per query: a number of pairs or a share, one of them")
    if pairs is not None and (isinstance(pairs, bool) or not isinstance(pairs, (int, np.integer)) or pairs < 1):
        raise RankscopeError(f"the pairs drawn per query must be a positive whole number, got {pairs!r}")
    if share is not None and not (isinstance(share, (int, float)) and 0 < share <= 1):
        raise RankscopeError(f"the share drawn per query must be in (0, 1], got {share!r}")
    tops = [1, *(cut + 1 for cut in strata.cuts)]
    rest = len(strata.cuts)
    chosen, codes, queries, drawn = [], [], [], []
    for q, query in enumerate(strata.queries):
        sizes = strata.sizes[q].tolist()
        counts = allocate(sizes, tops, budget_of(sum(sizes), pairs, share))
        rng = np.random.default_rng([seed, zlib.crc32(query.encode("utf-8"))])
        for h, count in enumerate(counts):
            if not count:
                continue
            if h < rest:
                picked = rng.choice(strata.members[q][h], size=count, replace=False)
            else:  # the count-th free position of the corpus, skipping the excluded ones
                free = rng.choice(sizes[h], size=count, replace=False)
                left_out = strata.excluded[q]
                picked = free + np.searchsorted(left_out - np.arange(len(left_out)), free, side="right")
            chosen.append(picked)
            codes.append(np.full(count, h))
            queries.append(np.full(count, q))
        drawn.append(counts)
    counts_array = np.array(drawn, dtype=np.int64).reshape(strata.sizes.shape)
    at = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
    h_at = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    q_at = np.concatenate(queries) if queries else np.zeros(0, dtype=np.int64)
    probability = counts_array[q_at, h_at] / strata.sizes[q_at, h_at]
    frame = pd.DataFrame(
        {
            "query_id": np.asarray(strata.queries, dtype=object)[q_at],
            "doc_id": strata.doc_ids[at],
            "stratum": np.asarray(strata.names, dtype=object)[h_at],
            "inclusion_probability": probability,
        },
        columns=list(SAMPLE_COLUMNS),
    )
    return OutsideSample(strata, frame, counts_array)
