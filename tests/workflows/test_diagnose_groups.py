"""diagnose with query groups (issue 26 item 7): each system's mean per group from its per-query values;
with one system no test, the sentence says so; with two, the first is tested against the second."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rankscope.reporting.report import to_html
from rankscope.workflows import diagnose
from tests.workflows.tiny_collection import small_dataset

GROUPS = pd.Series({f"q{i}": ("even" if i % 2 == 0 else "odd") for i in range(12)})


def test_one_system_has_means_and_an_untested_sentence(tmp_path: Path) -> None:
    result = diagnose(small_dataset(), "bm25", depth=20).with_groups(GROUPS)
    per_query = result.per_query()
    assert set(per_query["retriever"]) == {"bm25"} and len(per_query) == 12 * len(result.metrics)
    expected = per_query.assign(group=per_query["query_id"].map(GROUPS)).groupby(["group", "metric"])["value"].mean()
    means = result.group_means.set_index(["group", "metric"])["bm25"]
    pd.testing.assert_series_equal(means.sort_index(), expected.sort_index(), check_names=False)
    assert result.group_tests.empty
    text = result.to_text().replace("\n", " ")
    top = means.xs(result.metrics[0], level="metric").idxmax()
    assert f"By query group ({result.metrics[0]}): bm25 scores highest on {top}" in text
    assert "untested with one system" in text
    written = {p.name for p in result.write_tables(tmp_path)}
    assert "groups.csv" in written and "group_tests.csv" not in written
    assert "per query group" in to_html(result.report())


def test_two_systems_test_the_first_against_the_second() -> None:
    result = diagnose(small_dataset(), "bm25", vs="tfidf", depth=20).with_groups("length")
    tests = result.group_tests
    assert set(tests["system"]) == {"bm25"} and set(tests["baseline"]) == {"tfidf"}
    groups = set(result.group_means["group"])
    assert groups == {"1-3 terms"}  # every query of small_dataset has three words
    line = f"By query group ({result.metrics[0]}): bm25 wins against tfidf on "
    text = result.to_text()
    assert line in text.replace("\n", " ") and "tfidf (baseline)" in text
