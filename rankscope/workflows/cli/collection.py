"""``rankscope collection ACTION DIR``: build a test collection from a folder of documents, step by step.

``init`` reads the files (text, Markdown, HTML, PDF) and the team's questions into DIR, a BEIR-layout
folder; a re-run adds new and changed files only. The other steps (pool, sample, export) work on DIR.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "collection", help="build a test collection from a folder of documents", description=__doc__
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser(
        "init",
        help="read documents (text, Markdown, HTML, PDF) and questions into DIR; re-runs add new/changed files",
    )
    init.add_argument("folder", metavar="DIR", help="the collection folder (made if missing)")
    init.add_argument("--docs", nargs="+", required=True, metavar="PATH", help="files or folders to read")
    init.add_argument("--queries", metavar="FILE", help="the team's questions: text lines, JSONL or CSV")
    init.add_argument(
        "--chunking", metavar="SPEC", help="split documents: words:SIZE[:OVERLAP], sentences:MAX, paragraphs:MAX"
    )
    init.set_defaults(func=run_init)


def run_init(args: argparse.Namespace) -> int:
    from rankscope.workflows.collection.ingest import init_collection

    print(init_collection(args.folder, args.docs, queries=args.queries, chunking=args.chunking).to_text())
    return 0
