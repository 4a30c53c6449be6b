"""compare --groups (issue 26 item 7): per-group means and tests under the table, in the files and
the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.reporting.report import to_html
from tests.workflows.synthetic_runs import qrels_and_runs

METRICS = ["ndcg@10", "map"]


def test_compare_with_groups_shows_each_group_and_writes_them(tmp_path: Path) -> None:
    qrels, runs = qrels_and_runs({"weak": 0.1, "strong": 0.9})
    result = rs.compare(qrels=qrels, runs=runs, metrics=METRICS)
    groups = pd.Series({f"q{i}": ("first" if i < 20 else "second") for i in range(40)})
    grouped = result.with_groups(groups)
    means = grouped.group_means.set_index(["group", "metric"])
    per_query = result.per_query[(result.per_query["metric"] == "map") & (result.per_query["retriever"] == "strong")]
    first = per_query[per_query["query_id"].isin([f"q{i}" for i in range(20)])]["value"].mean()
    assert means.at[("first", "map"), "strong"] == pytest.approx(first, abs=1e-12)
    text = grouped.to_text()
    assert "By query group (ndcg@10)" in text and "first (20)" in text and "second (20)" in text
    row = next(line for line in text.splitlines() if line.startswith("first (20)"))
    assert row.rstrip().endswith("+")  # strong beats the baseline weak within the group
    assert {"groups.csv", "group_tests.csv"} <= {p.name for p in grouped.write_tables(tmp_path)}
    html = to_html(grouped.report())
    assert "By query group (ndcg@10)" in html and "ndcg@10 per query group" in html  # the table and the plot


def test_compare_cli_groups_file_and_a_bad_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs = qrels_and_runs({"weak": 0.1, "strong": 0.9})
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    argv = ["compare", "--quiet", "--dataset", str(tmp_path / "qrels.txt"), "--metrics", *METRICS]
    for name, run in runs.items():
        write_trec_run(run, tmp_path / f"{name}.trec")
        argv += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    groups = tmp_path / "groups.tsv"
    groups.write_text("".join(f"q{i}\t{'a' if i % 2 else 'b'}\n" for i in range(40)), encoding="utf-8")
    assert main([*argv, "--groups", str(groups)]) == 0
    out = capsys.readouterr().out
    assert "a (20)" in out and "b (20)" in out
    groups.write_text("q1 a\n", encoding="utf-8")
    assert main([*argv, "--groups", str(groups)]) == 2
    assert "groups.tsv, line 1: expected 'query_id<TAB>group'" in capsys.readouterr().err
    assert main([*argv, "--groups", "length"]) == 2  # judgments alone: no query text to measure
    assert "needs the queries' text" in capsys.readouterr().err
