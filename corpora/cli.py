"""rankscope datasets: the known collections, where each resolves, and their counts.

Collections found locally (under $RANKSCOPE_DATA or in the cache) are loaded to
count documents, queries, judged queries and judgment lines; the others show
the URL they would be downloaded from. Folders given as arguments are loaded
and listed too. Nothing is downloaded.

'rankscope datasets export NAME --out DIR' writes a collection (a name or a folder)
as a BEIR folder plus a TREC qrels file, DIR/qrels.txt, for 'rankscope search' ->
'rankscope evaluate' or other tools. (A folder named export is ./export.)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rankscope.core.errors import RankscopeError
from rankscope.core.notices import print_notes, print_warnings
from rankscope.corpora.registry import COLLECTIONS

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset

COUNTS = ("documents", "queries", "judged_queries", "judgments")
EXPORT = "export"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "datasets",
        help="list known collections, where each resolves, and their counts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("extra", nargs="*", metavar="FOLDER", help="also describe these collection folders")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    parser.add_argument("--out", metavar="DIR", help="with 'export NAME': the folder to write")
    add_fields(parser)
    add_split(parser)
    parser.set_defaults(func=run_datasets)


def add_strict(parser: argparse.ArgumentParser) -> None:
    """The ``--strict`` option of every command that loads a dataset."""
    parser.add_argument(
        "--strict", action="store_true", help="judgments naming documents or queries the dataset lacks are an error"
    )


def add_split(parser: argparse.ArgumentParser) -> None:
    """The ``--split`` option of every command that loads a dataset (BEIR folders with only ``dev``)."""
    parser.add_argument(
        "--split",
        metavar="NAME",
        help="the qrels split of a BEIR folder, qrels/NAME.tsv (default: test; SMART and TREC-style folders "
        "have only test)",
    )


def add_analyzer(parser: argparse.ArgumentParser) -> None:
    """The dataset-level ``--analyzer`` of every command that builds retrievers (the collection's language)."""
    parser.add_argument(
        "--analyzer",
        "--language",
        metavar="NAME",
        help="text analysis for the collection, given to every retriever spec that sets none: a preset "
        "(english, english-nostem, plain, chinese); instead of analyzer=NAME in each spec",
    )


FIELDS_HELP = (
    "map columns of JSONL/CSV/TSV/Parquet files: COLUMN=NAME,... e.g. doc_id=id,text=contents; "
    "KIND.COLUMN=NAME for one kind of file (corpus, queries, qrels, run), e.g. run.query_id=qid"
)


def add_fields(parser: argparse.ArgumentParser) -> None:
    """The ``--fields`` option of every command that reads table files (parsed when the command runs)."""
    parser.add_argument("--fields", metavar="COLUMN=NAME,...", help=FIELDS_HELP)


def parsed_fields(text: str | None) -> dict[str, dict[str, str]]:
    """``--fields`` as a column mapping per table kind ({} when not given)."""
    from rankscope.corpora.tabular import parse_fields

    return parse_fields(text) if text else {}


def load_reported(
    where: str, command: str, strict: bool = False, fields: str | None = None, split: str | None = None
) -> Dataset:
    """Load a dataset for a command and print the warnings it collected (``strict``: dangling judgments fail;
    ``fields``: the ``--fields`` text, whose corpus and queries mappings apply to the dataset's table files;
    ``split``: ``--split``, the qrels split of a BEIR folder)."""
    from rankscope.corpora.load import load_dataset  # pandas: loaded when a command needs data, not to parse

    columns = {kind: mapping for kind, mapping in parsed_fields(fields).items() if kind in ("corpus", "queries")}
    dataset = load_dataset(where, split, columns=columns)
    if strict:
        dataset.check_references()
    print_warnings(command, dataset.warnings)
    print_notes(command, dataset.notes)
    return dataset


def load_corpus_reported(where: str, command: str, fields: str | None = None) -> Dataset:
    """The corpus of a folder without judgments (``rag --answers``: the answers are the evidence);
    a collection with judgments loads whole, as :func:`load_reported` does."""
    from rankscope.corpora.load import load_corpus_folder

    columns = {kind: mapping for kind, mapping in parsed_fields(fields).items() if kind == "corpus"}
    dataset = load_corpus_folder(where, columns)
    print_warnings(command, dataset.warnings)
    return dataset


def run_datasets(args: argparse.Namespace) -> int:
    if args.extra[:1] == [EXPORT]:
        return run_export(args)
    if args.out is not None or args.fields is not None or args.split is not None:
        raise RankscopeError("--out, --fields and --split go with 'rankscope datasets export NAME --out DIR'")
    from rankscope.corpora.paths import cache_root, data_root

    given = [_folder_row(folder) for folder in args.extra]
    refused = [row["error"] for row in given if row.get("error")]
    if refused:  # the folder the user named is unusable: said as every command says it, not inside the table
        raise RankscopeError(refused[0])
    rows = [_known_row(name) for name in COLLECTIONS] + given
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_table(rows))
        root = data_root()
        sys.stdout.write(f"searched: RANKSCOPE_DATA={root if root else '(unset)'}, then the cache {cache_root()}\n")
    return 1 if any(row.get("error") for row in rows) else 0


def run_export(args: argparse.Namespace) -> int:
    """``rankscope datasets export NAME --out DIR``."""
    from rankscope.corpora.export import export_dataset

    names = args.extra[1:]
    if len(names) != 1 or args.out is None:
        raise RankscopeError("usage: rankscope datasets export NAME --out DIR (one collection name or folder)")
    dataset = load_reported(names[0], args.command, fields=args.fields, split=args.split)
    files = export_dataset(dataset, args.out)
    stats = dataset.stats()
    print(
        f"wrote {dataset.name}: {stats['documents']} documents, {stats['queries']} queries, "
        f"{stats['judgments']} judgments to {args.out} ({', '.join(str(f.relative_to(args.out)) for f in files)})"
    )
    return 0


def _known_row(name: str) -> dict[str, Any]:
    from rankscope.corpora.load import locate

    collection = COLLECTIONS[name]
    found = locate(name)
    row: dict[str, Any] = {"name": name, "description": collection.description, "url": collection.url}
    if found.path is None:
        row["location"] = None
        row["source"] = "download"
        return row
    row["location"] = str(found.path)
    row["source"] = found.source
    return row | _counts(str(found.path))


def _folder_row(folder: str) -> dict[str, Any]:
    return {"name": folder, "description": "folder given on the command line", "location": folder, "source": "path"} | (
        _counts(folder)
    )


def _counts(where: str) -> dict[str, Any]:
    from rankscope.corpora.load import load_dataset

    try:
        stats = load_dataset(where).stats()
    except (RankscopeError, FileNotFoundError) as exc:
        return {"error": str(exc)}
    return {key: stats[key] for key in COUNTS} | {"judgments_per_level": stats["judgments_per_level"]}


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """Fixed-width text table; counts blank for collections not available locally."""
    header = ("name", "documents", "queries", "judged", "judgments", "location")
    lines = [header]
    for row in rows:
        if row.get("error"):
            where = f"error: {row['error']}"
        elif row["location"] is None:
            where = f"not local; downloads from {row['url']}"
        else:
            where = f"{row['location']} ({row['source']})"
        counts = tuple(str(row[key]) if key in row else "-" for key in COUNTS)
        lines.append((row["name"], *counts, where))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = []
    for line in lines:
        cells = [cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells + [line[-1]]))
    return "\n".join(out) + "\n"
