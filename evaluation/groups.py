"""Query groups: where a system wins and where it loses (issue 26 item 7).

A group is a label per query, from a TSV file (``query_id<TAB>group``, one line each), from a
column of the dataset's own queries file (``column:NAME``: a TSV/CSV column, a JSONL field, BEIR's
``metadata.KEY``; :mod:`rankscope.corpora.query_fields`) or from a rule: ``length``, the query's
length in terms (whitespace-separated words) in the bands of :data:`LENGTH_BANDS`. Per group, each system's mean and a paired test against the baseline(s);
the correction runs per metric over every comparison made in every group, since looking for the
groups where a system wins is itself a search over groups. A query the file does not name is in
the group :data:`UNGROUPED` (counted, never dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.errors import FormatError, RankscopeError, duplicate_message
from rankscope.core.fileio import read_lines
from rankscope.corpora.query_fields import QueriesFile
from rankscope.evaluation.marks import ALPHA
from rankscope.evaluation.significance import adjust_pvalues, compare_systems

UNGROUPED = "(ungrouped)"
LENGTH_BANDS = ((1, 3), (4, 7), (8, 15), (16, None))
"""Query length bands in terms, ``(first, last)``; ``None``: no upper end."""
RULES = ("length",)
COLUMN = "column:"
"""``column:NAME``: the groups are the queries file's field NAME."""


def read_groups(path: str | Path) -> pd.Series:
    """A TSV of ``query_id<TAB>group`` as a series (index query id); a line without both fields or
    a repeated query is a :class:`FormatError` naming the file and line."""
    groups: dict[str, str] = {}
    first: dict[str, int] = {}
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise FormatError(path, number, f"expected 'query_id<TAB>group', found {line[:60]!r}")
        query, group = fields[0].strip(), fields[1].strip()
        if query in groups:
            raise FormatError(path, number, f"{duplicate_message('query', query)} (first at line {first[query]})")
        groups[query], first[query] = group, number
    if not groups:
        raise FormatError(path, None, "no query_id<TAB>group line")
    return pd.Series(groups, name="group").rename_axis("query_id")


def length_groups(queries: pd.DataFrame) -> pd.Series:
    """Each query's length band in terms (:data:`LENGTH_BANDS`), e.g. ``4-7 terms``."""
    if queries.empty:
        raise RankscopeError("--groups length needs the queries' text; these judgments come without queries")
    lengths = queries.set_index("query_id")["text"].astype(str).str.split().str.len()
    labels = [f"{low}-{high} terms" if high else f"{low}+ terms" for low, high in LENGTH_BANDS]
    edges = [low for low, _ in LENGTH_BANDS]
    band = np.clip(np.searchsorted(edges, lengths.to_numpy(), side="right") - 1, 0, len(labels) - 1)
    return pd.Series([labels[i] for i in band], index=lengths.index, name="group")


def query_groups(source: str | Path, queries: pd.DataFrame, queries_file: QueriesFile | None = None) -> pd.Series:
    """The groups a ``--groups`` value names: a rule of :data:`RULES`, ``column:NAME`` of
    ``queries_file`` (the file ``queries`` were read from), else a TSV file."""
    text = str(source)
    if text in RULES:
        return length_groups(queries)
    if text.startswith(COLUMN):
        name = text.removeprefix(COLUMN)
        if not name:
            raise RankscopeError(f"--groups {text!r}: name the column, e.g. column:topic")
        if queries_file is None:
            raise RankscopeError(
                f"--groups {text}: these queries were not read from a JSONL/TSV/CSV queries file (a SMART "
                "collection, ir_datasets, judgments alone, a table in memory), so they have no other column; "
                "give a TSV file of query_id<TAB>group instead"
            )
        return queries_file.column(name, queries["query_id"])
    if not Path(source).is_file():
        raise RankscopeError(f"--groups {text!r}: not a file, not column:NAME and not a rule ({', '.join(RULES)})")
    return read_groups(source)


def group_tables(
    per_query: pd.DataFrame,
    groups: pd.Series,
    baselines: Sequence[str],
    *,
    test: str = "randomization",
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per group, (means, tests) of the long ``retriever, query_id, metric, value`` table.

    means: ``group, n_queries, metric`` then one column per system. tests: ``group, metric`` then
    :func:`compare_systems`' columns, every system against each baseline (each pair once) in every
    group of two queries or more, Holm-corrected per metric over all groups' comparisons."""
    labels = groups.reindex(per_query["query_id"].unique()).fillna(UNGROUPED)
    marked = per_query.assign(group=per_query["query_id"].map(labels))
    systems = list(dict.fromkeys(per_query["retriever"]))
    means = (
        marked.pivot_table(index=["group", "metric"], columns="retriever", values="value", aggfunc="mean", sort=False)
        .reindex(columns=systems)
        .reset_index()
    )
    sizes = labels.value_counts()
    means.insert(1, "n_queries", means["group"].map(sizes).astype(int))
    order = {group: i for i, group in enumerate(sorted(sizes.index, key=_group_order))}
    means = means.sort_values("group", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    tests = []
    for (group, metric), rows in marked.groupby(["group", "metric"], sort=False):
        if rows["query_id"].nunique() < 2:
            continue
        wide = rows.pivot(index="query_id", columns="retriever", values="value")
        for i, baseline in enumerate(baselines):
            others = {name: wide[name] for name in systems if name not in baselines[:i]}
            if len(others) < 2:  # every pair with this baseline was tested against an earlier one
                continue
            found = compare_systems(others, baseline, test, "none", seed, n_bootstrap=1000)
            tests.append(found.assign(group=group, metric=metric))
    if not tests:
        return means, pd.DataFrame()
    table = pd.concat(tests, ignore_index=True)
    for _, rows in table.groupby("metric", sort=False):
        table.loc[rows.index, "p_adjusted"] = adjust_pvalues(rows["p_value"].to_numpy(), "holm")
    table["significant"] = table["p_adjusted"] < ALPHA
    first = ["group", "metric"]
    return means, table[first + [c for c in table.columns if c not in first]]


def _group_order(group: str) -> tuple[bool, float, str]:
    """Groups in reading order: by a leading number when they have one (length bands), then by name;
    the ungrouped queries last."""
    digits = group[: len(group) - len(group.lstrip("0123456789"))]
    return (group == UNGROUPED, float(digits) if digits else float("inf"), group)
