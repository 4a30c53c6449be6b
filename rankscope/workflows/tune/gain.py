"""An error bar on a tuned gain: is the cross-validated gain over the defaults more than noise?

Each query's held-out value (parameters chosen without it) is paired with its value
at the defaults. The paired differences get a percentile bootstrap interval of their
mean and a two-sided paired randomization (sign-flip) test, both from
:mod:`rankscope.evaluation.significance` with the workflow's seed.

A sign-flip test over n queries whose values differ cannot give a p-value below
2 / 2**n (the observed signs and their mirror image are the two most extreme of
2**n patterns); the Wilcoxon signed-rank test has the same floor. With 5 or fewer
differing queries no such test can reach p < 0.05, and we say so.

The gain also moves with the fold seed (which queries share a fold). With repeated
cross-validation each query's held-out value is its mean over the fold seeds, and each
seed's gain is kept: a gain whose sign changes from one fold seed to another is within
noise whatever the test over queries says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from rankscope.evaluation.marks import ALPHA

CONFIDENCE = 0.95
RESAMPLES = 10_000


@dataclass(frozen=True)
class GainTest:
    """Paired comparison of held-out values with the defaults' values on the same queries."""

    n_queries: int
    n_differing: int
    gain: float
    ci_low: float
    ci_high: float
    p_value: float
    confidence: float = CONFIDENCE
    alpha: float = ALPHA
    seed_gains: tuple[float, ...] = ()
    """The cross-validated gain under each fold seed (one per repeat)."""

    @property
    def seed_sd(self) -> float | None:
        """Standard deviation (n - 1) of the gain over the fold seeds; None with fewer than two."""
        return None if len(self.seed_gains) < 2 else float(np.std(self.seed_gains, ddof=1))

    @property
    def seed_stable(self) -> bool:
        """Does every fold seed give a gain of the pooled gain's sign (nonzero)?"""
        return all(np.sign(g) == np.sign(self.gain) != 0 for g in self.seed_gains)

    def spread(self) -> str:
        """``sd 0.0075 over 5 fold seeds (+0.0031 to +0.0212)``; empty with one seed."""
        if self.seed_sd is None:
            return ""
        low, high = min(self.seed_gains), max(self.seed_gains)
        return f"sd {self.seed_sd:.4f} over {len(self.seed_gains)} fold seeds ({low:+.4f} to {high:+.4f})"

    @property
    def smallest_p(self) -> float:
        """The smallest two-sided p-value a sign-flip or signed-rank test can give on these queries."""
        return min(1.0, 2.0 ** (1 - self.n_differing))

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    def interval(self) -> str:
        return f"{self.confidence:.0%} CI [{self.ci_low:+.4f}, {self.ci_high:+.4f}]"

    def verdict(self) -> str:
        """The result in words."""
        if not self.significant:
            return "within noise: the tuned parameters may do no better than the defaults on new queries"
        if len(self.seed_gains) > 1 and not self.seed_stable:
            return "within noise: the gain's sign changes with the fold seed"
        return "more than noise: a real gain" if self.gain > 0 else "more than noise: a real loss"

    def warning(self) -> str | None:
        """A note when too few queries differ for any sign-flip or signed-rank test to reach ``alpha``."""
        if self.smallest_p < self.alpha:
            return None
        return (
            f"only {self.n_differing} of {self.n_queries} queries differ from the defaults: no paired "
            f"randomization or Wilcoxon test can reach p < {self.alpha:g} with so few "
            f"(the smallest possible p is {self.smallest_p:.4f}); more queries are needed to tell"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "seed_gains": list(self.seed_gains),
            "seed_sd": self.seed_sd,
            "significant": self.significant,
            "test": "paired randomization, two-sided",
        }


def gain_test(held_out: pd.Series, defaults: pd.Series, seed: int = 0, seed_gains: Sequence[float] = ()) -> GainTest:
    """Bootstrap CI and randomization p of mean(held_out - defaults), paired on query_id; ``seed_gains``:
    the gain under each fold seed, when ``held_out`` is the mean over several."""
    from rankscope.evaluation.significance import align, bootstrap_ci, randomization_test

    table = align({"held_out": held_out, "defaults": defaults})
    tuned, base = table["held_out"].to_numpy(), table["defaults"].to_numpy()
    low, high = bootstrap_ci(tuned, base, n_resamples=RESAMPLES, confidence=CONFIDENCE, seed=seed)
    return GainTest(
        n_queries=len(table),
        n_differing=int(np.count_nonzero(tuned != base)),
        gain=float(np.mean(tuned - base)),
        ci_low=low,
        ci_high=high,
        p_value=randomization_test(tuned, base, n_permutations=RESAMPLES, seed=seed),
        seed_gains=tuple(float(g) for g in seed_gains),
    )
