"""``collection pool``: the systems' top ``depth`` for every question, and who put each document where.

The pairs are the judge workflow's pool (:func:`rankscope.workflows.judge.pool.make_pool`: one
rule for what is pooled); ``pool.tsv`` keeps one row per system that retrieved a pooled pair, with
its rank there (``system, query_id, doc_id, rank``), which the sample is stratified by.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from rankscope.workflows.collection.layout import (
    POOL,
    POOL_STATE,
    CollectionError,
    collection_dataset,
    read_state,
    read_tsv,
    write_state,
    write_tsv,
)
from rankscope.workflows.common.runs import check_depth
from rankscope.workflows.common.systems import SystemLike, produce_run, resolve_systems
from rankscope.workflows.judge.pool import make_pool, pooled_ranks


@dataclass(frozen=True)
class PoolResult:
    """The pooled pairs: ``ranks`` (system, query_id, doc_id, rank) and each system's description."""

    folder: Path
    ranks: pd.DataFrame
    systems: dict[str, str]
    depth: int

    @property
    def pairs(self) -> int:
        return len(self.ranks[["query_id", "doc_id"]].drop_duplicates())

    def to_text(self) -> str:
        per = self.ranks.groupby("system", sort=False).size()
        found_by = self.ranks.groupby(["query_id", "doc_id"]).size()
        lines = [f"{self.folder}: {self.pairs} pooled pairs from {len(self.systems)} systems at depth {self.depth}"]
        lines += [f"  {name}: {int(per.get(name, 0))} pairs ({spec})" for name, spec in self.systems.items()]
        lines.append(f"  found by more than one system: {int((found_by > 1).sum())}")
        return "\n".join(lines)


def pool_collection(
    folder: str | Path, systems: Sequence[SystemLike] | Mapping[str, SystemLike] = ("bm25",), depth: int = 10
) -> PoolResult:
    """Search the collection's questions with each system and pool their top ``depth`` (replacing any pool)."""
    folder = Path(folder)
    check_depth(depth)
    resolved = resolve_systems(systems)
    data = collection_dataset(folder)
    made = {name: produce_run(system, data, depth) for name, system in resolved.items()}
    runs = {name: system_run.run for name, system_run in made.items()}
    pool = make_pool(runs, data, depth, data.qrels)
    ranks = pooled_ranks(runs, depth).merge(pool.pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    ranks = ranks.sort_values(["query_id", "doc_id", "rank", "system"], kind="stable").reset_index(drop=True)
    write_tsv(ranks, folder / POOL)
    described = {name: system_run.described() for name, system_run in made.items()}
    at = datetime.now(UTC).isoformat(timespec="seconds")
    write_state(folder / POOL_STATE, {"depth": depth, "systems": described, "made": at, "pairs": int(len(pool.pairs))})
    return PoolResult(folder, ranks, described, depth)


def read_pool(folder: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``pool.tsv`` and its state, or a CollectionError saying to run ``collection pool`` first."""
    if not (folder / POOL_STATE).is_file():
        raise CollectionError(f"{folder}: no pool yet; run: rankscope collection pool {folder} --systems SPEC...")
    state = read_state(folder / POOL_STATE)
    return read_tsv(folder / POOL, {"rank": "int64"}), state
