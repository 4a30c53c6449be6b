"""Top-k selection over sparse score rows, consistent with the tie rule.

Only documents that match at least one query term (the stored entries of a
score row) are candidates, so a query never returns arbitrary non-matching
documents and the work is proportional to the candidates, not the corpus.
At the k-th place, ties are cut by doc_id descending, as the run is ordered
(:func:`retrieval.base.make_run`), so the same k documents come back every time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def top_k(values: np.ndarray, positions: np.ndarray, k: int, doc_id_rank: np.ndarray) -> np.ndarray:
    """Indices into ``values`` of the k best, in run order (score desc, then doc id desc)."""
    n = len(values)
    if n <= k:
        chosen = np.arange(n)
    else:
        kth = np.partition(values, n - k)[n - k]  # cheaper than argpartition: no index array to carry
        chosen = np.flatnonzero(values >= kth)
        if len(chosen) > k:  # a tie straddles the cut: settle it by doc id
            above = chosen[values[chosen] > kth]
            tied = chosen[values[chosen] == kth]
            best_tied = tied[np.argsort(-doc_id_rank[positions[tied]], kind="stable")[: k - len(above)]]
            chosen = np.concatenate([above, best_tied])
    return chosen[np.lexsort((-doc_id_rank[positions[chosen]], -values[chosen]))]


def top_k_rows(scores: sp.csr_matrix, k: int, doc_id_rank: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For each row of a CSR score matrix: (document positions, scores) of its top k entries, in run order."""
    indptr, indices, data = scores.indptr, scores.indices, scores.data
    positions, values = [], []
    for start, end in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
        row_pos, row_val = indices[start:end], data[start:end]
        chosen = top_k(row_val, row_pos, k, doc_id_rank)
        positions.append(row_pos[chosen])
        values.append(row_val[chosen])
    return positions, values
