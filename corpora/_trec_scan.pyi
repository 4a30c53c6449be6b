"""Types of the compiled TREC scanner (``corpora/_trec_scan.c``), for the type checker."""

from typing import Any

import numpy as np
from typing_extensions import Buffer

# one entry per kept field: (int64 codes, distinct ids as bytes) for an id, float64 or int64 bytes for a number
def scan(data: Buffer, kinds: str, trailing: bool, /) -> list[Any] | None: ...
def repeats(query_codes: Buffer | np.ndarray, doc_codes: Buffer | np.ndarray, n_docs: int, /) -> bool | None: ...

# the judgments judged() reads: distinct query ids, n + 1 int64 offsets, each judgment's doc id, int64 labels
def judgments(query_ids: list[bytes], first: Buffer, doc_ids: list[bytes], labels: Buffer, /) -> object: ...

# None on doubt, False when queries interleave, else (query ids, their judged codes, row query, row score,
# judged row query, rank, label, score, rows read)
def judged(
    data: Buffer, judgments: object, ignore_self: bool, /
) -> tuple[list[bytes], bytes, bytes, bytes, bytes, bytes, bytes, bytes, int] | bool | None: ...
