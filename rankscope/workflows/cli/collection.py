"""rankscope collection ACTION DIR: build a test collection from a folder of documents, step by step.

init reads the files (text, Markdown, HTML, PDF) and the team's questions into DIR, a BEIR-layout
folder; a re-run adds new and changed files only. pool searches the questions with the systems and
keeps their top documents, judge has a judge label every pooled pair (before or after people do), sample
draws the pairs people label (then 'rankscope label DIR'), export writes the qrels and provenance so
that 'compare --dataset DIR' works (docs/collection.md).
"""

from __future__ import annotations

import argparse

from rankscope.core.errors import RankscopeError


class CollectionArgumentError(RankscopeError):
    """A collection action asked for without what it needs."""


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
        "--text-suffixes",
        nargs="+",
        metavar="SUFFIX",
        help="read files of these suffixes (.log .cfg) as plain text; files of unknown suffixes are read when "
        "their content is text (kept for re-runs)",
    )
    init.add_argument(
        "--encoding",
        metavar="NAME",
        help="decode texts that are not UTF-8 with this legacy encoding, e.g. latin-1 (kept for re-runs)",
    )
    init.add_argument(
        "--chunking", metavar="SPEC", help="split documents: words:SIZE[:OVERLAP], sentences:MAX, paragraphs:MAX"
    )
    init.add_argument(
        "--generate",
        type=int,
        metavar="N",
        help="also have a model write N questions, one per document drawn with --seed",
    )
    init.add_argument(
        "--judge-model", metavar="SPEC", help="the model writing them: openai:model=M,base_url=U[,key_env=VAR,...]"
    )
    init.add_argument(
        "--seed", type=int, default=0, help="seed drawing the documents to question (default: %(default)s)"
    )
    init.set_defaults(func=run_init)
    pool = actions.add_parser(
        "pool", help="pool the systems' top documents for every question; records who put each where"
    )
    pool.add_argument("folder", metavar="DIR", help="the collection folder")
    pool.add_argument(
        "--systems", nargs="+", default=[], metavar="SPEC", help="retriever specs (e.g. bm25 dense:model=model2vec)"
    )
    pool.add_argument(
        "--run", action="append", default=[], metavar="NAME=PATH", help="a run file of another system (repeatable)"
    )
    pool.add_argument(
        "--depth", type=int, default=10, help="documents pooled per system and question (default: %(default)s)"
    )
    pool.set_defaults(func=run_pool)
    judge = actions.add_parser(
        "judge",
        help="have a judge label every pooled pair of every question (cached in DIR: a re-run asks only the rest)",
    )
    judge.add_argument("folder", metavar="DIR", help="the collection folder")
    judge.add_argument(
        "--judge", required=True, metavar="SPEC", help="the judge: openai:model=M,base_url=U[,...] or qrels:PATH"
    )
    judge.set_defaults(func=run_judge)
    sample = actions.add_parser(
        "sample", help="draw the pairs people label, stratified by rank band and system (inclusion probabilities kept)"
    )
    sample.add_argument("folder", metavar="DIR", help="the collection folder")
    sample.add_argument("--budget", type=int, required=True, metavar="N", help="pairs to draw")
    sample.add_argument("--seed", type=int, default=0, help="seed of the draw (default: %(default)s)")
    sample.set_defaults(func=run_sample)
    export = actions.add_parser(
        "export", help="write the qrels (human, judge, merged with source), inclusion probabilities and provenance"
    )
    export.add_argument("folder", metavar="DIR", help="the collection folder")
    export.set_defaults(func=run_export)


def run_init(args: argparse.Namespace) -> int:
    from rankscope.workflows.collection.ingest import init_collection, text_rules

    result = init_collection(
        args.folder,
        args.docs,
        queries=args.queries,
        chunking=args.chunking,
        generate=args.generate,
        judge_model=args.judge_model,
        seed=args.seed,
        text=text_rules(args.folder, args.text_suffixes, args.encoding),
    )
    print(result.to_text())
    return 0


def run_pool(args: argparse.Namespace) -> int:
    from rankscope.workflows.cli.options import systems_from_args
    from rankscope.workflows.collection.pooling import pool_collection

    if not args.systems and not args.run:
        raise CollectionArgumentError("give the systems to pool: --systems SPEC... and/or --run NAME=PATH")
    print(pool_collection(args.folder, systems_from_args(args.systems, args.run), args.depth).to_text())
    return 0


def run_judge(args: argparse.Namespace) -> int:
    from rankscope.core.notices import print_warnings
    from rankscope.workflows.collection.judge_pool import judge_collection

    result = judge_collection(args.folder, args.judge)
    print(result.to_text())
    print_warnings("collection", result.warnings)
    return 0


def run_sample(args: argparse.Namespace) -> int:
    from rankscope.workflows.collection.sample import sample_collection

    print(sample_collection(args.folder, args.budget, args.seed).to_text())
    return 0


def run_export(args: argparse.Namespace) -> int:
    from rankscope.workflows.collection.export import export_collection

    print(export_collection(args.folder).to_text())
    return 0
