"""Coverage of the human-sample intervals on synthetic collections: the table of docs/intervals.md and the
table every interval is reported with (``evaluation/ppi_coverage.json``).

For each population size (52 queries, as the calibration study's collection; 225, as Cranfield's),
judge (:data:`rankscope.evaluation.ppi_simulation.JUDGES`) and human sample size (5, 10, 20, 30 and
every query), ``--collections`` synthetic collections (default 2,000; a fresh draw per population
and judge): the share whose 95% interval covers the truth, for each system's mean and the paired
difference, with the finite-population PPI and cross-fitted PPI++ intervals rankscope reports
(:mod:`rankscope.evaluation.ppi_finite`) and, for comparison, ppi-python's (``ppi_mean``,
``ppipp_mean``: normal quantiles, no finite-population correction, PPI++'s weight fitted on the same
queries).

Then pair samples (:mod:`rankscope.evaluation.pair_sample`): one collection of 50 queries (1,000
pooled pairs, A's and B's top 10) per judge, and ``--collections`` stratified samples of each budget
(50-1,000 labels): how often the 95% precision@10 interval covers the value under the people's labels.

    nice -n 10 python benchmarks/ppi_coverage.py [--collections 2000] [--seed 43] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.evaluation import ppi_simulation as sim
from rankscope.evaluation.ppi import ppi_mean, ppipp_mean

POPULATIONS = (52, 225)
SAMPLES = (5, 10, 20, 30)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "intervals.md"
BEGIN, END = "<!-- ppi_coverage table: begin -->", "<!-- ppi_coverage table: end -->"
PAIR_BEGIN, PAIR_END = "<!-- pair_coverage table: begin -->", "<!-- pair_coverage table: end -->"
BUDGETS = (50, 100, 200, 500, 1000)
POOL_QUERIES = 50


def old_coverage(found: sim.Collections, labelled: int) -> dict[tuple[str, str], float]:
    """ppi-python's PPI and PPI++ coverage per quantity (they need at least one unlabelled query), and
    its PPI++ estimate's bias (method ``ppipp bias``)."""
    out = {}
    for quantity in sim.QUANTITIES:
        human, judge = found.human[quantity], found.judge[quantity]
        truth = human.mean(axis=0)
        args = (human[:labelled], judge[:labelled], judge[labelled:])
        for method, interval in (("ppi", ppi_mean(*args)), ("ppipp", ppipp_mean(*args)[0])):
            out[quantity, method] = float(np.mean((interval.low <= truth) & (truth <= interval.high)))
        out[quantity, "ppipp bias"] = float(np.mean(interval.estimate - truth))
    return out


def run(collections: int, seed: int) -> tuple[list[dict[str, Any]], dict[tuple[int, str, int, str, str], float]]:
    cells, old = [], {}
    for p, queries in enumerate(POPULATIONS):
        for j, judge in enumerate(sim.JUDGES):
            found = sim.synthetic_collections(collections, queries, judge, seed + 10 * p + j)
            for labelled in (*SAMPLES, queries):
                for cell in sim.coverage_cells(found, labelled):
                    cells.append({"queries": queries, "judge": judge, "labelled": labelled, **cell})
                if labelled < queries:
                    for (quantity, method), value in old_coverage(found, labelled).items():
                        old[queries, judge, labelled, quantity, method] = value
    return cells, old


def markdown(cells: list[dict[str, Any]], old: dict[tuple[int, str, int, str, str], float]) -> str:
    """One row per population, judge and sample size; per quantity, PPI++ and PPI coverage (ppi-python's
    in brackets), cells outside the band marked."""
    low, high = sim.BAND

    def shown(value: float) -> str:
        mark = "" if low <= value <= high else ("*" if value < low else "+")
        return f"{value:.1%}{mark}"

    def exact(value: float) -> str:
        return "exact" if value == 1.0 else shown(value)

    lines = [
        "| queries | judge | N | "
        + " | ".join(f"{q}: PPI++ (ppi-python) | {q}: PPI (ppi-python)" for q in sim.QUANTITIES)
        + " |",
        "|---|---|---|" + "---|---|" * len(sim.QUANTITIES),
    ]
    index = {(c["queries"], c["judge"], c["labelled"], c["quantity"], c["method"]): c for c in cells}
    for queries in POPULATIONS:
        for judge in sim.JUDGES:
            for labelled in (*SAMPLES, queries):
                row = [str(queries), judge, "all" if labelled == queries else str(labelled)]
                for quantity in sim.QUANTITIES:
                    for method in ("ppipp", "ppi"):
                        value = float(index[queries, judge, labelled, quantity, method]["coverage"])
                        before = old.get((queries, judge, labelled, quantity, method))
                        if labelled == queries:
                            row.append(exact(value))
                        else:
                            row.append(shown(value) + ("" if before is None else f" ({before:.1%})"))
                lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "PPI++'s mean error (estimate minus truth) over the collections, cross-fitted (ppi-python's):",
        "",
        "| queries | judge | N | " + " | ".join(sim.QUANTITIES) + " |",
        "|---|---|---|" + "---|" * len(sim.QUANTITIES),
    ]
    for queries in POPULATIONS:
        for judge in sim.JUDGES:
            for labelled in SAMPLES[:2]:
                biases = [
                    f"{index[queries, judge, labelled, q, 'ppipp']['bias']:+.4f} "
                    f"({old[queries, judge, labelled, q, 'ppipp bias']:+.4f})"
                    for q in sim.QUANTITIES
                ]
                lines.append(f"| {queries} | {judge} | {labelled} | " + " | ".join(biases) + " |")
    return "\n".join(lines)


def pair_table(samples: int, seed: int) -> str:
    """Per judge and budget, A, B and B - A: coverage (share warned of; coverage of the rest)."""
    lines = [
        "| judge | labels | " + " | ".join(sim.QUANTITIES) + " |",
        "|---|---|" + "---|" * len(sim.QUANTITIES),
    ]
    for j, judge in enumerate(sim.JUDGES):
        pool = sim.synthetic_pool(POOL_QUERIES, judge, seed + j)
        for budget in BUDGETS:
            cells = []
            for cell in sim.pair_coverage(pool, budget, samples, seed + 100 * j + budget):
                if budget >= len(pool.human):  # every pair labelled: the estimate is the value itself
                    cells.append("exact")
                    continue
                rest = cell["coverage_not_warned"]
                cells.append(
                    f"{cell['coverage']:.1%} ({cell['warned']:.0%} warned"
                    + ("" if rest is None or cell["warned"] == 0 else f"; {rest:.1%} of the rest")
                    + ")"
                )
            lines.append(f"| {judge} | {budget} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _replace(text: str, begin: str, end: str, table: str) -> str:
    return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: f"{begin}\n{table}\n{end}", text, flags=re.S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--no-write", action="store_true", help="print only; leave the JSON table and docs alone")
    args = parser.parse_args()
    started = time.process_time()
    cells, old = run(args.collections, args.seed)
    table = markdown(cells, old)
    pairs = pair_table(args.collections, args.seed)
    seconds = time.process_time() - started
    print(table)
    print()
    print(pairs)
    print(f"\n{len(cells)} cells, {args.collections} collections each, seed {args.seed}, {seconds:.1f} s CPU")
    if args.no_write:
        return
    head = json.dumps({"collections": args.collections, "seed": args.seed, "confidence": sim.CONFIDENCE})
    rows = ",\n".join(json.dumps(cell) for cell in cells)  # one cell a line
    sim.TABLE.write_text(f'{head[:-1]}, "cells": [\n{rows}\n]}}\n', encoding="utf-8")
    text = _replace(DOCS.read_text(encoding="utf-8"), BEGIN, END, table)
    DOCS.write_text(_replace(text, PAIR_BEGIN, PAIR_END, pairs), encoding="utf-8")


if __name__ == "__main__":
    main()
