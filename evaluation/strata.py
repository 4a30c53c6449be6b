"""Stratified sampling with known inclusion probabilities, shared by every sampler of pairs to label:
``collection sample`` (pooled pairs by rank band) and the sample outside the pool
(:mod:`rankscope.evaluation.outside_pool`). One allocation rule and one estimator, so both samplers'
probabilities mean the same thing.

The budget is shared out one pair at a time to the stratum with the highest ``weight / (drawn + 1)``
(proportional allocation, D'Hondt), with ``weight = size / log2(1 + top rank of the stratum)`` so top
ranks are sampled more, every stratum first getting one pair when the budget allows and none more
pairs than it has; ties go to the stratum listed first. Pairs are then drawn by simple random
sampling without replacement within each stratum, so a pair's inclusion probability is exactly
``drawn / size`` of its stratum.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np


def allocate(sizes: Sequence[int], tops: Sequence[int], budget: int) -> list[int]:
    """Pairs drawn per stratum (see the module doc); ``tops`` is each stratum's top rank."""
    drawn = [0] * len(sizes)
    left = min(budget, sum(sizes))
    if left >= sum(1 for size in sizes if size):
        for i, size in enumerate(sizes):
            drawn[i] = 1 if size else 0
        left -= sum(drawn)
    weights = [size / math.log2(1 + top) for size, top in zip(sizes, tops)]
    queue = [(-weights[i] / (drawn[i] + 1), i) for i in range(len(sizes)) if drawn[i] < sizes[i]]
    heapq.heapify(queue)
    while left > 0 and queue:
        _, i = heapq.heappop(queue)
        drawn[i] += 1
        left -= 1
        if drawn[i] < sizes[i]:
            heapq.heappush(queue, (-weights[i] / (drawn[i] + 1), i))
    return drawn


def horvitz_thompson(values: np.ndarray, probabilities: np.ndarray) -> float:
    """The Horvitz-Thompson estimate of a population total from a sample's values and inclusion probabilities."""
    return float(np.sum(np.asarray(values, dtype=float) / np.asarray(probabilities, dtype=float)))
