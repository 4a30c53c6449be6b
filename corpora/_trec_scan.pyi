"""Types of the compiled TREC scanner (``corpora/_trec_scan.c``), for the type checker."""

from typing import Any

import numpy as np
from typing_extensions import Buffer

# one entry per kept field: (int64 codes, distinct ids as bytes) for an id, float64 or int64 bytes for a number
def scan(data: Buffer, kinds: str, trailing: bool, /) -> list[Any] | None: ...
def repeats(query_codes: Buffer | np.ndarray, doc_codes: Buffer | np.ndarray, n_docs: int, /) -> bool | None: ...
