"""Holes in the judgments by rank band: how much of each run's ranking the qrels say anything about.

Every metric counts an unjudged document as non-relevant, so a run that retrieves what the pool
never saw is scored low for it. judged@10 shows the top; a run can be well judged there and almost
unjudged below, where recall@100 and map are made. :func:`judged_by_band` gives each run's judged
share in the bands 1-10, 11-100 and 101-1000, and :func:`hole_warnings` names the runs far below the
baseline's share in a band (:data:`FAR_BELOW`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

BANDS: tuple[tuple[int, int], ...] = ((1, 10), (11, 100), (101, 1000))
"""Rank bands (first, last rank, both counted)."""

FAR_BELOW = (0.5, 0.1)
"""A run's share in a band is far below the baseline's when it is under half of it **and** at least
0.1 lower: both, so neither a tiny share halved (0.04 against 0.08) nor a small gap between two
well-judged runs (0.85 against 0.95) is called a hole."""

BANDS_CAPTION = (
    "judged a-b = share of the documents a run put at ranks a to b that have any judgment for the "
    "query (negative labels count as judged), averaged over the qrels' queries that retrieved anything "
    "there; none when no query reached the band. Unjudged documents count as non-relevant in every "
    "metric, so a low share means the metrics may understate the run"
)


def band_name(band: tuple[int, int]) -> str:
    """The column of a band: ``judged 11-100``."""
    return f"judged {band[0]}-{band[1]}"


def band_metrics(bands: Sequence[tuple[int, int]] = BANDS) -> list[str]:
    """The metrics the bands' shares are made from (:func:`shares_from`)."""
    cutoffs = sorted({last for _, last in bands} | {first - 1 for first, _ in bands if first > 1})
    return [f"judged@{k}" for k in cutoffs] + ["num_ret"]


def shares_from(wide: pd.DataFrame, bands: Sequence[tuple[int, int]] = BANDS) -> dict[str, float]:
    """Each band's judged share from per-query values of :func:`band_metrics` (one row per query).

    Per query, judged documents at ranks a..b over documents retrieved there (from ``judged@k`` and
    ``num_ret``, trec_eval's order), averaged over the queries that retrieved anything at rank a or
    below; NaN for a band no query reached.
    """
    retrieved = wide["num_ret"].to_numpy()

    def shown(k: int) -> np.ndarray:
        return np.minimum(retrieved, k)

    def judged(k: int) -> np.ndarray:  # judged documents in the top k, whole numbers
        return np.zeros(len(wide)) if k == 0 else np.rint(wide[f"judged@{k}"].to_numpy() * shown(k))

    shares = {}
    for first, last in bands:
        there = shown(last) - shown(first - 1)
        reached = there > 0
        count = judged(last) - judged(first - 1)
        shares[band_name((first, last))] = float(np.mean(count[reached] / there[reached])) if reached.any() else np.nan
    return shares


def judged_by_band(qrels: object, run: object, bands: Sequence[tuple[int, int]] = BANDS) -> dict[str, float]:
    """The run's judged share in each band, by :func:`band_name`, over the qrels' queries (:func:`shares_from`).

    ``qrels`` and ``run`` are what :func:`rankscope.evaluation.evaluate` takes.
    """
    from rankscope.evaluation.engine import evaluate

    return shares_from(evaluate(qrels, run, band_metrics(bands)).wide(), bands)


def shown_shares(shares: dict[str, float]) -> str:
    """``1-10 0.3776, 11-100 0.1231, 101-1000 -`` (a band no query reached is ``-``)."""
    return ", ".join(
        f"{name.split()[1]} {'-' if not np.isfinite(share) else f'{share:.4f}'}" for name, share in shares.items()
    )


def band_table(qrels: object, runs: Mapping[str, object], bands: Sequence[tuple[int, int]] = BANDS) -> pd.DataFrame:
    """One row per run, one column per band (:func:`judged_by_band`)."""
    table = pd.DataFrame.from_dict({name: judged_by_band(qrels, run, bands) for name, run in runs.items()}, "index")
    return table.rename_axis("system")


def hole_warnings(table: pd.DataFrame, baseline: str) -> list[str]:
    """One line per run and band whose share is far below the baseline's (:data:`FAR_BELOW`)."""
    ratio, gap = FAR_BELOW
    lines = []
    for band in table.columns:
        reference = table.loc[baseline, band]
        if not np.isfinite(reference):
            continue
        for name, share in table[band].items():
            if name != baseline and np.isfinite(share) and share < ratio * reference and share <= reference - gap:
                lines.append(
                    f"{name}: {share:.0%} of its documents at ranks {band.split()[1]} are judged, against "
                    f"{reference:.0%} for the baseline {baseline}; its metrics there count the rest as non-relevant"
                )
    return lines
