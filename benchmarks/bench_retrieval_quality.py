"""nDCG@10 and Recall@100 of every retriever on the shared collections, with index and search wall time.

    python benchmarks/bench_retrieval_quality.py                       # Cranfield and CISI, the specs below
    python benchmarks/bench_retrieval_quality.py --datasets cisi --specs bm25 dense

Each retriever is indexed and searched to depth 1000 in this process, one after the
other, as ``rankscope compare`` does (it prints the same means); the times are wall
clock. ``dense`` document vectors come from the embedding cache when an earlier run
encoded the same collection with the same model (``--no-cache`` encodes them again).
Needs the ``st`` extra (torch CPU build first: see the README).
"""

from __future__ import annotations

import argparse
import time
import warnings

import pandas as pd
from extras import require

SPECS = (
    "bm25",
    "tfidf",
    "w2v",
    "w2v:vectors=glove-6b-50d,pooling=mean",
    "dense:model=model2vec",
    "dense:model=minilm",
    "hybrid",
    "hybrid:retrievers=bm25+[dense:model=minilm]",
    "hybrid:retrievers=bm25+[dense:model=model2vec]",
    "rerank:first=bm25,by=dense:model=minilm,depth=100",
    "rerank:first=bm25,by=dense:model=minilm,depth=100,alpha=0.5",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cranfield", "cisi"])
    parser.add_argument("--specs", nargs="+", default=list(SPECS))
    parser.add_argument("--no-cache", action="store_true", help="dense: encode the documents again")
    args = parser.parse_args()
    require(["gensim", "faiss", "model2vec", "sentence_transformers"], extra="st")

    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    rows = []
    for name in args.datasets:
        data = load_dataset(name)
        for spec in args.specs:
            retriever = make_retriever(spec)
            if args.no_cache and "cache" in retriever.get_params():
                retriever.set_params(cache=False)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                retriever.index(data.corpus)
                indexed = time.perf_counter()
                run = retriever.search(data.queries, k=1000)
            searched = time.perf_counter()
            means = evaluate(data.qrels, run, ["ndcg@10", "recall@100"]).mean
            rows.append(
                {
                    "dataset": name,
                    "retriever": spec,
                    "ndcg@10": round(means["ndcg@10"], 4),
                    "recall@100": round(means["recall@100"], 4),
                    "index_s": round(indexed - start, 1),
                    "search_s": round(searched - indexed, 1),
                }
            )
            print(pd.DataFrame([rows[-1]]).to_string(index=False, header=len(rows) == 1), flush=True)
    table = pd.DataFrame(rows)
    print("\n| " + " | ".join(table.columns) + " |\n|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
