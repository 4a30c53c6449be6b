"""Interaction logs (user, item, rating, timestamp), the input of recommender evaluation.

The table has the columns :data:`INTERACTION_COLUMNS`: ``user_id`` and
``item_id`` are strings (as every ID in rankscope), ``rating`` float64 and
``timestamp`` int64. Repeated (user, item) pairs are allowed: implicit-feedback
logs repeat clicks; the leave-one-out split decides what to do with them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.errors import FormatError, SchemaError
from rankscope.core.fileio import PathLike, read_lines
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.checks import INTEGER, integer_problem

INTERACTION_COLUMNS = ("user_id", "item_id", "rating", "timestamp")
UNLISTED_CHOICES = ("error", "drop")


def read_interactions(path: PathLike, *, sep: str = "\t") -> pd.DataFrame:
    """Read ``user<sep>item<sep>rating<sep>timestamp`` lines (MovieLens ``u.data``).

    Strict: every line needs exactly four fields, non-empty ids, a finite
    numeric rating and an integer timestamp; otherwise :class:`FormatError`
    names the file, the line and the problem. Trailing spaces and tabs at the
    end of a line are ignored (as trec_eval does); empty lines are errors.
    """
    lines = read_lines(path)
    fields: list[list[str]] = []
    for number, line in enumerate(lines, start=1):
        parts = line.rstrip(" \t").split(sep)
        if len(parts) != len(INTERACTION_COLUMNS):
            raise FormatError(
                path,
                number,
                f"expected 4 fields separated by {sep!r} (user, item, rating, timestamp), found {len(parts)}: {line!r}",
            )
        for name, value in zip(("user id", "item id"), parts):
            if not value.strip():
                raise FormatError(path, number, f"empty {name}: {line!r}")
        fields.append(parts)
    if not fields:
        raise FormatError(path, None, "no interactions: the file is empty")
    columns = list(zip(*fields))
    ratings = _numbers(columns[2], path, "rating")
    timestamps = _integers(columns[3], path, "timestamp")
    return pd.DataFrame(
        {
            "user_id": pd.Series(columns[0], dtype=object),
            "item_id": pd.Series(columns[1], dtype=object),
            "rating": ratings,
            "timestamp": timestamps,
        }
    )


@check_arguments(unlisted=Param(str, choices=UNLISTED_CHOICES))
def read_movielens(folder: PathLike, *, unlisted: str = "error") -> pd.DataFrame:
    """Read a MovieLens-100k folder's ``u.data``, checking its ids against ``u.user`` and ``u.item``.

    MovieLens numbers its users and items in ``u.user`` / ``u.item``; a rating
    by a user or of an item missing there is a damaged or edited file (copies
    circulate with an invented user ``0`` added). ``unlisted="error"`` (default)
    raises naming the first such line; ``unlisted="drop"`` leaves those lines
    out and says how many with a :class:`UserWarning`.
    """
    folder = Path(folder)
    data_path = folder / "u.data"
    frame = read_interactions(data_path)
    listed_users = frame["user_id"].isin(_first_fields(folder / "u.user"))
    listed_items = frame["item_id"].isin(_first_fields(folder / "u.item"))
    bad = ~(listed_users & listed_items).to_numpy()
    if not bad.any():
        return frame
    rows = np.flatnonzero(bad)
    first = int(rows[0])
    what = (
        f"user {frame['user_id'].iat[first]!r} is not listed in u.user"
        if not listed_users.iat[first]
        else f"item {frame['item_id'].iat[first]!r} is not listed in u.item"
    )
    lines = ", ".join(str(r + 1) for r in rows[:10]) + (", ..." if len(rows) > 10 else "")
    summary = f"{len(rows)} line(s) rate unlisted users or items (lines {lines})"
    if unlisted == "error":
        raise FormatError(data_path, first + 1, f"{what}; {summary}; pass unlisted='drop' to leave them out")
    warnings.warn(f"{data_path}: left out {summary}; first: {what}", UserWarning, stacklevel=2)
    return frame.loc[~bad].reset_index(drop=True)


def validate_interactions(frame: pd.DataFrame, source: str = "<DataFrame>") -> pd.DataFrame:
    """A normalised copy of an interaction table: ids str, rating float64, timestamp int64, no nulls."""
    if not isinstance(frame, pd.DataFrame):
        raise SchemaError(f"{source}: expected a pandas DataFrame of interactions, got {type(frame).__name__}")
    missing = [c for c in INTERACTION_COLUMNS if c not in frame.columns]
    if missing:
        raise SchemaError(
            f"{source}: interactions table is missing column(s) {missing}; "
            f"expected {list(INTERACTION_COLUMNS)}, found {list(map(str, frame.columns))}"
        )
    out = {}
    for col in INTERACTION_COLUMNS:
        values = frame[col].reset_index(drop=True)
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise SchemaError(f"{source}: interactions column {col!r} has a missing value at row {row}")
        if col in ("user_id", "item_id"):
            out[col] = values.astype(str)
            continue
        numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(numeric)
        if col == "timestamp":
            bad |= numeric != np.floor(np.nan_to_num(numeric))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            kind = "integers" if col == "timestamp" else "finite numbers"
            raise SchemaError(
                f"{source}: interactions column {col!r} must hold {kind}; row {row} has {values.iloc[row]!r}"
            )
        out[col] = numeric.astype(np.int64) if col == "timestamp" else numeric
    return pd.DataFrame(out)


def _numbers(values: tuple[str, ...], path: PathLike, name: str) -> np.ndarray:
    """Parse a column of numbers, naming the line of the first that is not a finite number."""
    parsed = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(parsed))
    if len(bad):
        row = int(bad[0])
        raise FormatError(path, row + 1, f"{name} {values[row]!r} is not a finite number")
    return parsed


def _integers(values: tuple[str, ...], path: PathLike, name: str) -> np.ndarray:
    """Parse a column of integers by the rule every reader shares (``1e3`` and ``4.5`` are not integers)."""
    text = pd.Series(values, dtype=object)
    bad = np.flatnonzero(~text.str.fullmatch(INTEGER.pattern).to_numpy(dtype=bool))
    if len(bad):
        row = int(bad[0])
        raise FormatError(path, row + 1, integer_problem(values[row], name) or "")
    return text.astype(np.int64).to_numpy()


def _first_fields(path: Path) -> set[str]:
    """The ids in the first ``|``-separated field of a MovieLens listing file.

    ``u.item`` is Latin-1 (accented titles), so only the id field is decoded, as ASCII.
    """
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    ids = set()
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        head = raw.split(b"|", 1)[0].strip()
        if not head:
            continue
        try:
            ids.add(head.decode("ascii"))
        except UnicodeDecodeError:
            raise FormatError(path, number, f"the id field {head!r} is not ASCII") from None
    return ids
