"""rankscope engines: which search engines can run here, and 'engines install lucene' to fetch Anserini's jar."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from rankscope.core.errors import RankscopeError

if TYPE_CHECKING:
    from rankscope.retrieval.engines.common import EngineRetriever

ENGINES = ("lucene", "pisa")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engines",
        help="search engines as retrievers (lucene, pisa): show what is installed, install Anserini's jar",
        description=__doc__,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    fetch = actions.add_parser(
        "install",
        help="fetch what an engine needs beyond pip (lucene: Anserini's jar from Pyserini's source archive "
        "on the package index, checksum verified)",
    )
    fetch.add_argument("engine", choices=ENGINES)
    parser.set_defaults(func=run_engines)


def run_engines(args: argparse.Namespace) -> int:
    from rankscope.core.packaged import install
    from rankscope.retrieval.engines.install import ANSERINI_JAR, engines_dir
    from rankscope.retrieval.registry import retriever_class

    folder = engines_dir()
    if getattr(args, "action", None) == "install":
        cls = cast("type[EngineRetriever]", retriever_class(args.engine))
        if args.engine == "lucene":
            path = install(ANSERINI_JAR, folder)
            print(f"lucene: {path} (SHA-256 {ANSERINI_JAR.sha256} verified)")
        reason = cls.unavailable()
        if reason:
            raise RankscopeError(reason)
        print(f"{args.engine}: ready")
        return 0
    for name in ENGINES:
        reason = cast("type[EngineRetriever]", retriever_class(name)).unavailable()
        print(f"{name}: {'ready' if reason is None else 'not ready: ' + reason}")
    print(f"engine files are kept in {folder}")
    return 0
