"""Systems are names, objects or runs: what compare, diagnose and tune accept as "a system".

A system is one of

- a retriever spec string (``"bm25:k1=0.9,b=0.4"``), built through the registry;
- a :class:`~rankscope.retrieval.base.Retriever` object (a fresh one with its parameters is
  indexed on the dataset's corpus: the object given is never modified);
- a run DataFrame (``query_id, doc_id, score``), e.g. a dense model's output;
- a run file path (a :class:`pathlib.Path` or any ``os.PathLike``; a plain ``str`` is a
  spec, so ``"bm25"`` never turns into a file of that name by accident);
- a retriever of another framework, already indexed: a LangChain retriever, a LlamaIndex
  retriever, a Haystack retriever component, a PyTerrier transformer, or one of them wrapped
  by :func:`~rankscope.workflows.common.frameworks.adapt` to name its fields.

Workflows take a mapping ``name -> system`` (or a list of specs, each its own name) and
call :func:`resolve_systems` once, then :func:`produce_run` per system: the one place
where a system becomes a run on a dataset, is checked against it, and gets the full
description every report shows (the spec with all parameters, or the file path and
its SHA-256).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.phases import phase
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.foreign import as_table
from rankscope.corpora.schema import sort_run, validate
from rankscope.workflows.common.frameworks import Adapted, adapt, framework_of, framework_run
from rankscope.workflows.common.runs import check_names

SystemLike = Any  # str | Retriever | pd.DataFrame | os.PathLike
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class RunFile(os.PathLike):
    """A run file read with a column mapping (a table file's columns; CLI ``--run`` with ``--fields``)."""

    path: Path
    columns: Mapping[str, str]

    def __fspath__(self) -> str:
        return str(self.path)


@dataclass(frozen=True)
class System:
    """A named system before it has a run on a dataset.

    Exactly one of ``spec`` (build and index a retriever), ``retriever`` (an object), ``run``
    (given rows) and ``framework`` (another framework's retriever, asked every query) is what
    produces the run; ``description`` is what reports show.
    """

    name: str
    description: str
    spec: str | None = None
    retriever: Any = None
    run: pd.DataFrame | None = field(default=None, repr=False)
    framework: Adapted | None = field(default=None, repr=False)

    def fresh_retriever(self) -> Any:
        """A new, unindexed retriever with this system's parameters (a given object is never modified)."""
        from rankscope.retrieval.registry import make_retriever

        if self.spec is not None:
            return make_retriever(self.spec)
        if self.framework is not None:
            raise RankscopeError(
                f"system {self.name!r} is a {self.framework.label} retriever, indexed by its framework: "
                "rankscope cannot re-index or tune it"
            )
        if self.retriever is None:
            raise RankscopeError(f"system {self.name!r} is a run: it has no retriever to index or tune")
        return type(self.retriever)(**self.retriever.get_params())

    @property
    def is_run(self) -> bool:
        """True for a run given as rows or a file: nothing to index, no scores for new candidates."""
        return self.run is not None

    @property
    def indexed_here(self) -> bool:
        """True when rankscope indexes it (a spec, a retriever object); False for a run and for another
        framework's retriever, whose description says what was given."""
        return self.spec is not None or self.retriever is not None

    @property
    def may_fork(self) -> bool:
        """True when its run may be made in a child forked from this process (:mod:`rankscope.core.forked`):
        not another framework's retriever, whose clients, connection pools and event loops are this process's."""
        return self.framework is None


@dataclass(frozen=True)
class SystemRun:
    """A named system's run on a dataset, and, when a retriever made it, that retriever (kept for
    scoring candidates later: the analyzer that explains recall losses, the sampled protocol) and its
    ``diagnostics()`` taken right after the search (ANN recall, out-of-vocabulary rates).
    ``description`` is what reports and the provenance show (:meth:`described`); ``notes`` what the
    run check found."""

    name: str
    run: pd.DataFrame
    retriever: Any = None
    diagnostics: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    notes: tuple[str, ...] = ()

    def described(self) -> str:
        """The description, else the retriever's full spec, else the run's size."""
        if self.description:
            return self.description
        if self.retriever is not None:
            return self.retriever.spec()
        return f"run given in Python: {len(self.run)} rows, {self.run['query_id'].nunique()} queries"


def descriptions(systems: Mapping[str, System]) -> dict[str, str]:
    """Name -> description, as the provenance record keeps them."""
    return {name: system.description for name, system in systems.items()}


def resolve_systems(systems: Mapping[str, SystemLike] | Sequence[SystemLike]) -> dict[str, System]:
    """Name -> :class:`System` from a mapping, or from a list whose items are named by :func:`system_name`."""
    if isinstance(systems, (str, os.PathLike, pd.DataFrame)) or not isinstance(systems, (Mapping, Sequence)):
        raise RankscopeError(f"systems: expected a mapping name -> system or a list, got {type(systems).__name__}")
    if isinstance(systems, Mapping):
        return named_systems(list(systems.items()))
    return named_systems([(system_name(system), system) for system in systems])


def named_systems(pairs: Sequence[tuple[str, SystemLike]]) -> dict[str, System]:
    """Name -> :class:`System` from (name, system) pairs, in their order.

    Refuses no systems, a name given twice, and names that would share an output file name.
    """
    check_names([name for name, _ in pairs], "system")
    return {name: resolve_system(name, system) for name, system in pairs}


def system_name(system: SystemLike) -> str:
    """The name a system gets when none is given: its spec, or its run file's name."""
    if isinstance(system, str):
        return system
    if isinstance(system, os.PathLike):
        return Path(system).name
    if framework_of(system) is not None:
        raise RankscopeError(
            f"a {type(system).__name__} needs a name: pass a mapping name -> system, e.g. {{'langchain': retriever}}"
        )
    spec = getattr(system, "spec", None)
    if callable(spec):
        return spec()
    raise RankscopeError(f"a {type(system).__name__} needs a name: pass a mapping name -> system")


def resolve_system(name: str, system: SystemLike) -> System:
    """One system as a :class:`System` (a spec is checked now, so a typo fails before any indexing)."""
    from rankscope.retrieval.base import Retriever
    from rankscope.retrieval.registry import make_retriever

    if isinstance(system, str):
        try:
            retriever = make_retriever(system)
        except RankscopeError as exc:
            if Path(system).is_file():
                raise RankscopeError(
                    f"{exc}; to use the run file {system!r}, pass Path({system!r}) or --run NAME=PATH"
                ) from None
            raise
        return System(name, retriever.spec(), spec=system)
    if isinstance(system, Retriever):
        return System(name, system.spec(), retriever=system)
    if framework_of(system) is not None:  # before the tables: a Haystack component has a to_dict
        adapted = system if isinstance(system, Adapted) else adapt(system)
        return System(name, adapted.describe(), framework=adapted)
    if (
        isinstance(system, Mapping)
        or callable(getattr(system, "to_dict", None))
        and not isinstance(system, pd.DataFrame)
    ):
        system = as_table(system, "run", f"run {name!r}")
    if isinstance(system, pd.DataFrame):
        run = validate(system, "run", f"run {name!r}")
        return System(name, f"run DataFrame: {len(run)} rows, {run['query_id'].nunique()} queries", run=run)
    if isinstance(system, os.PathLike):
        path = Path(system)
        run = read_run_file(path, getattr(system, "columns", None))
        return System(name, f"run file {path} (sha256 {sha256_of(path)})", run=run)
    raise RankscopeError(
        f"system {name!r}: expected a retriever spec, a Retriever, a run DataFrame, a run file path or a "
        f"LangChain, LlamaIndex, Haystack or PyTerrier retriever, got {type(system).__name__}"
    )


def brief_description(description: str) -> str:
    """What the terminal shows of a system's description (files and the provenance keep it whole): a
    spec with only its parameters that differ from the defaults, a run file's SHA-256 cut to 12 digits."""
    from rankscope.retrieval.registry import brief_spec

    run_file = re.fullmatch(r"run file (.*) \(sha256 ([0-9a-f]{64})\)", description)
    if run_file:
        return f"run file {run_file[1]} (sha256 {run_file[2][:12]}...)"
    if description.startswith("run "):
        return description
    try:
        return brief_spec(description)
    except RankscopeError:  # a Retriever object whose parameters no spec holds: shown whole
        return description


def read_run_file(path: Path, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A run file in any format rankscope reads (TREC, MS MARCO, Parquet, JSONL/CSV/TSV with ``columns``)."""
    from rankscope.corpora.foreign import read_run

    return read_run(path, columns)


def sha256_of(path: Path) -> str:
    """The file's SHA-256 in hex, read in chunks (runs reach gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def produce_run(system: System, dataset: Dataset, depth: int | None) -> SystemRun:
    """The system's run on ``dataset`` to ``depth``: search with a retriever (to
    :data:`~rankscope.workflows.common.runs.SEARCH_DEPTH` when ``depth`` is None), or check a given
    run and cut it to ``depth`` only when one is given (a run file is scored as given, as
    ``rankscope evaluate`` scores it)."""
    from rankscope.workflows.common.runs import SEARCH_DEPTH

    if system.is_run:
        run, notes = checked_run(system.name, system.run, dataset, depth)
        return SystemRun(system.name, run, description=system.description, notes=notes)
    if system.framework is not None:
        asked, said = framework_run(system.name, system.framework, dataset, SEARCH_DEPTH if depth is None else depth)
        run, notes = checked_run(system.name, asked, dataset, depth)
        return SystemRun(system.name, run, description=system.description, notes=said + notes)
    if not dataset.has_corpus:
        raise RankscopeError(
            f"system {system.name!r} is a retriever, which needs a corpus to index; {dataset.name!r} holds "
            "judgments only: give runs (--run NAME=PATH, or run tables in Python)"
        )
    with phase("index"):
        retriever = system.fresh_retriever().index(dataset.corpus)
    with phase("search"):
        run = retriever.search(dataset.queries, k=SEARCH_DEPTH if depth is None else depth)
    diagnostics = retriever.diagnostics() if hasattr(retriever, "diagnostics") else {}
    notes = tuple(retriever.notes()) if hasattr(retriever, "notes") else ()
    return SystemRun(system.name, run, retriever, diagnostics, system.description, notes)


def _documents_of_chunks(
    run: pd.DataFrame, known: np.ndarray, dataset: Dataset
) -> tuple[pd.DataFrame, np.ndarray, str]:
    """A chunk run (ids ``DOC#N`` naming the corpus' documents) as a document run by MaxP, a
    document scored by its best retrieved chunk, with the note saying so; any other run unchanged."""
    from rankscope.evaluation.chunk_runs import aggregate_run, chunks_of_ids

    chunks = chunks_of_ids(run["doc_id"])
    if chunks is None or not chunks["doc_id"].isin(dataset.corpus["doc_id"]).any():
        return run, known, ""
    documents = aggregate_run(run, chunks, "maxp")
    note = (
        f"a chunk run (ids DOC#N: {len(chunks)} chunks of {chunks['doc_id'].nunique()} documents), "
        "scored per document by MaxP: a document's score is its best retrieved chunk's"
    )
    return documents, documents["doc_id"].isin(dataset.corpus["doc_id"]).to_numpy(), note


def checked_run(
    name: str, run: pd.DataFrame, dataset: Dataset, depth: int | None
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The run in tie-rule order cut to ``depth`` per query (None: not cut), and what a reader must know about it.

    Refused: a run sharing no query with the qrels, or naming no document of the corpus
    (a run for another collection: every number would be 0). Reported with counts:
    run queries the qrels lack (ignored, as trec_eval does), qrels queries the run lacks
    (they score 0), documents the corpus lacks (never relevant), rows beyond ``depth``.
    """
    from rankscope.evaluation.coverage import coverage_notes

    ordered = sort_run(run[["query_id", "doc_id", "score"]])
    try:
        notes = coverage_notes(dataset.qrels, ordered)  # the query rules of ``rankscope evaluate``
    except RankscopeError as exc:
        raise RankscopeError(f"run {name!r} on {dataset.name!r}: {exc}") from None
    if not dataset.has_corpus:  # judgments only: no document list to check the run against
        known = np.ones(len(ordered), dtype=bool)
    else:
        known = ordered["doc_id"].isin(dataset.corpus["doc_id"]).to_numpy()
    if not known.any():
        ordered, known, note = _documents_of_chunks(ordered, known, dataset)
        notes += [note] if note else []
    if not known.any():
        raise RankscopeError(
            f"run {name!r} names no document of the corpus of {dataset.name!r} "
            f"(e.g. {ordered['doc_id'].iloc[0]!r}): it is a run for another collection"
        )
    unknown = int((~known).sum())
    if unknown:
        notes.append(
            f"{unknown} of {len(ordered)} rows name documents the corpus lacks "
            f"({np.unique(ordered['doc_id'].to_numpy()[~known]).size} distinct; never relevant)"
        )
    if depth is None:
        return ordered, tuple(notes)
    deep = ordered["rank"].to_numpy() > depth
    if deep.any():
        notes.append(f"{int(deep.sum())} rows below rank {depth} were cut (depth {depth})")
        ordered = ordered[~deep].reset_index(drop=True)
    return ordered, tuple(notes)
