"""Word2Vec + FAISS timings on a synthetic Zipfian corpus: training, document encoding, search per query.

    python benchmarks/bench_word2vec.py            # 100,000 docs of ~100 tokens, 50,000 word types
    python benchmarks/bench_word2vec.py --docs 20000 --train-docs 2000   # a quick run

Word2Vec is trained on the first ``--train-docs`` documents only, for 5 epochs
(one worker thread, as the retriever trains, for determinism): on the shared 2
cores gensim's skip-gram managed 35,000 to 90,000 tokens x epochs per second
depending on load, so all 10 million tokens for 20 epochs would take one to
two hours. The trained vectors are then used as
pretrained vectors to index the whole corpus, which times what ``index()`` does
besides training: tokenising, pooling, normalising and building the FAISS index.
Search is timed end to end (query analysis, pooling, FAISS, exact rescoring,
run assembly) and for FAISS alone, for the exact flat index and for HNSW.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.retrieval.analysis import get_analyzer
from rankscope.retrieval.word2vec import EmptyQueryWarning, Word2VecRetriever, import_gensim_models


def zipf_texts(n_texts: int, mean_len: int, n_types: int, rng: np.random.Generator) -> list[str]:
    """Texts of ``w<rank>`` words drawn with probability proportional to 1 / rank."""
    probability = 1.0 / np.arange(1, n_types + 1)
    probability /= probability.sum()
    lengths = rng.poisson(mean_len, size=n_texts).clip(1)
    tokens = rng.choice(n_types, size=int(lengths.sum()), p=probability)
    words = np.array([f"w{i}" for i in range(n_types)], dtype=object)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [" ".join(words[tokens[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]


def timed(label: str, rows: list[tuple[str, str]], func, *args, per: int | None = None, **kwargs) -> tuple:
    """Run ``func``, add a table row (seconds, or per-query time when ``per`` queries ran); (result, seconds)."""
    start = time.perf_counter()
    result = func(*args, **kwargs)
    seconds = time.perf_counter() - start
    shown = f"{seconds:.2f} s" if per is None else f"{seconds / per * 1000:.3f} ms/query ({per / seconds:,.0f} q/s)"
    rows.append((label, shown))
    print(f"{label}: {shown}", flush=True)
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--length", type=int, default=100, help="mean tokens per document")
    parser.add_argument("--types", type=int, default=50_000)
    parser.add_argument("--train-docs", type=int, default=5_000, help="documents Word2Vec is trained on")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    texts = zipf_texts(args.docs, args.length, args.types, rng)
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(args.docs)], "title": "", "text": texts})
    query_texts = zipf_texts(args.queries, 4, args.types, rng)
    queries = pd.DataFrame({"query_id": [f"q{i}" for i in range(args.queries)], "text": query_texts})
    rows: list[tuple[str, str]] = []

    analyzer = get_analyzer("english")
    train_tokens = analyzer.tokenize_many(texts[: args.train_docs])
    n_train = sum(map(len, train_tokens))
    models = import_gensim_models()
    model, train_seconds = timed(
        f"train Word2Vec: {args.train_docs:,} docs, {n_train:,} tokens, {args.epochs} epochs (sg, dim 100, 1 worker)",
        rows,
        models.Word2Vec,
        sentences=train_tokens,
        vector_size=100,
        window=5,
        min_count=1,
        epochs=args.epochs,
        sg=1,
        seed=0,
        workers=1,
    )
    rate = n_train * args.epochs / train_seconds
    rows.append(("  training throughput", f"{rate:,.0f} tokens x epochs / s"))
    with tempfile.TemporaryDirectory() as tmp:
        vectors = Path(tmp) / "vectors.bin"
        model.wv.save_word2vec_format(str(vectors), binary=True)
        timed(f"tokenise {args.docs:,} docs", rows, analyzer.tokenize_many, texts)
        flat, _ = timed(
            f"index() flat (tokenise + SIF pooling + IndexFlatIP), {args.docs:,} docs",
            rows,
            Word2VecRetriever(vectors=str(vectors)).index,
            corpus,
        )
        hnsw, _ = timed(
            "index() hnsw (same + IndexHNSWFlat M=32, efConstruction=200, 1 thread)",
            rows,
            Word2VecRetriever(vectors=str(vectors), faiss_index="hnsw").index,
            corpus,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyQueryWarning)
        exact, _ = timed(f"search() flat, top-{args.k}", rows, flat.search, queries, k=args.k, per=args.queries)
        approx, _ = timed(f"search() hnsw, top-{args.k}", rows, hnsw.search, queries, k=args.k, per=args.queries)
        encoded, empty = flat._encode_queries(query_texts)  # the query vectors, to time FAISS on its own
    vectors32 = np.ascontiguousarray(encoded[~empty], dtype=np.float32)
    n_active = len(vectors32)
    timed(f"FAISS alone: IndexFlatIP.search, top-{args.k}", rows, flat.faiss_.search, vectors32, args.k, per=n_active)
    hnsw.faiss_.hnsw.efSearch = 128
    timed(
        f"FAISS alone: HNSW.search (efSearch 128), top-{args.k}",
        rows,
        hnsw.faiss_.search,
        vectors32,
        args.k,
        per=n_active,
    )
    overlap = len(exact.merge(approx, on=["query_id", "doc_id"])) / max(len(exact), 1)
    rows.append((f"HNSW recall of the exact top-{args.k}", f"{overlap:.3f}"))

    width = max(len(label) for label, _ in rows)
    print(f"\n{'step'.ljust(width)} | time")
    print(f"{'-' * width}-|-{'-' * 40}")
    for label, value in rows:
        print(f"{label.ljust(width)} | {value}")


if __name__ == "__main__":
    main()
