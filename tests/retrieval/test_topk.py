"""Top-k selection agrees with a full sort by the tie rule, ties at the cut included."""

from __future__ import annotations

import numpy as np

from rankscope.retrieval.topk import top_k


def test_top_k_equals_full_sort_on_random_rows_with_many_ties() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        values = rng.integers(0, 6, size=n).astype(np.float64)  # few distinct scores: ties everywhere
        positions = rng.permutation(200)[:n]
        doc_id_rank = rng.permutation(200)
        k = int(rng.integers(1, 15))
        chosen = top_k(values, positions, k, doc_id_rank)
        # reference: sort everything by (score desc, doc id rank desc) and keep the first k
        order = sorted(range(n), key=lambda i: (-values[i], -doc_id_rank[positions[i]]))[:k]
        assert chosen.tolist() == order  # the same k, in run order
