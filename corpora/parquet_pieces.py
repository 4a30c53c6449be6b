"""A Parquet run read in pieces of whole queries, row group by row group (fastparquet reads a row group
whole, so a group is the smallest read): each group checked as :func:`~rankscope.corpora.formats.read_parquet`
checks a whole file (errors name the file and the group), the rows cut where the query id changes, so that
a run grouped by query (as runs are written) comes in pieces holding whole queries; a (query, document)
pair twice is an error naming its row in the file. What ``rankscope evaluate --memory-budget`` reads
(:mod:`rankscope.evaluation.streaming`). Memory: the rows of one piece and one group at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.core.extras import require_extra
from rankscope.corpora.checks import empty_table
from rankscope.corpora.formats import refuse_repeated_pairs
from rankscope.corpora.tabular import Columns, from_frame

if TYPE_CHECKING:
    import pandas as pd


def parquet_pieces(path: Path, piece_rows: int, columns: Columns | None = None) -> Iterator[pd.DataFrame]:
    """The run table of the Parquet file at ``path`` in pieces of at least ``piece_rows`` rows (the last one
    shorter), each ending where the query id changes; a group of more than ``4 * piece_rows`` rows is
    refused (reading it would exceed the memory budget)."""
    import pandas as pd

    file = _opened(path)
    for number, group in enumerate(file.row_groups):
        if group.num_rows > 4 * piece_rows:
            raise RankscopeError(
                f"{path}: row group {number} holds {group.num_rows:,} rows, more than the memory budget lets "
                f"one read hold ({4 * piece_rows:,}); write the file with smaller row groups (pandas: "
                "to_parquet(..., row_group_size=N) with pyarrow, row_group_offsets=N with fastparquet) or give more memory"
            )
    held: pd.DataFrame | None = None
    first_row = 0
    for number, frame in enumerate(file.iter_row_groups()):
        table = from_frame(frame.reset_index(drop=True), "run", columns, source=f"{path}, row group {number}")
        held = table if held is None else pd.concat([held, table], ignore_index=True)
        query = held["query_id"].to_numpy()
        changes = np.flatnonzero(query[1:] != query[:-1])
        if len(held) < piece_rows or len(changes) == 0:
            continue
        cut = int(changes[-1]) + 1  # the last query's first row: it may go on in the next group
        piece, held = held.iloc[:cut], held.iloc[cut:].reset_index(drop=True)
        refuse_repeated_pairs(piece, str(path), "row", first_row)
        yield piece
        first_row += cut
    if held is not None and len(held):
        refuse_repeated_pairs(held, str(path), "row", first_row)
        yield held
    elif first_row == 0:
        raise empty_table(path, "run")


def row_groups(path: Path) -> list[Any]:
    """The row groups of the Parquet file at ``path`` (each has ``num_rows``)."""
    return list(_opened(path).row_groups)


def parquet_table(path: Path) -> pd.DataFrame:
    """The whole Parquet file at ``path`` as a table, through fastparquet."""
    return _opened(path).to_pandas()


def _opened(path: Path) -> Any:
    """fastparquet's ParquetFile of ``path``; a file that is not Parquet is a FormatError."""
    ParquetFile = require_extra("fastparquet", "parquet", f"{path}: reading Parquet in pieces").ParquetFile
    try:
        return ParquetFile(str(path))
    except Exception as exc:  # fastparquet raises its own types for a file that is not Parquet
        raise FormatError(path, None, f"not a valid Parquet file ({type(exc).__name__}: {exc})") from None
