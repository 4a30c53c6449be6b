"""The streaming index (retrieval.streaming): the same arrays and runs as the in-memory path, in bounded memory."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import signal

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError, SchemaError
from rankscope.core.forked import WorkerLost
from rankscope.corpora.stream import iter_corpus
from rankscope.retrieval import streaming
from rankscope.retrieval.analysis import get_analyzer
from rankscope.retrieval.base import document_texts
from rankscope.retrieval.bm25 import BM25
from rankscope.retrieval.counts_retriever import EmptyIndexError
from rankscope.retrieval.storage import load_index, read_meta, save_index, writing_index
from rankscope.retrieval.streaming import count_shard, merge_shards, write_counts
from rankscope.retrieval.termcounts import TermCounts
from rankscope.retrieval.tfidf import TfidfRetriever

FIELDS = ("vocabulary", "doc_ids", "indptr", "postings", "tf", "doc_len")


def _streamed(folder, analyzer, documents, **options) -> tuple[dict[str, np.ndarray], int]:
    """The arrays write_counts writes into a new index folder, and how many runs it spilled."""
    with writing_index(folder, "counts", {}) as writer:
        runs = write_counts(writer, analyzer, documents, **options).runs
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == []  # the scratch runs are gone
    return load_index(folder, "counts")[1], runs


@pytest.mark.slow
def test_streamed_counts_equal_the_in_memory_counts_on_a_real_collection(collection, tmp_path, monkeypatch) -> None:
    """A budget of 40 kB forces several spills; two worker processes count the batches; merging moves
    1,000 postings at a time (a term with more spans two pieces)."""
    monkeypatch.setattr(streaming, "SLICE", 1_000)
    doc_ids, texts = document_texts(collection.corpus)
    analyzer = get_analyzer("english")
    expected = TermCounts.build(analyzer, doc_ids, texts)
    arrays, runs = _streamed(
        tmp_path / "idx", analyzer, zip(doc_ids, texts), memory_budget=40_000, workers=2, batch_size=97
    )
    assert runs >= 5
    for name in FIELDS:
        got, want = arrays[name], getattr(expected, name)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert arrays["tf"].dtype == np.uint16  # format 2: counts stored compact


@pytest.mark.slow
@pytest.mark.parametrize("make", [BM25, lambda: TfidfRetriever(variant="classic")])
def test_build_index_saves_the_arrays_and_gives_the_runs_of_index_and_save(collection, tmp_path, make) -> None:
    doc_ids, texts = document_texts(collection.corpus)
    streamed = make().build_index(tmp_path / "streamed", zip(doc_ids, texts), memory_budget=50_000, workers=2)
    in_memory = make().index(collection.corpus)
    in_memory.save(tmp_path / "in-memory")
    kind = in_memory.name
    (meta_a, arrays_a), (meta_b, arrays_b) = (
        load_index(tmp_path / "streamed", kind),
        load_index(tmp_path / "in-memory", kind),
    )
    assert meta_a["params"] == meta_b["params"] and meta_a["analyzer"] == meta_b["analyzer"]
    assert meta_a["checksums"] == meta_b["checksums"]  # byte for byte the same files
    for name in FIELDS:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)
    pd.testing.assert_frame_equal(
        streamed.search(collection.queries, k=100), in_memory.search(collection.queries, k=100), check_exact=True
    )
    reloaded = type(in_memory).load(tmp_path / "streamed")
    pd.testing.assert_frame_equal(
        reloaded.search(collection.queries, k=10), in_memory.search(collection.queries, k=10), check_exact=True
    )


@pytest.mark.parametrize("spec", ["bm25", "tfidf"])
def test_the_index_command_saves_the_arrays_of_index_and_save_without_fitting(
    collection, tmp_path, monkeypatch, spec
) -> None:
    """``rankscope index`` only saves: the scoring weights (BM25's float64 ones, 188 MiB at 1M documents)
    are never computed, and every saved array and checksum is that of ``index`` + ``save``."""
    from rankscope.retrieval.registry import make_retriever

    in_memory = make_retriever(spec).index(collection.corpus)
    in_memory.save(tmp_path / "in-memory")
    corpus = tmp_path / "corpus.jsonl"
    rows = collection.corpus[["doc_id", "title", "text"]].itertuples(index=False)
    corpus.write_text(
        "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, t, x in rows), encoding="utf-8"
    )

    def never(self) -> None:
        raise AssertionError(f"{type(self).__name__}._fit ran: index computed weights it does not save")

    monkeypatch.setattr(type(in_memory), "_fit", never)
    argv = ["index", "--corpus", str(corpus), "--index-dir", str(tmp_path / "cli"), "--retriever", spec]
    assert main([*argv, "--memory-budget", "50K", "--workers", "1"]) == 0
    (meta_a, arrays_a), (meta_b, arrays_b) = (load_index(tmp_path / d, in_memory.name) for d in ("cli", "in-memory"))
    assert meta_a["checksums"] == meta_b["checksums"] and sorted(arrays_a) == sorted(arrays_b)
    for name in arrays_b:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)


def _synthetic(n_docs: int, read: list[int] | None = None):
    """``(doc_id, text)`` of ``n_docs`` seeded documents of a Zipf-like vocabulary, counted in ``read`` as read."""
    rng = np.random.default_rng(5)
    for i in range(n_docs):
        if read is not None:
            read.append(i)
        yield f"d{i}", " ".join(f"w{w}" for w in rng.zipf(1.3, 30) % 500)


def test_one_two_and_three_workers_write_the_same_files(tmp_path, monkeypatch) -> None:
    """Workers count batches through core.forked.forked_map with at most 2 batches a worker in flight: when
    a batch's counts arrive, at most that many more were read from the documents; the files are the same."""
    analyzer = get_analyzer("plain")
    metas = []
    for workers in (1, 2, 3):
        read: list[int] = []
        taken: list[int] = []
        monkeypatch.setattr(streaming, "fault", lambda phase, read=read, taken=taken: taken.append(len(read)))
        folder = tmp_path / f"w{workers}"
        options = {"memory_budget": 30_000, "workers": workers, "batch_size": 50}
        with writing_index(folder, "counts", {}) as writer:
            assert write_counts(writer, analyzer, _synthetic(2_000, read), **options).runs >= 3
        in_flight = [seen - 50 * batch for batch, seen in enumerate(taken, 1)]
        assert max(in_flight) <= 50 * (2 * workers if workers > 1 else 0), (workers, max(in_flight))
        metas.append((read_meta(folder), load_index(folder, "counts")[1]))
    for meta, arrays in metas[1:]:
        assert meta["checksums"] == metas[0][0]["checksums"]  # byte for byte the same files
        for name in FIELDS:
            np.testing.assert_array_equal(arrays[name], metas[0][1][name], err_msg=name)


def test_a_killed_counting_worker_is_one_error_and_no_index(tmp_path, monkeypatch, forkable: None) -> None:
    parent, counting = os.getpid(), streaming.count_shard

    def killed_in_a_worker(analyzer, texts, first):
        if os.getpid() != parent and first >= 200:
            os.kill(os.getpid(), signal.SIGKILL)
        return counting(analyzer, texts, first)

    monkeypatch.setattr(streaming, "count_shard", killed_in_a_worker)
    monkeypatch.setattr(streaming, "BATCH_DOCUMENTS", 100)
    before = set(multiprocessing.active_children())  # others' (a Dask cluster of the suite) stay
    with pytest.raises(WorkerLost, match="a worker process counting the documents ended before giving its result"):
        BM25().build_index(tmp_path / "idx", _synthetic(1_000), workers=2)
    assert not (tmp_path / "idx").exists() and set(multiprocessing.active_children()) <= before


def test_merging_two_shards_by_hand(monkeypatch) -> None:
    analyzer = get_analyzer("plain")
    first = count_shard(analyzer, ["bb aa aa", "cc"], 0)
    second = count_shard(analyzer, ["aa dd", "dd dd dd"], 2)
    assert first.vocabulary.tolist() == ["aa", "bb", "cc"] and first.postings.tolist() == [0, 0, 1]
    merged = merge_shards([first, second])
    monkeypatch.setattr(streaming, "SLICE", 1)
    for name in ("indptr", "postings", "tf", "doc_len"):  # moved one posting at a time: the same arrays
        np.testing.assert_array_equal(getattr(merge_shards([first, second]), name), getattr(merged, name))
    assert merged.vocabulary.tolist() == ["aa", "bb", "cc", "dd"]
    assert merged.indptr.tolist() == [0, 2, 3, 4, 6]
    assert merged.postings.tolist() == [0, 2, 0, 1, 2, 3]  # aa: docs 0, 2; bb: 0; cc: 1; dd: 2, 3
    assert merged.tf.tolist() == [2, 1, 1, 1, 1, 3] and merged.tf.dtype == np.uint16
    assert merged.doc_len.tolist() == [3, 1, 2, 3]


def test_a_count_beyond_uint16_is_kept_exactly(tmp_path) -> None:
    analyzer = get_analyzer("plain")
    shard = count_shard(analyzer, ["aa " * 70_000 + "bb"], 0)
    assert shard.tf.dtype == np.uint32 and shard.tf.tolist() == [70_000, 1]
    documents = [("d1", "aa " * 70_000), ("d2", "aa bb")]
    arrays, runs = _streamed(tmp_path / "idx", analyzer, documents, memory_budget=1, batch_size=1)
    assert runs == 2 and arrays["tf"].tolist() == [70_000, 1, 1] and arrays["tf"].dtype == np.uint32


def test_repeated_ids_and_empty_corpora_are_refused(tmp_path) -> None:
    with pytest.raises(SchemaError, match="duplicate doc_id 'd1'"):
        BM25().build_index(tmp_path / "a", [("d1", "flow"), ("d2", "heat"), ("d1", "cone")])
    with pytest.raises(EmptyIndexError, match="empty corpus"):
        BM25().build_index(tmp_path / "b", [])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_iter_corpus_reads_jsonl_and_tsv_lazily_with_line_numbers_in_errors(tmp_path) -> None:
    lines = [{"_id": "d1", "title": "T", "text": "a b"}, {"_id": 7, "text": "c"}]
    path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as sink:
        sink.write("\n".join(json.dumps(obj) for obj in lines) + "\n")
    assert list(iter_corpus(path)) == [("d1", "T", "a b"), ("7", "", "c")]
    tsv = tmp_path / "corpus.tsv"
    tsv.write_text("doc_id\ttext\ttitle\nd1\tflow\tT1\nd2\theat\n", encoding="utf-8")
    reader = iter_corpus(tsv)
    assert next(reader) == ("d1", "T1", "flow")
    with pytest.raises(FormatError, match=r"corpus.tsv, line 3: expected 3 fields"):
        next(reader)
    blank = tmp_path / "blank.csv"  # blank lines are skipped; columns are found by name, in any order
    blank.write_text('title,doc_id,text\n,d1,"a, b"\n\nT2,d2,c\n', encoding="utf-8")
    assert list(iter_corpus(blank)) == [("d1", "", "a, b"), ("d2", "T2", "c")]
    bad_id = tmp_path / "bad.tsv"
    bad_id.write_text("doc_id\ttext\n\tflow\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad.tsv, line 2: doc_id is empty"):
        list(iter_corpus(bad_id))


MS_MARCO_LINES = [  # collection.tsv's shape: no header, id<TAB>text, quotes as plain text (passages 1,2 and 7)
    '0\t"Manhattan Project" is the name of the project\n',
    '1\tThe word "atomic" was used; "\n',
    '2\tTwo ""quoted"" words, and a tab-free line\n',
]


def test_a_headerless_tsv_streams_as_the_table_reader_reads_it_quotes_and_all(tmp_path, capsys) -> None:
    from rankscope.corpora.tabular import read_table

    path = tmp_path / "collection.tsv"
    path.write_text("".join(MS_MARCO_LINES), encoding="utf-8")
    streamed = list(iter_corpus(path))
    assert streamed == [(line.split("\t")[0], "", line.split("\t")[1].rstrip("\n")) for line in MS_MARCO_LINES]
    table = read_table(path, "corpus")
    assert list(zip(table["doc_id"], table["text"])) == [(doc_id, text) for doc_id, _, text in streamed]
    index = ["index", "--corpus", str(path), "--index-dir", str(tmp_path / "idx"), "--workers", "1"]
    assert main(index) == 0 and main(["search", "--index-dir", str(tmp_path / "idx"), "--query", "atomic"]) == 0
    assert 'The word "[atomic]" was used' in capsys.readouterr().out  # the quotes as the file has them
    headed = tmp_path / "three.tsv"  # not two fields and no doc_id/text: how to write one is in the line
    headed.write_text("pid\tpassage\tscore\n0\tx\t1\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"three.tsv, line 1: the header must .* id<TAB>text \(MS MARCO"):
        list(iter_corpus(headed))


@pytest.mark.parametrize(
    "make", [BM25, lambda: BM25(prf="rm3"), TfidfRetriever, lambda: TfidfRetriever(variant="classic")]
)
def test_an_index_of_format_1_with_float64_counts_still_loads_and_ranks_the_same(collection, tmp_path, make) -> None:
    """Format 1 stored tf as float64; it is read as it is, and saved again compact (format 2)."""
    model = make().index(collection.corpus)
    arrays = model.counts_.to_arrays()
    assert arrays["tf"].dtype == np.uint16
    old = tmp_path / "format1"
    save_index(old, model.name, model._meta(model.analyzer_), {**arrays, "tf": arrays["tf"].astype(np.float64)})
    meta = json.loads((old / "meta.json").read_text(encoding="utf-8"))
    (old / "meta.json").write_text(json.dumps({**meta, "format_version": 1}), encoding="utf-8")
    loaded = type(model).load(old)
    assert loaded.counts_.tf.dtype == np.float64
    queries = collection.queries
    pd.testing.assert_frame_equal(loaded.search(queries, k=100), model.search(queries, k=100), check_exact=True)
    loaded.save(tmp_path / "again")
    assert read_meta(tmp_path / "again")["format_version"] == 2
    assert load_index(tmp_path / "again", model.name)[1]["tf"].dtype == np.uint16
