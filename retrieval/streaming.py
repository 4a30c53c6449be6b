"""Term counts of a corpus too large for memory: batches counted apart, spilled to disk, merged into the index.

The same counts as :meth:`retrieval.termcounts.TermCounts.build` (array for array: tested on
Cranfield and CISI), built in bounded memory:

1. documents arrive in batches of (doc_id, text) pairs; each batch is analysed and counted by
   :func:`count_shard` (the code ``TermCounts.build`` runs, on fewer texts) into compact arrays:
   its own sorted vocabulary, int32 document positions and uint16 (uint32 where a count needs
   it) term frequencies, term-major. Batches are counted on ``workers`` processes, results
   taken in batch order, so the index does not depend on which process counted what;
2. when the counts held reach half the memory budget they are merged (:func:`merge_shards`)
   and spilled to a run of ``.npy`` files in a scratch folder of the index being written;
3. the runs, memory-mapped, are merged once more straight into the ``.npy`` files of the
   index being written (:func:`retrieval.storage.writing_index`: memory-mapped for writing,
   atomic, checksummed), which are unmapped before the index is opened: it is never held twice.

A run and the final index are both "counts of consecutive documents": merging appends each
term's postings run after run, which keeps them ascending. That is also the API for
building elsewhere (one machine per shard): ``count_shard`` each shard with its first
document position, then ``merge_shards`` the results in document order.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.core.fileio import release_pages
from rankscope.core.forked import forked_map, pool_size
from rankscope.core.progress import progress
from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.index_swap import fault
from rankscope.retrieval.storage import IndexWriter, load_index, save_index
from rankscope.retrieval.termcounts import SLICE, compact_counts, count_postings

DEFAULT_MEMORY_BUDGET = 1 << 30
"""Bytes of counts (and their merge) held in memory before spilling to disk: 1 GiB."""
BATCH_DOCUMENTS = 20_000
"""Documents analysed per batch (per process): their token strings live only while they are counted."""
_RUN_KIND = "counts-run"


@dataclass(frozen=True, eq=False)
class ShardCounts:
    """Counts of consecutive documents, term-major: documents of ``vocabulary[i]`` are
    ``postings[indptr[i]:indptr[i+1]]`` (ascending positions in the whole corpus), counts in ``tf``."""

    vocabulary: np.ndarray  # sorted terms (object array of str)
    indptr: np.ndarray  # int64, len(vocabulary) + 1
    postings: np.ndarray  # int32
    tf: np.ndarray  # uint16, or uint32 if a count exceeds 65,535
    doc_len: np.ndarray  # int64, one per document of the shard

    @property
    def nbytes(self) -> int:
        """Memory held, the vocabulary's strings estimated at 80 bytes each (a short str and its pointer)."""
        arrays = (self.indptr, self.postings, self.tf, self.doc_len)
        return sum(a.nbytes for a in arrays) + 80 * len(self.vocabulary)


def count_shard(analyzer: Analyzer, texts: Sequence[str], first_position: int) -> ShardCounts:
    """Analyse and count ``texts``, the documents at positions ``first_position``, ``first_position + 1``, ..."""
    vocabulary, by_term, doc_len = count_postings(analyzer, texts, desc="counting", chunk=max(1, len(texts)))
    counts = by_term.data
    return ShardCounts(
        vocabulary=np.asarray(vocabulary, dtype=object),
        indptr=by_term.indptr.astype(np.int64),
        postings=(by_term.indices.astype(np.int64) + first_position).astype(np.int32),
        tf=compact_counts(counts),
        doc_len=doc_len.astype(np.int64),
    )


Allocate = Callable[[str, int, Any], np.ndarray]


def merge_shards(shards: Sequence[ShardCounts], allocate: Allocate | None = None) -> ShardCounts:
    """Counts of the shards' documents together (shards given in document order).

    ``allocate(name, length, dtype)`` makes the ``postings`` and ``tf`` arrays (default
    ``np.empty``; a memory-mapped ``.npy`` for the final index), which are filled shard by
    shard and :data:`SLICE` postings at a time, so besides the vocabularies only that much
    of a shard's arrays is in memory at once.
    """
    into_files = allocate is not None
    allocate = allocate or (lambda name, length, dtype: np.empty(length, dtype=dtype))
    vocabulary, where = sorted_union([s.vocabulary for s in shards])  # code point order, as TermCounts.build
    df = np.zeros(len(vocabulary), dtype=np.int64)
    for shard, ids in zip(shards, where):
        df[ids] += np.diff(shard.indptr)
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    wide = any(s.tf.dtype == np.uint32 for s in shards)
    postings = allocate("postings", int(indptr[-1]), np.int32)
    tf = allocate("tf", int(indptr[-1]), np.uint32 if wide else np.uint16)
    filled = indptr[:-1].copy()  # next free slot of each term
    for shard, ids in zip(shards, where):
        local_df = np.diff(shard.indptr)
        shift = filled[ids] - shard.indptr[:-1]  # where each term's postings go, minus where they are
        for first, last in itertools.pairwise(_term_slices(shard.indptr)):
            a, b = int(shard.indptr[first]), int(shard.indptr[last])
            start = np.repeat(shift[first:last], local_df[first:last]) + np.arange(a, b)
            postings[start] = shard.postings[a:b]
            tf[start] = shard.tf[a:b]
            if into_files:
                fault("merging")
            written = slice(int(start[0]), int(start[-1]) + 1) if len(start) else slice(0)  # start ascends
            # runs and index are memory-mapped files: none of their pages kept resident
            release_pages(shard.postings[a:b], shard.tf[a:b], postings[written], tf[written])
        filled[ids] += local_df
    doc_len = np.concatenate([np.empty(0, dtype=np.int64), *(s.doc_len for s in shards)])
    return ShardCounts(vocabulary, indptr, postings, tf, doc_len)


def _term_slices(indptr: np.ndarray) -> np.ndarray:
    """Term boundaries (0, ..., n_terms) cutting the postings into pieces of about :data:`SLICE`."""
    cuts = np.searchsorted(indptr, np.arange(SLICE, int(indptr[-1]), SLICE))
    return np.unique(np.concatenate([[0], cuts, [len(indptr) - 1]]))


def sorted_union(vocabularies: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct strings of ``vocabularies`` (object arrays), sorted in code point order (that of
    ``sorted``), and each one's elements' positions in it. Hash tables in C (pandas) and one sort of
    the distinct strings: no Python dict or int per string, as merging millions of terms needs."""
    import pandas as pd

    every = np.concatenate([np.empty(0, dtype=object), *vocabularies])
    codes, distinct = pd.factorize(every)
    del every
    union = np.array(sorted(distinct.tolist()), dtype=object)
    position = pd.Index(union).get_indexer(distinct)[codes]
    bounds = np.cumsum([0, *(len(v) for v in vocabularies)])
    return union, [position[a:b] for a, b in itertools.pairwise(bounds)]


def _batches(
    documents: Iterable[tuple[str, str]], size: int, doc_ids: list[str], config: Mapping[str, Any]
) -> Iterator[tuple[Mapping[str, Any], list[str], int]]:
    """Counting jobs of ``size`` documents: (analyzer config, texts, first position); ids go to ``doc_ids``."""
    iterator = iter(documents)
    while batch := list(itertools.islice(iterator, size)):
        first = len(doc_ids)
        doc_ids.extend(str(doc_id) for doc_id, _ in batch)
        yield config, [text for _, text in batch], first


def _count_batch(job: tuple[Mapping[str, Any], list[str], int]) -> ShardCounts:
    config, texts, first = job
    return count_shard(Analyzer.from_config(config), texts, first)


@dataclass(frozen=True, eq=False)
class WrittenCounts:
    """What :func:`write_counts` wrote: the documents' ids (in corpus order), how many terms the
    vocabulary holds, and how many runs were spilled to disk (1: the whole corpus fit in the budget)."""

    doc_ids: list[str]
    n_terms: int
    runs: int


def write_counts(
    writer: IndexWriter,
    analyzer: Analyzer,
    documents: Iterable[tuple[str, str]],
    *,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    workers: int = 1,
    batch_size: int | None = None,
) -> WrittenCounts:
    """Count ``documents`` ((doc_id, text) pairs, read lazily, in corpus order) in bounded memory and
    write the arrays of :meth:`TermCounts.to_arrays` through ``writer``: the large ones
    (postings, tf) are merged straight into the index's files, memory-mapped, and unmapped before
    this returns, so the index is never held twice. Runs are spilled into a scratch folder of the
    writer's staging folder (deleted here). ``workers`` processes analyse the batches (``fork``:
    analyzers registered in this process are known to them, and die with it); the result does not depend
    on their number. ``batch_size`` defaults to :data:`BATCH_DOCUMENTS`.
    """
    if memory_budget < 1:
        raise ValueError(f"memory_budget must be a positive number of bytes, got {memory_budget}")
    scratch = writer.staging / "runs"
    scratch.mkdir()
    doc_ids: list[str] = []
    runs: list[ShardCounts] = []
    jobs = _batches(documents, batch_size or BATCH_DOCUMENTS, doc_ids, analyzer.to_config())
    held: list[ShardCounts] = []
    shards: Generator[ShardCounts, None, None] = (count_shard(analyzer, texts, first) for _, texts, first in jobs)
    if (
        pool_size(workers) > 1
    ):  # in batch order, so the same index for any number of workers; at most 2 batches a worker
        # sent and not yet taken (each brings its analyzer's config): merging or spilling, none pile up here
        shards = forked_map(workers, lambda: None, (), _count_batch, jobs, "counting the documents", ahead=2 * workers)
    with contextlib.closing(shards):  # an error here stops the workers at once
        for shard in progress(shards, desc="counting", unit="batch"):
            fault("counting")
            held.append(shard)
            if sum(s.nbytes for s in held) * 2 >= memory_budget:
                runs.append(_spill(merge_shards(held), scratch / f"run{len(runs)}"))
                held = []
    if held:
        runs.append(_spill(merge_shards(held), scratch / f"run{len(runs)}"))
        del held
    n_runs = len(runs)
    merged = merge_shards(runs, writer.new_array)
    del runs  # unmaps the runs
    writer.add("vocabulary", merged.vocabulary)
    writer.add("doc_ids", np.asarray(doc_ids, dtype=object))
    writer.add("indptr", merged.indptr)
    writer.add("doc_len", merged.doc_len.astype(np.float64))
    n_terms = len(merged.vocabulary)
    del merged  # unmaps the index's postings and tf: they are read again when the index is opened
    shutil.rmtree(scratch)
    return WrittenCounts(doc_ids, n_terms, n_runs)


def _spill(counts: ShardCounts, folder: Path) -> ShardCounts:
    """Write ``counts`` in the index format and give them back memory-mapped (their memory is released)."""
    names = ("vocabulary", "indptr", "postings", "tf", "doc_len")
    save_index(folder, _RUN_KIND, {}, {name: getattr(counts, name) for name in names})
    fault("spilling")
    return ShardCounts(**load_index(folder, _RUN_KIND)[1])
