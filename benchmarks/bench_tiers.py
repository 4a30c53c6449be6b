"""Time rank intervals and tiers (rankscope.evaluation.tiers.rank_tiers) on many systems.

Per-query values of ``--systems`` systems on ``--queries`` queries (a query difficulty shared by
every system plus each system's own noise, means spread over 0.05), then one timed call with
``--resamples`` paired bootstrap resamples: intervals, 44,850 pair tests for 300 systems, Holm
over all of them, tiers. The median of ``--repeats`` calls is printed, after one untimed call
that imports scipy.

    python benchmarks/bench_tiers.py                          # 300 x 1,000 x 1,000 (issue 26's target: < 5 s)
    python benchmarks/bench_tiers.py --systems 30 --queries 50
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from rankscope.evaluation.tiers import rank_tiers


def per_query(systems: int, queries: int, seed: int) -> pd.DataFrame:
    """Queries x systems values in [0, 1], deterministic for a seed."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 3, size=(queries, 1))
    values = np.clip(difficulty + np.linspace(0, 0.05, systems) + rng.normal(0, 0.15, (queries, systems)), 0, 1)
    return pd.DataFrame(
        values, index=[f"q{i}" for i in range(queries)], columns=[f"system{k:03d}" for k in range(systems)]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=300)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = per_query(args.systems, args.queries, args.seed)
    rank_tiers(table.iloc[:20, :3], n_resamples=10)  # imports scipy, untimed
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        found = rank_tiers(table, n_resamples=args.resamples, seed=args.seed)
        seconds.append(time.perf_counter() - start)
    print(
        f"rank_tiers: {args.systems} systems x {args.queries} queries x {args.resamples} resamples: "
        f"median {statistics.median(seconds):.2f} s of {args.repeats} (min {min(seconds):.2f}, "
        f"max {max(seconds):.2f}); {len(found.pairs)} pairs, {found.table['tier'].max()} tiers, "
        f"widest rank interval {int((found.table['rank_high'] - found.table['rank_low']).max()) + 1} ranks"
    )


if __name__ == "__main__":
    main()
