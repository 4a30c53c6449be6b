"""All-pairs marks as ranx's superscript letters (issue 29 item 10) and tiers in compare's output
(issue 26 item 5): every pair of systems tested, Holm over all pairs per metric."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation.marks import pair_letters, system_letters
from rankscope.evaluation.tiers import rank_tiers
from tests.workflows.synthetic_runs import qrels_and_runs

QUALITY = {"weak": 0.1, "mid": 0.5, "strong": 0.9, "other": 0.5}
METRICS = ["ndcg@10", "map"]


@pytest.fixture(scope="module")
def result():
    qrels, runs = qrels_and_runs(QUALITY)
    return rs.compare(qrels=qrels, runs=runs, metrics=METRICS, baseline="weak")


def test_letters_name_the_systems_each_is_significantly_better_than() -> None:
    summary = pd.DataFrame({"map": [0.1, 0.5, 0.9]}, index=["x", "y", "z"])
    pairs = pd.DataFrame(
        {
            "metric": ["map"] * 3,
            "system": ["z", "z", "y"],
            "other": ["y", "x", "x"],
            "delta": [0.4, 0.8, 0.4],
            "significant": [False, True, True],
        }
    )
    assert pair_letters(summary, pairs)["map"].tolist() == ["", "a", "a"]
    assert pair_letters(summary, pairs.assign(significant=True))["map"].tolist() == ["", "a", "ab"]
    assert "q" not in "".join(system_letters([f"s{i}" for i in range(25)]).values())
    with pytest.raises(RankscopeError, match="at most 25 systems"):
        system_letters([f"s{i}" for i in range(26)])


def test_compare_all_pairs_marks_agree_with_the_tiers_pair_tests(result) -> None:
    marked = result.with_marks("all-pairs")
    table = marked.marked()
    assert list(table.index) == ["a weak", "b mid", "c strong", "d other"]
    for metric, label in (("ndcg@10", "nDCG@10"), ("map", "MAP")):
        wide = result.per_query[result.per_query["metric"] == metric].pivot(
            index="query_id", columns="retriever", values="value"
        )
        tiers = rank_tiers(wide)
        letters = dict(zip(QUALITY, "abcd"))
        for system in QUALITY:
            cell = table.at[f"{letters[system]} {system}", label]
            beaten = {
                letters[other]
                for other in QUALITY
                if other != system and tiers.significant(system, other) and wide[system].mean() > wide[other].mean()
            }
            superscripts = {"ᵃ": "a", "ᵇ": "b", "ᶜ": "c", "ᵈ": "d"}
            assert {superscripts[c] for c in cell if c in superscripts} == beaten
    assert table.at["c strong", "nDCG@10"].endswith("*ᵃᵇᵈ")  # strong beats all three
    assert "over all 6 pairs of systems per metric" in marked.legend()
    latex = marked.to_latex()
    assert r"c strong & \textbf{" in latex and "$^{abd}$" in latex and "* best" not in latex
    assert result.marked().index[0] == "weak (baseline)"  # the default marks are unchanged
    with pytest.raises(RankscopeError, match="marks: expected one of"):
        result.with_marks("pairs")


def test_tiers_are_shown_from_three_systems_and_written(result, tmp_path: Path) -> None:
    text = result.to_text()
    assert "Tiers on ndcg@10: 95% bootstrap intervals" in text
    lines = text.split("Tiers on ndcg@10")[1].splitlines()
    strong = next(line for line in lines if line.startswith("strong"))
    assert strong.split()[1] == "1" and "1 [1, 1]" in strong
    weak = next(line for line in lines if line.startswith("weak"))
    assert weak.split()[1] == "3"  # mid and other share tier 2
    tiers = result.tiers[result.tiers["metric"] == "ndcg@10"].set_index("system")
    assert tiers.loc["mid", "tier"] == tiers.loc["other", "tier"] == 2
    written = {path.name for path in result.write_tables(tmp_path)}
    assert {"tiers.csv", "pairs.csv"} <= written
    assert len(pd.read_csv(tmp_path / "pairs.csv")) == 2 * 6
    qrels, runs = qrels_and_runs({"weak": 0.1, "strong": 0.9})
    assert "Tiers on" not in rs.compare(qrels=qrels, runs=runs, metrics=METRICS).to_text()


def test_compare_cli_marks_all_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs = qrels_and_runs(QUALITY)
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    argv = ["compare", "--quiet", "--dataset", str(tmp_path / "qrels.txt"), "--metrics", *METRICS]
    for name, run in runs.items():
        write_trec_run(run, tmp_path / f"{name}.trec")
        argv += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    assert main([*argv, "--marks", "all-pairs"]) == 0
    out = capsys.readouterr().out
    assert "c strong" in out and "*ᵃᵇᵈ" in out and "superscript letters" in out
    assert main([*argv, "--marks", "all-pairs", "--format", "latex"]) == 0
    assert "$^{abd}$" in capsys.readouterr().out
