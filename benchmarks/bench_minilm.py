"""MiniLM documents per second: rankscope's ``dense:model=minilm`` against sentence-transformers' own ``encode``.

    python benchmarks/bench_minilm.py                         # Cranfield's 1,400 documents
    python benchmarks/bench_minilm.py --dataset cisi --limit 500

Both encode the same texts (title, a newline, the body: what every retriever indexes) with the
same packaged all-MiniLM-L6-v2 on the CPU, in this process, one after the other, with the embedding
cache off. sentence-transformers runs as its documentation shows (``model.encode(texts)``: its
default batch of 32, texts sorted by length inside the call). Printed: wall seconds and documents
per second of each, CPU seconds of the process (all threads; steadier than wall time on a shared
machine), torch's thread count, the texts longer than the model's 256 word pieces (both
truncate them), and the largest difference between the two sets of L2-normalised vectors (the
same numbers up to float32 rounding of differently padded batches).
Needs the ``st`` extra (torch CPU build first: see the README).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from extras import require


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cranfield")
    parser.add_argument("--limit", type=int, default=None, help="the first N documents only")
    args = parser.parse_args()
    require(["torch", "sentence_transformers", "all_minilm_l6_v2", "faiss"], extra="st")

    import torch

    from rankscope.corpora import load_dataset
    from rankscope.retrieval.base import document_texts
    from rankscope.retrieval.encoders import packaged_minilm
    from rankscope.retrieval.registry import make_retriever

    corpus = load_dataset(args.dataset).corpus
    if args.limit is not None:
        corpus = corpus.head(args.limit)
    _, texts = document_texts(corpus)
    encoder = packaged_minilm()
    model = encoder.model  # the same loaded SentenceTransformer for both
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, cpu = time.perf_counter(), time.process_time()
        theirs = model.encode(texts, convert_to_numpy=True, show_progress_bar=False)
        their_s, their_cpu = time.perf_counter() - start, time.process_time() - cpu
        retriever = make_retriever("dense:model=minilm,cache=false")
        start, cpu = time.perf_counter(), time.process_time()
        retriever.index(corpus)
        our_s, our_cpu = time.perf_counter() - start, time.process_time() - cpu
    ours = retriever.doc_vectors_
    theirs = theirs / np.linalg.norm(theirs, axis=1, keepdims=True)
    lengths = [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True, verbose=False)["input_ids"]]
    longer = sum(n > model.max_seq_length for n in lengths)
    print(f"{args.dataset}: {len(texts)} documents, torch threads {torch.get_num_threads()}")
    n = len(texts)
    print(
        f"  sentence-transformers encode: {their_s:.1f} s wall ({n / their_s:.1f} documents/s), {their_cpu:.1f} s CPU"
    )
    print(
        f"  rankscope dense:model=minilm index: {our_s:.1f} s wall ({n / our_s:.1f} documents/s), {our_cpu:.1f} s CPU"
    )
    print(f"  texts longer than {model.max_seq_length} word pieces (truncated by both): {longer}")
    print(f"  largest difference of the normalised vectors: {float(np.abs(ours - theirs).max()):.2e}")


if __name__ == "__main__":
    main()
