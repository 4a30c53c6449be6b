"""``rankscope search``: index a collection with a retriever spec and write a TREC run.

With ``--index-dir`` the index is saved there and reused by later calls with the
same spec and the same corpus (checked: a reused index built from other
documents or with other parameters is an error, never silently wrong results).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import atomic_write
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.registry import load_retriever, make_retriever
from rankscope.retrieval.storage import META_FILE

SOURCE_FILE = "source.json"
"""Written beside an index by this command: which corpus built it."""


class IndexMismatchError(RankscopeError):
    """A reused ``--index-dir`` was built with another spec or another corpus."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="run a retriever over a collection's queries and write a TREC run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dataset", required=True, help="collection name or folder (see `rankscope datasets`)")
    parser.add_argument("--retriever", required=True, metavar="SPEC", help="e.g. bm25, bm25:k1=0.9,b=0.4, tfidf")
    parser.add_argument("--k", type=int, default=1000, help="documents per query (default 1000)")
    parser.add_argument("--out", required=True, type=Path, help="TREC run file to write")
    parser.add_argument("--index-dir", type=Path, help="save the index here, or reuse the one already there")
    parser.set_defaults(func=run_search)


def run_search(args: argparse.Namespace) -> int:
    from rankscope.corpora import load_dataset
    from rankscope.corpora.trec import write_trec_run

    if args.k < 1:
        raise RankscopeError(f"--k must be a positive integer, got {args.k}")
    dataset = load_dataset(args.dataset)
    retriever = make_retriever(args.retriever)
    fingerprint = corpus_fingerprint(dataset.corpus["doc_id"].tolist())
    if args.index_dir is not None and (args.index_dir / META_FILE).is_file():
        retriever = _reuse(args.index_dir, retriever, fingerprint)
    else:
        retriever.index(dataset.corpus)
        if args.index_dir is not None:
            retriever.save(args.index_dir)
            with atomic_write(args.index_dir / SOURCE_FILE) as sink:
                json.dump(
                    {"dataset": dataset.name, "documents": len(dataset.corpus), "doc_ids_sha256": fingerprint}, sink
                )
    run = retriever.search(dataset.queries, k=args.k)
    write_trec_run(run, args.out, tag=retriever.spec().replace(" ", ""))
    return 0


def corpus_fingerprint(doc_ids: list[str]) -> str:
    """SHA-256 of the doc ids in order: cheap, and enough to notice an index of another corpus."""
    digest = hashlib.sha256()
    for doc_id in doc_ids:
        digest.update(doc_id.encode("utf-8") + b"\0")
    return digest.hexdigest()


def _reuse(directory: Path, wanted: Retriever, fingerprint: str) -> Retriever:
    """The saved index, if ``source.json`` says it holds this corpus and it was built with this spec."""
    source_path = directory / SOURCE_FILE
    if not source_path.is_file():
        raise IndexMismatchError(f"{directory}: no {SOURCE_FILE}, so its corpus is unknown; use a new --index-dir")
    try:
        source = json.loads(source_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexMismatchError(f"{source_path}: not valid JSON ({exc}); use a new --index-dir") from None
    if not isinstance(source, dict):
        raise IndexMismatchError(f"{source_path}: expected a JSON object describing the corpus; use a new --index-dir")
    if source.get("doc_ids_sha256") != fingerprint:
        raise IndexMismatchError(
            f"{directory}: index was built from another corpus ({source.get('dataset')!r}, "
            f"{source.get('documents')} documents); use a new --index-dir"
        )
    loaded = load_retriever(directory)
    if loaded.spec() != wanted.spec():
        raise IndexMismatchError(
            f"{directory}: index was built as {loaded.spec()}, not {wanted.spec()}; use a new --index-dir"
        )
    return loaded
