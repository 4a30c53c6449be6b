"""The column contracts every table in rankscope follows, validated at the door.

Column names are the ones ir_measures uses. IDs are always strings (so ``"007"``
and ``"7"`` stay different documents), relevance is an integer (graded and
negative labels allowed), scores are float64.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.errors import SchemaError
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.checks import INTEGER

if TYPE_CHECKING:
    import pandas as pd

CORPUS_COLUMNS = ("doc_id", "title", "text")
QUERY_COLUMNS = ("query_id", "text")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
RUN_COLUMNS = ("query_id", "doc_id", "score", "rank")

_ID_COLUMNS = ("doc_id", "query_id")
_ASCII_DIGIT_RUNS = re.compile("([0-9]+)")
_TEXT_THEN_NUMBER = re.compile("([^0-9]*)([0-9]+)")
_TEXT_COLUMNS = ("title", "text")

KINDS: Mapping[str, tuple[str, ...]] = {
    "corpus": CORPUS_COLUMNS,
    "queries": QUERY_COLUMNS,
    "qrels": QRELS_COLUMNS,
    "run": RUN_COLUMNS,
}
KIND = Param(str, choices=tuple(KINDS), name="kind")
"""The ``kind`` argument of the functions that read or check one table."""


@check_arguments(kind=KIND)
def validate(frame: pd.DataFrame, kind: str, source: str = "<DataFrame>") -> pd.DataFrame:
    """Return a new, normalised frame with exactly the columns of ``kind``.

    - missing required columns raise :class:`SchemaError` naming what was found;
    - ``title`` may be absent from a corpus (filled with ""), ``rank`` from a run
      (computed from the scores, ties broken by doc_id descending as trec_eval does);
    - IDs become strings, relevance int64, score float64; nulls are refused.

    The input frame is never modified.
    """
    import pandas as pd

    if isinstance(frame, pd.DataFrame):
        normal = _already_normal(frame, kind)  # a table validated before (a workflow checks one many times)
        if normal is not None:
            return normal
    return _validated(frame, kind, source)


def _already_normal(frame: pd.DataFrame, kind: str) -> pd.DataFrame | None:
    """What :func:`_validated` gives ``frame``, made at the cost of a column selection, when each of its
    columns is already of the type validation gives and holds no missing (or infinite) value; else None."""
    import pandas as pd

    strings, columns = string_dtype(), frame.columns
    if not isinstance(strings, pd.StringDtype):  # object columns may hold anything: checked cell by cell
        return None
    if isinstance(columns, pd.MultiIndex) or not columns.is_unique or columns.name is not None or frame.attrs:
        return None
    wanted = KINDS[kind]
    for col in wanted:
        if col not in columns:
            return None
        values = frame[col]
        if col in _ID_COLUMNS or col in _TEXT_COLUMNS:
            if values.dtype != strings or values.hasnans:
                return None
        elif col == "score":
            if values.dtype != np.float64 or not np.isfinite(values.to_numpy()).all():
                return None
        elif values.dtype != np.int64:  # relevance, rank
            return None
    out = frame[list(wanted)]  # a new frame: the input is never modified
    index = out.index
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 and index.name is None):
        out = out.reset_index(drop=True)
    return out


def _validated(frame: pd.DataFrame, kind: str, source: str) -> pd.DataFrame:
    """:func:`validate`, column by column."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise SchemaError(f"{source}: expected a pandas DataFrame for {kind}, got {type(frame).__name__}")
    wanted = KINDS[kind]
    optional = {"corpus": {"title"}, "run": {"rank"}}.get(kind, set())
    missing = [c for c in wanted if c not in frame.columns and c not in optional]
    if missing:
        raise SchemaError(
            f"{source}: {kind} table is missing column(s) {missing}; "
            f"expected {list(wanted)}, found {list(map(str, frame.columns))}"
        )
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for col in wanted:
        if col not in frame.columns:
            continue
        values = frame[col].reset_index(drop=True)
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise SchemaError(f"{source}: {kind} column {col!r} has a missing value at row {row}")
        if col in _ID_COLUMNS or col in _TEXT_COLUMNS:
            out[col] = as_strings(values)
        elif col == "relevance":
            out[col] = _as_integer(values, col, kind, source)
        elif col == "score":
            out[col] = _as_float(values, col, kind, source)
        elif col == "rank":
            out[col] = _as_integer(values, col, kind, source)
    if kind == "corpus" and "title" not in frame.columns:
        out.insert(1, "title", "")
    if kind == "run" and "rank" not in frame.columns:
        out["rank"] = trec_ranks(out)
    return out[list(wanted)]


def string_dtype() -> Any:
    """The dtype of every id and text column rankscope makes: pandas' ``str`` kept as Python objects.

    pandas 3 infers ``str`` for text and stores it in Arrow whenever pyarrow is importable
    (``mode.string_storage`` ``auto``; ``datasets`` brings pyarrow), in Python objects otherwise. The
    values are the same, but an Arrow column gives a new ``str`` object per row each time it is read as
    objects, so equal ids are no longer one object and evaluation's coding by object falls back to
    hashing every row (3x slower at 1M rows). Storage ``python`` makes the tables the same with and
    without pyarrow. pandas before 3 does not infer ``str``: ``object`` there.
    """
    import pandas as pd

    inferred = pd.Series(["x"]).dtype
    if isinstance(inferred, pd.StringDtype):
        return pd.StringDtype("python", na_value=inferred.na_value)
    return np.dtype(object)


def as_strings(values: pd.Series | np.ndarray) -> pd.Series:
    """``values`` as a column of :func:`string_dtype` (non-strings written with ``str``, as
    ``astype(str)`` does); equal strings of an Arrow column become one object each."""
    import pandas as pd

    series = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage != "python":
        codes, distinct = pd.factorize(series, use_na_sentinel=False)
        series = pd.Series(np.asarray(distinct, dtype=object)[codes], index=series.index, dtype=object)
    dtype = string_dtype()
    return series.astype(str if dtype == np.dtype(object) else dtype)


def string_ids(table: pd.DataFrame) -> pd.DataFrame:
    """A new table whose ``query_id`` and ``doc_id`` columns are :func:`as_strings` (a reader's last step)."""
    return table.assign(**{column: as_strings(table[column]) for column in _ID_COLUMNS if column in table.columns})


def natural_order(ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Positions that put ids in natural order ("2" before "10", "q9" before "q10"), for tables people read.

    Digit runs compare as numbers and other runs as text; ids equal that way ("01", "1") keep byte order.
    Only for display: evaluation and the tie rule never depend on it.
    """

    values = [str(value) for value in ids]
    keys = _one_number_keys(values) or [_natural_key(value) for value in values]
    return np.array(sorted(range(len(values)), key=keys.__getitem__), dtype=np.int64)


def _natural_key(value: str) -> tuple:
    runs = _ASCII_DIGIT_RUNS.split(value)  # text, digits, text, digits, ...: odd positions are digits
    return (tuple((0, int(r), "") if i % 2 else (1, 0, r) for i, r in enumerate(runs) if r), value)


def _one_number_keys(values: list[str]) -> list[tuple[str, int, str]] | None:
    """Keys in :func:`_natural_key`'s order when every id is text then one number (``q12``, ``301``, the
    common shape), else None: one flat tuple an id, a third of the time (10^5 query ids: 1.03 -> 0.35 s)."""
    keys = []
    for value in values:
        match = _TEXT_THEN_NUMBER.fullmatch(value)
        if match is None:
            return None
        keys.append((match[1], int(match[2]), value))
    return keys


def trec_ranks(run: pd.DataFrame) -> np.ndarray:
    """1-based ranks per query: score descending, ties by doc_id descending (trec_eval's rule)."""
    order, ranks = _tie_order(run)
    result = np.empty(len(run), dtype=np.int64)
    result[order] = ranks
    return result


def sort_run(run: pd.DataFrame) -> pd.DataFrame:
    """A new run in tie-rule order within each query, with ``rank`` recomputed to match.

    The reference implementation of the tie rule: the fast paths elsewhere
    (``evaluation.ranking._ranks``, ``retrieval.topk``, ``evaluation.loo.full_ranking_run``)
    cite it and tests/test_tie_rule.py checks each against it.

    Queries keep the order of their first appearance. ``run`` needs ``query_id``,
    ``doc_id`` and ``score``; the result is the order and the ranks trec_eval uses
    when it scores a run file, whatever ranks the file states, ids as :func:`as_strings` makes them.
    """
    order, ranks = _tie_order(run)
    out = run if order is None else run.iloc[order]
    out = string_ids(out.reset_index(drop=True))
    out["rank"] = ranks
    return out


def _tie_order(run: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray]:
    """Row positions in (query first appearance, score desc, doc_id desc) order and each row's rank.

    The positions are ``None`` when the rows are already in that order (the common
    case for run files), which saves reordering large runs. Doc ids are compared
    only within runs of tied scores, so a run with a million distinct documents
    never has to sort all of them.
    """
    import pandas as pd

    n = len(run)
    query_codes = pd.factorize(run["query_id"].to_numpy())[0]
    scores = run["score"].to_numpy(dtype=np.float64)
    order = np.arange(n)
    same_query = query_codes[1:] == query_codes[:-1]
    if not ((query_codes[1:] > query_codes[:-1]) | (same_query & (scores[1:] <= scores[:-1]))).all():
        order = np.lexsort((-scores, query_codes))
    order = _break_ties(order, query_codes[order], scores[order], run["doc_id"].to_numpy())
    sorted_codes = query_codes[order]
    new_query = np.ones(n, dtype=bool)
    new_query[1:] = sorted_codes[1:] != sorted_codes[:-1]
    starts = np.flatnonzero(new_query)
    block_start = np.repeat(starts, np.diff(np.append(starts, n)))
    ranks = np.arange(n, dtype=np.int64) - block_start + 1
    return (None if (order == np.arange(n)).all() else order), ranks


def _break_ties(order: np.ndarray, queries: np.ndarray, scores: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """Reorder each run of equal (query, score) rows by doc_id descending; ``order`` is not modified."""
    import pandas as pd

    tied = (queries[1:] == queries[:-1]) & (scores[1:] == scores[:-1])
    if not tied.any():
        return order
    in_run = np.zeros(len(order), dtype=bool)
    in_run[1:] |= tied
    in_run[:-1] |= tied
    rows = np.flatnonzero(in_run)
    run_ids = np.cumsum(np.concatenate([[True], ~tied[rows[1:] - 1]]))
    codes = pd.factorize(doc_ids[order[rows]], sort=True)[0]
    result = order.copy()
    result[rows] = order[rows][np.lexsort((-codes, run_ids))]
    return result


def _as_integer(values: pd.Series, col: str, kind: str, source: str) -> pd.Series:
    """Integers; text must be written as one (``"1e3"`` is refused, as every file reader refuses it)."""
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(values):
        text = values.astype(str)
        bad = ~text.str.fullmatch(INTEGER.pattern)
        numeric = pd.to_numeric(text.where(~bad, "0"))
    else:
        numeric = pd.to_numeric(values, errors="coerce")
        finite = numeric.fillna(0).to_numpy(dtype=float)
        bad = numeric.isna() | (numeric != np.floor(finite)) | (np.abs(finite) >= 2.0**63)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"{source}: {kind} column {col!r} must hold integers; row {row} has {_shown(values.iloc[row])}"
        )
    return numeric.astype(np.int64)


def _as_float(values: pd.Series, col: str, kind: str, source: str) -> pd.Series:
    import pandas as pd

    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() | ~np.isfinite(numeric.fillna(0).to_numpy(dtype=float))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"{source}: {kind} column {col!r} must hold finite numbers; row {row} has {_shown(values.iloc[row])}"
        )
    return numeric.astype(np.float64)


def _shown(value: object) -> str:
    """A value as the user wrote it (``1.5``, ``'x'``), not numpy's repr."""
    return repr(value.item() if isinstance(value, np.generic) else value)
