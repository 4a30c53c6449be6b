"""Coverage of the confidence sequence when one looks after every label: the table of docs/intervals.md.

Populations of per-query differences: Cranfield's and CISI's ``tfidf - bm25`` on nDCG@10 (from
``RANKSCOPE_DATA``), a synthetic skewed one (half the queries unchanged, 30% small changes, 20% large
losses and gains), one of wins, ties and losses (-1, 0, 1 with probabilities 0.3, 0.3, 0.4) and one
centred at 0. For each, ``--sequences`` sequences (default 2,000) of ``--labels`` differences (default
500) drawn with replacement: the share whose every interval held the population's mean
(:func:`rankscope.evaluation.confidence_sequence.monitoring_coverage`), beside Student's t interval
recomputed after every label from the tenth on, and the stopping rule's decisions by the last label.

    nice -n 10 python benchmarks/confidence_sequence_coverage.py [--sequences 2000] [--labels 500] [--seed 43]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from differences import collection_differences, synthetic_differences  # benchmarks/differences.py, beside this script

from rankscope.evaluation.confidence_sequence import monitoring_coverage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=2000)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--seed", type=int, default=43)
    args = parser.parse_args()
    start = time.process_time()
    rng = np.random.default_rng(args.seed)
    populations = {
        "cranfield": collection_differences("cranfield"),
        "cisi": collection_differences("cisi"),
        "synthetic skewed": synthetic_differences(5000, args.seed),
        "wins/ties/losses": rng.choice([-1.0, 0.0, 1.0], size=5000, p=[0.3, 0.3, 0.4]),
    }
    centred = populations["synthetic skewed"]
    populations["centred at 0"] = np.clip(centred - centred.mean(), -1, 1)
    print(
        "| differences | mean | sequence covers at every label | t at every label (10th on) | t at the last | decided | wrong side |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, population in populations.items():
        found = monitoring_coverage(population, args.labels, args.sequences, 0.05, args.seed)
        print(
            f"| {name} | {found['truth']:+.4f} | {found['sequence']:.4f} | {found['t_every_label']:.4f} | "
            f"{found['t_last_label']:.4f} | {found['decided']:.3f} | {found['wrong_side']:.3f} |"
        )
    print(
        f"\n{args.sequences} sequences of {args.labels} labels a row, alpha 0.05; {time.process_time() - start:.1f} s CPU"
    )


if __name__ == "__main__":
    main()
