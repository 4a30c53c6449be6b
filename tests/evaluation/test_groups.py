"""Query groups (issue 26 item 7): per-group means and tests equal the same computations on each
group's queries alone; the correction runs over every group's comparisons; bad files name the line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import FormatError, RankscopeError
from rankscope.evaluation.groups import UNGROUPED, group_tables, length_groups, read_groups
from rankscope.evaluation.significance import adjust_pvalues, compare_systems


def long_table(seed: int = 0, queries: int = 24) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for system, shift in (("base", 0.0), ("good", 0.3), ("same", 0.0)):
        for metric in ("map", "ndcg@10"):
            for q in range(queries):
                rows.append((system, f"q{q}", metric, float(np.clip(rng.normal(0.4 + shift * (q % 2), 0.1), 0, 1))))
    return pd.DataFrame(rows, columns=["retriever", "query_id", "metric", "value"])


def test_group_means_and_tests_equal_each_group_alone() -> None:
    table = long_table()
    groups = pd.Series({f"q{q}": ("odd" if q % 2 else "even") for q in range(20)})  # q20-q23 not named
    means, tests = group_tables(table, groups, ["base"], test="t")
    assert list(dict.fromkeys(means["group"])) == ["even", "odd", UNGROUPED]
    assert means.set_index(["group", "metric"]).at[(UNGROUPED, "map"), "n_queries"] == 4
    for (group, metric), row in means.set_index(["group", "metric"]).iterrows():
        chosen = [q for q in table["query_id"].unique() if groups.get(q, UNGROUPED) == group]
        subset = table[(table["metric"] == metric) & table["query_id"].isin(chosen)]
        assert row["good"] == pytest.approx(subset[subset["retriever"] == "good"]["value"].mean(), abs=1e-12)
    for metric in ("map", "ndcg@10"):
        rows = tests[tests["metric"] == metric]
        assert len(rows) == 3 * 2  # three groups x two systems against base
        for row in rows.itertuples():
            chosen = [q for q in table["query_id"].unique() if groups.get(q, UNGROUPED) == row.group]
            wide = table[(table["metric"] == metric) & table["query_id"].isin(chosen)].pivot(
                index="query_id", columns="retriever", values="value"
            )
            alone = compare_systems({n: wide[n] for n in wide.columns}, "base", "t", "none")
            assert row.p_value == pytest.approx(alone.set_index("system").at[row.system, "p_value"], rel=1e-12)
        np.testing.assert_allclose(rows["p_adjusted"], adjust_pvalues(rows["p_value"].to_numpy(), "holm"))
    odd = tests[(tests["group"] == "odd") & (tests["system"] == "good")]
    even = tests[(tests["group"] == "even") & (tests["system"] == "good")]
    assert odd["significant"].all() and not even["significant"].any()  # good wins only on odd queries


def test_length_bands_and_the_groups_file(tmp_path: Path) -> None:
    queries = pd.DataFrame(
        {
            "query_id": ["a", "b", "c", "d"],
            "text": ["one two", "one two three four", " ".join("w" * 1 for _ in range(9)), " ".join(["w"] * 16)],
        }
    )
    assert length_groups(queries).tolist() == ["1-3 terms", "4-7 terms", "8-15 terms", "16+ terms"]
    path = tmp_path / "groups.tsv"
    path.write_text("# query\tgroup\nq1\tshort\nq2\tlong\n", encoding="utf-8")
    assert read_groups(path).to_dict() == {"q1": "short", "q2": "long"}
    path.write_text("q1\tshort\nq2 long\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"groups.tsv, line 2: expected 'query_id<TAB>group'"):
        read_groups(path)
    path.write_text("q1\tshort\nq1\tlong\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"line 2: .*duplicate query.*first at line 1"):
        read_groups(path)
    with pytest.raises(RankscopeError, match="needs the queries' text"):
        length_groups(queries.iloc[:0])


def test_baselines_that_are_all_the_systems_test_each_pair_once() -> None:
    """Before: the last baseline was left no other system and compare_systems refused ("need at least two
    systems to compare, got 1"), so compare --groups refused --baseline base --baseline good --baseline same."""
    table = long_table()
    groups = pd.Series({f"q{q}": ("odd" if q % 2 else "even") for q in range(24)})
    _, tests = group_tables(table, groups, ["base", "good", "same"], test="t")
    assert sorted(set(zip(tests["baseline"], tests["system"]))) == [
        ("base", "good"),
        ("base", "same"),
        ("good", "same"),
    ]
    assert len(tests) == 3 * 2 * 2  # three pairs x two groups x two metrics: each pair once
    _, two = group_tables(table, groups, ["base", "good"], test="t")  # the same three pairs, the same correction
    pd.testing.assert_frame_equal(tests, two)
