"""rankscope label DIR: a local web page to label the collection's sampled pairs, one at a time."""

from __future__ import annotations

import argparse
import getpass


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "label",
        help="label the sampled pairs of a collection in a local web page (keys 0-3, skip, undo, notes)",
        description=__doc__ + " Every label is saved the moment it is given (DIR/judgments.sqlite, as human:NAME).",
    )
    parser.add_argument("folder", metavar="DIR", help="the collection folder (after collection sample)")
    parser.add_argument("--name", default=None, help="who labels (default: your user name); labels are human:NAME")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to serve on (default: %(default)s, this machine only)"
    )
    parser.add_argument("--port", type=int, default=8765, help="port (default: %(default)s; 0 picks a free one)")
    parser.set_defaults(func=run_label)


def run_label(args: argparse.Namespace) -> int:
    from rankscope.workflows.collection.labelpage import serve

    serve(args.folder, args.name or getpass.getuser(), args.host, args.port)
    return 0
