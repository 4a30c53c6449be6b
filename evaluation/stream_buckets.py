"""A run not grouped by query, made into pieces of whole queries for :mod:`rankscope.evaluation.streaming`: its
rows spread over temporary bucket files by a CRC-32 of the query id (an external grouping: two passes over
the data, one write), then each bucket read whole. A problem found in a bucket is named at the user's
file and line (or Parquet row), never at the bucket's."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.corpora.formats import refuse_repeated_pairs
from rankscope.corpora.parquet_pieces import parquet_pieces, parquet_table, row_groups
from rankscope.corpora.trec import RUN_LAYOUT, CodedTable, coded_table, scanned_bytes, table_of_lines
from rankscope.corpora.trec_pieces import run_pieces


def trec_buckets(path: Path, piece_bytes: int, folder: Path) -> Iterator[CodedTable]:
    """The run spread over bucket files by a hash of the query id, then each bucket read whole. A bucket
    the line-by-line check refuses (a pair repeated in two pieces: each line was checked in its piece) is
    checked again under the run's name, its lines numbered as in the run (found by spreading it again, so
    only on the way to the error); the repeat named is the first of its bucket."""
    size = path.stat().st_size * (4 if str(path).endswith(".gz") else 1)
    count = max(2, -(-2 * size // piece_bytes))
    files = [folder / f"bucket{i}.txt" for i in range(count)]
    handles = [file.open("wb") for file in files]
    try:
        for lines, row_bucket, _ in _spread(path, piece_bytes, count):
            for bucket in np.unique(row_bucket):
                handles[bucket].write(b"\n".join(lines[row_bucket == bucket].tolist()) + b"\n")
    finally:
        for handle in handles:
            handle.close()
    for bucket, file in enumerate(files):
        if file.stat().st_size:
            raw = file.read_bytes()
            table = scanned_bytes(raw, RUN_LAYOUT)
            if table is None:
                try:
                    table = table_of_lines(file, RUN_LAYOUT, raw, 1)
                except FormatError:  # worded again with the run's name and line numbers, then raised
                    numbers = np.concatenate([at[of == bucket] for _, of, at in _spread(path, piece_bytes, count)])
                    table_of_lines(path, RUN_LAYOUT, raw, numbers)
                    raise
            yield table
        file.unlink()


def _spread(path: Path, piece_bytes: int, count: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per piece of the run: its non-blank lines, the bucket of each (a CRC-32 of its query id modulo
    ``count``) and its number in the file."""
    for piece in run_pieces(path, piece_bytes):
        split = piece.raw.split(b"\n")
        kept = np.array([bool(line.strip(b" \t\r")) for line in split])
        table = piece.table
        if np.count_nonzero(kept) != len(table):
            raise RankscopeError(f"{path}: cannot split the lines from line {piece.first_line} into buckets")
        bucket_of = np.array([zlib.crc32(name.encode()) % count for name in table.query_names], dtype=np.int64)
        lines = np.array(split, dtype=object)[kept]
        yield lines, bucket_of[table.query], piece.first_line + np.flatnonzero(kept)


def parquet_buckets(path: Path, piece_rows: int, folder: Path) -> Iterator[CodedTable]:
    """The Parquet run spread over bucket files by a CRC-32 of the query id, then each bucket read whole, a
    pair repeated in two pieces refused naming its row in the run (each row keeps its number in a column)."""
    from fastparquet import write

    count = 0
    files: list[Path] = []
    first_row = 0
    for piece in parquet_pieces(path, piece_rows):
        if not files:
            rows = sum(group.num_rows for group in row_groups(path))
            count = max(2, -(-2 * rows // piece_rows))
            files = [folder / f"bucket{i}.parquet" for i in range(count)]
        names, codes = np.unique(piece["query_id"].to_numpy(), return_inverse=True)
        bucket_of = np.array([zlib.crc32(name.encode()) % count for name in names], dtype=np.int64)[codes]
        numbered = piece[["query_id", "doc_id", "score"]].assign(row=first_row + np.arange(len(piece)))
        first_row += len(piece)
        for bucket in np.unique(bucket_of):
            part = numbered[bucket_of == bucket].reset_index(drop=True)
            write(str(files[bucket]), part, append=files[bucket].exists())
    for file in files:
        if file.exists():
            table = parquet_table(file)
            refuse_repeated_pairs(table, str(path), "row", table["row"].to_numpy())
            yield coded_table(table.drop(columns="row"), "run")
            file.unlink()
