"""``collection sample``: which pooled pairs people label, drawn so that a small budget still gives
unbiased estimates (Horvitz-Thompson; statAP's idea of sampling the top ranks more).

Each unlabelled pooled pair belongs to one stratum: the band of its best rank over the systems
(1, 2-3, 4-7, 8-15, ...: powers of two) and the system that gave it that rank (the first system
listed when two tie). The budget is shared out by :func:`rankscope.evaluation.strata.allocate`
(D'Hondt, top bands weighted more); within a stratum the pairs are drawn by simple random sampling
without replacement with the seed, so a pair's inclusion probability is exactly ``drawn / size`` of
its stratum. Pairs anyone labelled before are
never drawn again: they enter the sample file with probability 1 (a take-all stratum, ``labelled``),
so ``sum(label / probability)`` over the file stays unbiased for the pool's total, whatever was
labelled before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rankscope.evaluation.strata import allocate
from rankscope.workflows.collection.labels import all_labels, is_human
from rankscope.workflows.collection.layout import (
    SAMPLE,
    SAMPLE_STATE,
    CollectionError,
    read_tsv,
    write_state,
    write_tsv,
)
from rankscope.workflows.collection.pooling import read_pool

LABELLED = "labelled"
SAMPLE_COLUMNS = ("position", "query_id", "doc_id", "band", "system", "best_rank", "inclusion_probability")


@dataclass(frozen=True)
class SampleResult:
    """The drawn pairs (in the order people see them) and the strata they came from."""

    folder: Path
    sample: pd.DataFrame
    strata: pd.DataFrame  # band, system, size, drawn, probability

    def to_text(self) -> str:
        drawn = self.sample[self.sample["band"] != LABELLED]
        lines = [
            f"{self.folder}: {len(drawn)} pairs to label, drawn from {int(self.strata['size'].sum())} unlabelled pooled "
            f"pairs in {len(self.strata)} strata; {len(self.sample) - len(drawn)} pairs labelled before kept with probability 1"
        ]
        lines += [
            f"  ranks {row.band:>7} by {row.system}: {row.drawn} of {row.size} (probability {row.probability:.3f})"
            for row in self.strata.itertuples(index=False)
        ]
        empty = int((self.strata["drawn"] == 0).sum())
        if empty:
            lines.append(
                f"warning: {empty} strata got no pair (the budget is below the number of strata): estimates "
                "from this sample leave their pairs out; draw at least one pair per stratum"
            )
        return "\n".join(lines)


def band_of(rank: int) -> str:
    """The rank band of a best rank: ``1``, ``2-3``, ``4-7``, ``8-15``, ..."""
    low = 1 << (int(rank).bit_length() - 1)
    return "1" if low == 1 else f"{low}-{2 * low - 1}"


def stratify(ranks: pd.DataFrame, systems: Sequence[str]) -> pd.DataFrame:
    """One row per pooled pair: ``query_id, doc_id, best_rank, system`` (the first listed system giving
    that rank), ``band``, in (query_id, doc_id) order."""
    order = {name: i for i, name in enumerate(systems)}
    ranked = ranks.assign(order=ranks["system"].map(order))
    best = ranked.sort_values(["query_id", "doc_id", "rank", "order"], kind="stable").drop_duplicates(
        ["query_id", "doc_id"]
    )
    best = best.rename(columns={"rank": "best_rank"})[["query_id", "doc_id", "best_rank", "system"]]
    return best.assign(band=best["best_rank"].map(band_of)).reset_index(drop=True)


@dataclass(frozen=True)
class Design:
    """The strata of a :func:`stratify` frame and the pairs each gives: ``codes[i]`` is row i's stratum,
    ``strata`` has one row per stratum (band, system, size, drawn, probability), top bands first."""

    codes: np.ndarray
    strata: pd.DataFrame

    @property
    def probability(self) -> np.ndarray:
        return self.strata["probability"].to_numpy()


def design(frame: pd.DataFrame, budget: int) -> Design:
    """How many pairs each stratum of ``frame`` gives for ``budget`` (:func:`allocate`)."""
    keys = frame[["band", "system"]].drop_duplicates()
    keys = keys.assign(top=keys["band"].map(lambda band: int(band.split("-")[0])))
    keys = keys.sort_values(["top", "system"], kind="stable").reset_index(drop=True)
    codes = frame.merge(keys.reset_index(), on=["band", "system"], how="left")["index"].to_numpy()
    sizes = np.bincount(codes, minlength=len(keys))
    drawn = np.array(allocate(sizes.tolist(), keys["top"].tolist(), budget))
    probability = drawn / np.maximum(sizes, 1)
    return Design(codes, keys.drop(columns="top").assign(size=sizes, drawn=drawn, probability=probability))


def draw(plan: Design, seed: int) -> np.ndarray:
    """Row positions of the pairs drawn, in the order people see them (shuffled with the seed): each
    stratum's ``drawn`` pairs by simple random sampling without replacement."""
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.flatnonzero(plan.codes == h), size=n, replace=False)
        for h, n in enumerate(plan.strata["drawn"].tolist())
        if n
    ]
    positions = np.concatenate(chosen) if chosen else np.array([], dtype=np.int64)
    return positions[rng.permutation(len(positions))]


def draw_sample(frame: pd.DataFrame, budget: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The drawn rows of a :func:`stratify` frame with their ``inclusion_probability``, and the strata."""
    plan = design(frame, budget)
    positions = draw(plan, seed)
    rows = frame.iloc[positions].assign(inclusion_probability=plan.probability[plan.codes[positions]])
    return rows.reset_index(drop=True), plan.strata


def sample_collection(folder: str | Path, budget: int = 100, seed: int = 0) -> SampleResult:
    """Draw ``budget`` pooled pairs nobody labelled (see the module doc); replaces any earlier sample."""
    folder = Path(folder)
    if budget < 1:
        raise CollectionError(f"--budget must be at least 1, got {budget}")
    ranks, state = read_pool(folder)
    frame = stratify(ranks, list(state["systems"]))
    labels = all_labels(folder)
    done = labels.loc[is_human(labels["source"]), ["query_id", "doc_id"]].drop_duplicates()
    labelled = frame.merge(done, on=["query_id", "doc_id"], how="left", indicator=True)["_merge"].eq("both").to_numpy()
    if labelled.all():
        raise CollectionError(f"{folder}: every pooled pair is labelled already; pool deeper or with more systems")
    rows, strata = draw_sample(frame[~labelled].reset_index(drop=True), budget, seed)
    before = frame[labelled].assign(band=LABELLED, inclusion_probability=1.0)
    sample = pd.concat([rows, before], ignore_index=True)
    sample.insert(0, "position", np.arange(1, len(sample) + 1))
    sample = sample[list(SAMPLE_COLUMNS)]
    write_tsv(sample, folder / SAMPLE)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    write_state(
        folder / SAMPLE_STATE,
        {
            "budget": budget,
            "seed": seed,
            "made": at,
            "labelled_before": int(labelled.sum()),
            "strata": strata.to_dict("records"),
        },
    )
    return SampleResult(folder, sample, strata)


def read_sample(folder: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``sample.tsv`` and its state, or a CollectionError saying to run ``collection sample`` first."""
    from rankscope.workflows.collection.layout import read_state

    if not (folder / SAMPLE_STATE).is_file():
        raise CollectionError(f"{folder}: no sample yet; run: rankscope collection sample {folder} --budget N")
    numbers = {"position": "int64", "best_rank": "int64", "inclusion_probability": "float64"}
    return read_tsv(folder / SAMPLE, numbers), read_state(folder / SAMPLE_STATE)
