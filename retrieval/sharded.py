"""BM25 sharded over a Dask cluster: the same run, bit for bit, as one process, whatever the number of workers.

1. Each shard (a contiguous slice of the corpus) is analysed and counted on a worker
   (:class:`retrieval.termcounts.TermCounts`).
2. Only the statistics weighting needs come back: each shard's vocabulary and document
   frequencies, and the document lengths. The client reduces them to the whole corpus's
   (document frequency of every term, document count, average length) and computes the idf
   once, on the whole sorted vocabulary, exactly as :meth:`BM25._fit` does.
3. Each shard weights its postings with that idf and average length (:meth:`BM25.posting_weights`),
   so every weight equals the one the whole index holds.
4. Each partition of the queries is searched on every shard (a shard's vocabulary is sorted like
   the whole one, so a document's score is summed in the same order and is the same float), and the
   candidates of all shards are merged by the tie rule (:func:`corpora.schema.sort_run`) and cut at k.

Each step is a task whose inputs are in the task graph, so a lost worker's tasks are computed
again elsewhere and the run is unchanged (tests/retrieval/test_sharded.py kills one mid-search).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from rankscope.core.errors import RankscopeError
from rankscope.core.scheduler import worker_count
from rankscope.corpora.schema import sort_run
from rankscope.retrieval.analysis import Analyzer, get_analyzer, restore_analyzer, saved_analyzer_param
from rankscope.retrieval.base import QueryInput, as_queries, check_k, document_texts, query_texts
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.bm25_weights import idf
from rankscope.retrieval.counts_retriever import EmptyIndexError
from rankscope.retrieval.termcounts import TermCounts


class NotShardableError(RankscopeError, ValueError):
    """The retriever cannot be sharded (only BM25 without feedback is)."""


def check_shardable(retriever: Any) -> BM25:
    """``retriever`` if it is BM25 without pseudo-relevance feedback, else a one-line error."""
    if type(retriever) is not BM25 or retriever.prf != "none":
        raise NotShardableError(
            f"--scheduler shards bm25 without prf (any variant, k1, b, analyzer), not {retriever.spec()}"
        )
    return retriever


def sharded_search(
    retriever: BM25, corpus: pd.DataFrame, queries: QueryInput, k: int, client: Any, shards: int | None = None
) -> pd.DataFrame:
    """``retriever.index(corpus).search(queries, k)``, computed on the cluster of ``client``.

    ``shards`` (default: one per worker) changes where the work runs, never the run.
    """
    check_shardable(retriever)
    k = check_k(k)
    doc_ids, texts = document_texts(corpus)
    if not doc_ids:
        raise EmptyIndexError("cannot index an empty corpus")
    query_ids, query_text = query_texts(as_queries(queries))
    parts = shards or worker_count(client)
    params = {**retriever.get_params(), "analyzer": saved_analyzer_param(retriever.analyzer)}
    analyzer = get_analyzer(retriever.analyzer).to_config()
    cuts = np.array_split(np.arange(len(doc_ids)), min(parts, len(doc_ids)))
    counted = [
        client.submit(shard_term_counts, analyzer, doc_ids[c[0] : c[-1] + 1], texts[c[0] : c[-1] + 1]) for c in cuts
    ]
    stats = client.gather([client.submit(shard_statistics, shard) for shard in counted])
    term_idf, avgdl = whole_corpus_weighting(retriever, stats)
    weighted = [
        client.submit(weigh_shard, params, analyzer, shard, term_idf[i], avgdl) for i, shard in enumerate(counted)
    ]
    batches = np.array_split(np.arange(len(query_ids)), min(parts, max(1, len(query_ids))))
    searched = [
        client.submit(search_shard, params, analyzer, shard, [query_ids[i] for i in b], [query_text[i] for i in b], k)
        for b in batches
        if len(b)
        for shard in weighted
    ]
    return merge_runs(client.gather(searched), query_ids, k)


def shard_term_counts(analyzer: dict[str, Any], doc_ids: Sequence[str], texts: Sequence[str]) -> TermCounts:
    """The term counts of one shard, ids and all (a Dask task): what a shard is searched with. A streamed
    index counts its batches with :func:`rankscope.retrieval.streaming.count_shard` instead."""
    return TermCounts.build(Analyzer.from_config(analyzer), doc_ids, texts)


def shard_statistics(counts: TermCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What weighting needs from a shard: its vocabulary, document frequencies and document lengths."""
    return counts.vocabulary, counts.df, counts.doc_len


def whole_corpus_weighting(
    retriever: BM25, stats: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
) -> tuple[list[np.ndarray], float]:
    """Each shard's terms' idf over the whole corpus, and the whole corpus's average document length.

    The idf is computed over the whole sorted vocabulary and the mean over all lengths in corpus
    order, the arrays :meth:`BM25._fit` computes them from, so the floats are the same.
    """
    vocabulary = np.asarray(sorted(set().union(*(set(v) for v, _, _ in stats))), dtype=object)
    if not len(vocabulary):
        raise EmptyIndexError(f"no document keeps any term after analysis with {retriever.analyzer!r}")
    position = {term: i for i, term in enumerate(vocabulary)}
    where = [np.fromiter(map(position.__getitem__, v), dtype=np.int64, count=len(v)) for v, _, _ in stats]
    df = np.zeros(len(vocabulary), dtype=np.int64)
    for rows, (_, shard_df, _) in zip(where, stats):
        df[rows] += shard_df
    lengths = np.concatenate([doc_len for _, _, doc_len in stats])
    term_idf = idf(retriever.variant, df, len(lengths), retriever.epsilon)
    return [term_idf[rows] for rows in where], float(lengths.mean())


def _shard_retriever(params: dict[str, Any], analyzer: dict[str, Any], counts: TermCounts) -> BM25:
    param, analyzer_ = restore_analyzer(params["analyzer"], analyzer)
    shard = BM25(**{**params, "analyzer": param})
    shard.counts_, shard.analyzer_ = counts, analyzer_
    return shard


def weigh_shard(
    params: dict[str, Any], analyzer: dict[str, Any], counts: TermCounts, term_idf: np.ndarray, avgdl: float
) -> tuple[TermCounts, sp.csr_matrix]:
    """A shard's counts and its term x document weights under the whole corpus's statistics (a task)."""
    shard = _shard_retriever(params, analyzer, counts)
    return counts, counts.matrix(shard.posting_weights(term_idf=term_idf, avgdl=avgdl))


def search_shard(
    params: dict[str, Any],
    analyzer: dict[str, Any],
    weighted: tuple[TermCounts, sp.csr_matrix],
    query_ids: list[str],
    texts: list[str],
    k: int,
) -> pd.DataFrame:
    """The top ``k`` of one shard for a partition of the queries (a task)."""
    counts, weights = weighted
    shard = _shard_retriever(params, analyzer, counts)
    shard.weights_ = weights
    return shard.search(pd.DataFrame({"query_id": query_ids, "text": texts}), k=k)


def merge_runs(runs: Sequence[pd.DataFrame], query_ids: Sequence[str], k: int) -> pd.DataFrame:
    """The shards' runs as one: queries in the order of ``query_ids``, each ordered by the tie rule
    and cut at ``k``."""
    rows = pd.concat([run.drop(columns="rank") for run in runs], ignore_index=True)
    position = rows["query_id"].map({query_id: i for i, query_id in enumerate(query_ids)})
    merged = sort_run(rows.iloc[np.argsort(position.to_numpy(), kind="stable")])
    return merged[merged["rank"] <= k].reset_index(drop=True)
