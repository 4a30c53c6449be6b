"""What every workflow does first: resolve the dataset, check the depth, score at cutoffs.

Systems (specs, Retriever objects, runs) become runs in :mod:`rankscope.workflows.common.systems`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeAlias, cast

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import CodedTable
from rankscope.evaluation.conventions import WORKFLOW_EXCLUDE_UNJUDGED
from rankscope.reporting.report import file_stem

SEARCH_DEPTH = 1000
"""Documents a retriever returns per query when no depth is given (a run file is then scored as given)."""

CUTOFFS = (1, 3, 5, 10, 20, 50, 100)
"""The K of every hit/recall/MRR@K curve (compare's curves, diagnose's cutoffs)."""

DIAGNOSTICS_CAPTION = (
    "Retriever diagnostics: oov_* = share of document/query tokens the word vectors do not know; "
    "ann_recall@K = share of the exact top K an approximate index returned (mean over queries)"
)

DatasetSource: TypeAlias = "str | os.PathLike[str] | Dataset | pd.DataFrame | Callable[[], Dataset]"
"""A dataset, its name or path, a function loading it (the CLI's, which prints its warnings), or
judgments alone: a qrels table or qrels file (:meth:`Dataset.qrels_only`, for runs made elsewhere)."""


@phase("load")
def resolve_dataset(dataset: DatasetSource) -> Dataset:
    """A Dataset as given, made by the given loader, judgments alone (a qrels table, or a path to a
    qrels file), or loaded by name/folder through :func:`corpora.load_dataset`.

    Workflows call this after checking their other arguments, so a typo fails before any loading.
    """
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, pd.DataFrame):
        return Dataset.qrels_only(dataset)
    if callable(dataset):
        return dataset()
    from rankscope.corpora import load_dataset
    from rankscope.corpora.registry import COLLECTIONS

    if str(dataset).lower() not in COLLECTIONS and Path(dataset).is_file():  # a known name stays the collection
        return qrels_file_dataset(dataset)

    return load_dataset(dataset)


@phase("load")
def resolve_corpus(dataset: DatasetSource) -> Dataset:
    """:func:`resolve_dataset`, except that a folder holding no judgments gives its corpus alone
    (``rag`` with answers: the questions give the queries, their answers the evidence)."""
    from rankscope.corpora.load import has_judgments, load_corpus_folder

    if isinstance(dataset, (str, os.PathLike)) and Path(dataset).is_dir() and not has_judgments(dataset):
        return load_corpus_folder(dataset)
    return resolve_dataset(dataset)


def qrels_file_dataset(path: str | os.PathLike, columns: Mapping[str, str] | None = None) -> Dataset:
    """The judgments of a qrels file (any format :func:`rankscope.corpora.foreign.read_qrels` reads,
    ``columns`` mapping a table file's), as a dataset named after the file, its judgments' source recorded."""
    from rankscope.corpora.foreign import read_qrels
    from rankscope.corpora.label_sources import file_sources

    qrels = cast(pd.DataFrame, read_qrels(path, columns))  # a table: coded only when asked
    return Dataset.qrels_only(qrels, Path(path).name).with_label_sources(file_sources(qrels, str(path)))


def check_specs(specs: Sequence[str]) -> None:
    """Refuse what :func:`check_names` refuses of the specs and any spec
    :func:`retrieval.registry.make_retriever` refuses, all before the first retriever is indexed."""
    from rankscope.retrieval.registry import make_retriever

    check_names(specs, "retriever")
    for spec in specs:
        make_retriever(spec)  # builds without indexing: cheap, and refuses bad names and values


def check_names(names: Sequence[object], what: str) -> None:
    """The one rule for the names of the systems a workflow is given (``what``: ``system``, ``retriever``):
    refuse none, a name that is not a non-empty string, a name given twice (its results would overwrite
    the other's, or one would silently go) and names that would share an output file name."""
    if not names:
        raise RankscopeError(f"no {what}s given")
    for name in names:
        if not isinstance(name, str) or not name:
            raise RankscopeError(f"{what} names are non-empty strings, got {name!r}")
        if names.count(name) > 1:
            raise RankscopeError(f"{what} {name!r} is listed twice")
    stems = [file_stem(cast(str, name)) for name in names]
    if len(set(stems)) != len(stems):
        raise RankscopeError(f"{what}s {list(names)} would share output file names {stems}")


def check_depth(depth: int | None, option: str = "--depth") -> None:
    """Refuse a depth below 1 (or beyond what a search can take) before any indexing, so the mistake costs
    no time (None: no depth given); ``option`` names it (``--pool-bias``, ``--pool-depth`` are depths too)."""
    from rankscope.retrieval.base import MAX_K

    if depth is not None and depth < 1:
        raise RankscopeError(f"{option} must be at least 1, got {depth}")
    if depth is not None and depth > MAX_K:
        raise RankscopeError(f"{option} must be at most {MAX_K}, got {depth}")


def cutoff_table(
    qrels: pd.DataFrame | CodedTable,
    run: pd.DataFrame | CodedTable,
    cutoffs: Sequence[int],
    measures: Sequence[str] = ("hit", "recall", "mrr"),
    exclude_unjudged: bool = WORKFLOW_EXCLUDE_UNJUDGED,
) -> pd.DataFrame:
    """``measure@K`` for every K, as a frame indexed by K with one column per measure.

    Scored by :func:`evaluation.evaluate` (trec_eval semantics; ``exclude_unjudged``
    leaves out queries without a relevant document, which can be neither hit nor missed).
    """
    from rankscope.evaluation import evaluate

    names = [f"{m}@{k}" for k in cutoffs for m in measures]
    means = evaluate(qrels, run, names, exclude_unjudged=exclude_unjudged).mean
    rows = {k: {m: means[f"{m}@{k}"] for m in measures} for k in cutoffs}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("K")
