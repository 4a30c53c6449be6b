"""rankscope search: index a collection with a retriever spec and write a TREC run.

With --index-dir the index is saved there and reused by later calls on the same
corpus (checked: an index built from other documents is an error, never silently wrong
results). A counts-based index (BM25, TF-IDF) saved with other weighting parameters is
re-weighted from its stored counts, which takes milliseconds; any other difference is an
error. --query TEXT prints the top results of an ad-hoc query, with titles and
snippets, instead of writing a run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rankscope.core.errors import RankscopeError
from rankscope.core.forked import checked_count, default_count
from rankscope.core.outputs import check_output_file
from rankscope.core.params import parse_size
from rankscope.core.printable import printable
from rankscope.core.scheduler import add_scheduler
from rankscope.corpora.cli import add_analyzer, add_fields, add_split, add_strict, load_reported
from rankscope.retrieval.saved_index import Documents, corpus_fields, index_alone, indexed, write_source
from rankscope.retrieval.storage import replacing_index

if TYPE_CHECKING:  # pandas (and the retrievers) load when a command runs, not to parse its command line
    import pandas as pd

    from rankscope.retrieval.base import Retriever
    from rankscope.retrieval.bm25 import BM25

RUN_DEPTH = 1000
"""Documents per query in a written run (trec_eval's usual depth)."""
SHOWN_RESULTS = 10
"""Results printed per ``--query``."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="run a retriever over a collection's queries and write a TREC run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dataset",
        help="collection name or folder (see `rankscope datasets`); without it, --index-dir's index alone "
        "(its source.json says where its corpus is)",
    )
    parser.add_argument(
        "--retriever",
        metavar="SPEC",
        help="e.g. bm25, bm25:k1=0.9,b=0.4, tfidf (`rankscope retrievers` lists every retriever's parameters); "
        "with an index alone, default: the index's own",
    )
    parser.add_argument(
        "--queries",
        type=Path,
        metavar="FILE",
        help="a questions file (JSONL, CSV, TSV, or one question a line) instead of the dataset's",
    )
    parser.add_argument(
        "--k", type=int, help=f"documents per query (default {RUN_DEPTH} for a run, {SHOWN_RESULTS} with --query)"
    )
    parser.add_argument("--out", type=Path, help="TREC run file to write")
    parser.add_argument(
        "--query", action="append", metavar="TEXT", help="print the top results for this text (repeatable)"
    )
    parser.add_argument("--index-dir", type=Path, help="save the index here, or reuse the one already there")
    add_scheduler(parser, "shards bm25's index and searches over a Dask cluster; the run is the same, bit for bit")
    add_analyzer(parser)
    add_strict(parser)
    add_fields(parser)
    add_split(parser)
    parser.set_defaults(func=run_search)

    building = subparsers.add_parser(
        "index",
        help="build a BM25/TF-IDF index of a corpus file in bounded memory (for corpora larger than memory)",
        description=(
            "Read a corpus file (JSONL with doc_id or _id, text, title optional; CSV/TSV with a header naming "
            "doc_id and text; or a headerless id<TAB>text TSV, as MS MARCO's collection.tsv, quotes as plain text) "
            "or the documents of an ir_datasets collection one batch at a time, count it on "
            "--workers processes, spill the counts to disk whenever --memory-budget is reached and merge them "
            "into the index folder. The index is the one `rankscope search --index-dir` saves for the same "
            "documents, and that command reuses it."
        ),
    )
    source = building.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=Path, help="corpus file (.jsonl, .tsv or .csv, optionally .gz)")
    source.add_argument(
        "--dataset",
        metavar="irds:NAME",
        help="an ir_datasets collection, its documents read one at a time from its docs_iter (never a table); "
        "--fields corpus.title=F,corpus.text=G picks its fields",
    )
    add_fields(building)
    building.add_argument("--retriever", default="bm25", metavar="SPEC", help="a bm25 or tfidf spec (default bm25)")
    building.add_argument("--index-dir", type=Path, required=True, help="folder to write the index to")
    building.add_argument(
        "--memory-budget",
        default="1G",
        metavar="SIZE",
        help="counts held in memory before spilling to disk: bytes, or with K, M or G (default 1G)",
    )
    building.add_argument(
        "--workers",
        type=int,
        default=default_count(),
        help="processes analysing the text (default: up to 2)",
    )
    building.set_defaults(func=run_index)

    listing = subparsers.add_parser(
        "retrievers",
        help="list the retrievers and their parameters (what a SPEC may say)",
        description="Every retriever a spec can name, with each parameter's allowed values, default and meaning.",
    )
    listing.add_argument("names", nargs="*", metavar="NAME", help="only these retrievers (default: all)")
    listing.set_defaults(func=run_retrievers)


def run_search(args: argparse.Namespace) -> int:
    from rankscope.retrieval.registry import make_retriever, with_analyzer

    if (args.out is None) == (not args.query):
        raise RankscopeError("give --out FILE to write a run of the queries, or --query TEXT (not both)")
    if args.dataset is None and args.index_dir is None:
        raise RankscopeError(
            "give --dataset (a collection) or --index-dir (an index `rankscope index` or search built)"
        )
    if args.dataset is None and args.out is not None and args.queries is None:
        raise RankscopeError("an index alone has no queries: give --queries FILE to write a run (or --query TEXT)")
    if args.retriever is None and args.dataset is not None:
        raise RankscopeError("give --retriever SPEC (e.g. bm25) to index the collection")
    k = args.k if args.k is not None else (SHOWN_RESULTS if args.query else RUN_DEPTH)
    if k < 1:
        raise RankscopeError(f"--k must be a positive integer, got {k}")
    if args.out is not None:
        check_output_file(args.out)  # a bad path fails before any computing
    started = time.perf_counter()
    wanted = None if args.retriever is None else make_retriever(with_analyzer(args.retriever, args.analyzer))
    if args.scheduler is not None:
        return _search_sharded(args, cast("Retriever", wanted), k, started)  # --dataset given: checked above
    from rankscope.corpora.trec import write_trec_run  # pandas: loaded once the spec is known to be good

    queries = None if args.queries is None else _read_queries(args.queries, args.fields)
    if args.dataset is None:
        retriever, documents = index_alone(args.index_dir, wanted)
    else:
        dataset = load_reported(args.dataset, args.command, args.strict, args.fields, args.split)
        retriever = indexed(cast("Retriever", wanted), dataset, args.dataset, args.index_dir, args.fields)
        queries = dataset.queries if queries is None else queries
        documents = lambda doc_ids: dataset.corpus  # noqa: E731
    if args.query:
        print(show_results(retriever, args.query, documents, k))
        return 0
    run = retriever.search(queries, k=k)
    write_trec_run(run, args.out, tag=retriever.spec().replace(" ", ""))
    print(
        f"wrote {len(run):,} rows for {run['query_id'].nunique():,} queries (top {k}) to {args.out} "
        f"in {time.perf_counter() - started:.1f} s [{retriever.spec()}]"
    )
    return 0


def _read_queries(path: Path, fields: str | None) -> pd.DataFrame:
    """``--queries FILE``: a questions file, as every command reads one (:mod:`rankscope.corpora.questions`)."""
    from rankscope.corpora.cli import parsed_fields
    from rankscope.corpora.questions import read_questions_table

    return read_questions_table(path, parsed_fields(fields).get("queries"))


def _search_sharded(args: argparse.Namespace, retriever: Retriever, k: int, started: float) -> int:
    """``search --scheduler``: BM25's index sharded over a Dask cluster, the run written as one process writes it."""
    from rankscope.core.scheduler import connect
    from rankscope.corpora.trec import write_trec_run
    from rankscope.retrieval.sharded import check_shardable, sharded_search

    if args.query or args.index_dir is not None:
        raise RankscopeError("--scheduler writes a run (--out): it does not go with --query or --index-dir")
    check_shardable(retriever)
    with connect(args.scheduler) as client:
        dataset = load_reported(args.dataset, args.command, args.strict, args.fields, args.split)
        run = sharded_search(cast("BM25", retriever), dataset.corpus, dataset.queries, k, client)
    write_trec_run(run, args.out, tag=retriever.spec().replace(" ", ""))
    print(
        f"wrote {len(run):,} rows for {run['query_id'].nunique():,} queries (top {k}) to {args.out} "
        f"in {time.perf_counter() - started:.1f} s [{retriever.spec()}, --scheduler {args.scheduler}]"
    )
    return 0


def run_index(args: argparse.Namespace) -> int:
    from rankscope.core.errors import duplicate_message
    from rankscope.corpora.stream import repeated_id
    from rankscope.retrieval.base import document_text
    from rankscope.retrieval.counts_retriever import CountsRetriever, RepeatedDocumentError
    from rankscope.retrieval.registry import make_retriever

    workers = checked_count(args.workers)
    budget = parse_size(args.memory_budget)
    retriever = make_retriever(args.retriever)
    if not isinstance(retriever, CountsRetriever):
        raise RankscopeError(
            f"--retriever: only term-count indexes (bm25, tfidf) are built in bounded memory, not {args.retriever!r}"
        )
    started = time.perf_counter()
    rows = _index_rows(args)
    documents = ((doc_id, document_text(title, text)) for doc_id, title, text in rows)
    with replacing_index(args.index_dir) as staging:  # the index and its source.json swapped in together
        try:
            counts = retriever.write_index(staging, documents, memory_budget=budget, workers=workers)
        except RepeatedDocumentError as exc:
            if args.dataset is not None:
                raise RankscopeError(f"{args.dataset}: {duplicate_message('doc_id', exc.doc_id)}") from None
            raise repeated_id(args.corpus, exc.doc_id) from None
        doc_ids = counts.doc_ids
        if args.dataset is not None:
            write_source(staging, args.dataset, doc_ids, dataset=args.dataset, fields=corpus_fields(args.fields))
        else:
            write_source(staging, args.corpus.name, doc_ids, corpus_file=args.corpus)
    print(
        f"indexed {len(doc_ids):,} documents ({counts.n_terms:,} terms) into {args.index_dir} "
        f"in {time.perf_counter() - started:.1f} s [{retriever.spec()}]"
    )
    return 0


def _index_rows(args: argparse.Namespace) -> Iterable[tuple[str, str, str]]:
    """``index``'s documents as ``(doc_id, title, text)``, one at a time: ``--corpus``'s file or ``--dataset``'s
    ir_datasets collection (its fields by ``--fields``); a source that cannot give them fails here."""
    from rankscope.core.fileio import require_file
    from rankscope.corpora.cli import parsed_fields
    from rankscope.corpora.irds import iter_irds_documents
    from rankscope.corpora.load import IRDS
    from rankscope.corpora.stream import iter_corpus

    if args.dataset is None:
        if args.fields is not None:
            raise RankscopeError(
                "--fields picks an ir_datasets collection's fields (--dataset irds:NAME), not a file's"
            )
        return iter_corpus(require_file(args.corpus, "corpus file"))
    if not args.dataset.startswith(IRDS):  # any other collection loads whole: its corpus file streams instead
        raise RankscopeError(
            f"--dataset: index streams the documents of an ir_datasets collection (irds:NAME), not {args.dataset!r}; "
            "for a collection folder give its corpus file (--corpus FOLDER/corpus.jsonl)"
        )
    others = sorted(set(parsed_fields(args.fields)) - {"corpus"})
    if others:
        raise RankscopeError(f"--fields: index reads documents only, so corpus.ROLE=FIELD, not {others[0]}.")
    return iter_irds_documents(args.dataset.removeprefix(IRDS), corpus_fields(args.fields))


def show_results(retriever: Retriever, texts: list[str], documents: Documents, k: int) -> str:
    """The top ``k`` of each text as lines a person reads: rank, doc id, score, title, and a snippet
    with the query's words in [brackets] (matched after the retriever's own analysis; the snippet is
    diagnose's, :mod:`rankscope.retrieval.snippets`). A document whose text ``documents`` cannot give
    (an index whose corpus file moved) shows its id and score only."""
    from rankscope.retrieval.analysis import get_analyzer
    from rankscope.retrieval.base import as_queries
    from rankscope.retrieval.snippets import highlight, snippet, word_terms

    analyzer = getattr(retriever, "analyzer_", None) or get_analyzer("english")
    run = retriever.search(texts, k=k)
    found = documents(set(run["doc_id"]))
    known = found.set_index("doc_id")
    lines = []
    for query_id, text in zip(as_queries(texts)["query_id"], texts):
        terms = set(analyzer.tokenize(text))
        lines.append(f"query {printable(query_id)}: {printable(text)}")
        hits = run[run["query_id"] == query_id]
        if hits.empty:
            lines.append("  (no document matches)")
        for rank, doc_id, score in zip(hits["rank"], hits["doc_id"], hits["score"]):
            if doc_id not in known.index:
                lines.append(
                    f"  {rank:>3}  {doc_id}  {score:.4f}  (text not found: the corpus the index names is gone)"
                )
                continue
            title = " ".join(printable(str(known.at[doc_id, "title"])).split()) or "(no title)"
            lines.append(f"  {rank:>3}  {printable(doc_id)}  {score:.4f}  {title}")
            body = str(known.at[doc_id, "text"])
            shown, matched = snippet(body, terms, word_terms([body], analyzer))
            lines.append(f"       {printable(highlight(shown, matched, '[', ']', str))}")
    return "\n".join(lines)


def run_retrievers(args: argparse.Namespace) -> int:
    """Print each retriever's parameter table, generated from its ``parameters`` declaration."""
    from rankscope.retrieval.params import parameter_table
    from rankscope.retrieval.registry import available, retriever_class

    blocks = []
    for name in args.names or available():
        cls = retriever_class(name)
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        table = parameter_table(cls.parameters)
        notes = "".join(f"\n  note: {note}" for note in cls().notes())  # what its defaults leave weak
        blocks.append(f"{name}: {summary}\n" + (_aligned(table) if len(table) else "  (no parameters)") + notes)
    print("\n\n".join(blocks))
    return 0


def _aligned(table: pd.DataFrame) -> str:
    """The table as left-aligned text columns, indented by two spaces."""
    rows = [list(table.columns), *table.astype(str).values.tolist()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)
