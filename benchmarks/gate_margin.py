"""How often ``rankscope gate`` fails, and passes, a candidate exactly at the margin: the table of docs/intervals.md.

Populations of per-query differences: Cranfield's and CISI's ``tfidf - bm25`` on nDCG@10 (from
``RANKSCOPE_DATA``), and a synthetic IR-like one (half the queries unchanged, 30% small changes, 20%
large losses and gains, skewed to losses). Each is shifted to mean exactly ``-margin`` (and to 0, an equal
candidate, whose passing rate is the test's power); ``--reps``
samples (default 2,000) of N queries are drawn with replacement and decided by
:func:`rankscope.evaluation.noninferiority.at_margin_rates` at alpha = 0.05. Failing must be at most
0.05 (up to the simulation's error, 0.005 at 2,000); passing a candidate at the margin is the other error.
The same with ``--sequential`` (the confidence sequence's last interval, any N, any shape).

    nice -n 10 python benchmarks/gate_margin.py [--reps 2000] [--seed 43]
"""

from __future__ import annotations

import argparse
import time

from differences import collection_differences, synthetic_differences  # benchmarks/differences.py, beside this script

from rankscope.evaluation.noninferiority import at_margin_rates

SIZES = (10, 20, 30, 50, 100, 225)
MARGIN, ALPHA = 0.02, 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=43)
    args = parser.parse_args()
    start = time.process_time()
    populations = {"cranfield": collection_differences("cranfield"), "cisi": collection_differences("cisi")}
    populations["synthetic IR-like"] = synthetic_differences(5000, args.seed)
    print(
        "| differences | N | fail at the margin | pass at the margin | equal candidate passes | "
        "--sequential: fail at the margin | pass at the margin | equal candidate passes |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, population in populations.items():
        for n in SIZES:
            rates = at_margin_rates(population, n, MARGIN, ALPHA, args.reps, args.seed)
            equal = at_margin_rates(population, n, MARGIN, ALPHA, args.reps, args.seed, truth=0.0)
            anytime = at_margin_rates(population, n, MARGIN, ALPHA, args.reps, args.seed, sequential=True)
            anytime_equal = at_margin_rates(population, n, MARGIN, ALPHA, args.reps, args.seed, True, 0.0)
            cells = (
                rates["fail"],
                rates["pass"],
                equal["pass"],
                anytime["fail"],
                anytime["pass"],
                anytime_equal["pass"],
            )
            print(f"| {name} | {n} | " + " | ".join(f"{cell:.3f}" for cell in cells) + " |")
    print(f"\n{args.reps} samples a cell, margin {MARGIN}, alpha {ALPHA}; {time.process_time() - start:.1f} s CPU")


if __name__ == "__main__":
    main()
