"""Several baselines (issue 26 item 6): every system against each baseline, each pair once, one Holm
correction per metric over every comparison made, said under the table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation.significance import adjust_pvalues, compare_results, compare_systems
from tests.workflows.synthetic_runs import qrels_and_runs

QUALITY = {"weak": 0.1, "mid": 0.5, "strong": 0.9, "other": 0.5}
METRICS = ["ndcg@10", "map"]


@pytest.fixture(scope="module")
def data():
    return qrels_and_runs(QUALITY)


def test_two_baselines_test_each_pair_once_with_one_holm_family_per_metric(data) -> None:
    qrels, runs = data
    results = rs.evaluate(qrels, runs, METRICS)
    found = compare_results(results, ["weak", "mid"], METRICS, n_permutations=2000, n_bootstrap=200)
    ndcg = found[found["metric"] == "ndcg@10"]
    pairs = list(zip(ndcg["system"], ndcg["baseline"]))
    assert pairs == [("mid", "weak"), ("strong", "weak"), ("other", "weak"), ("strong", "mid"), ("other", "mid")]
    per_query = {name: result.wide()["ndcg@10"] for name, result in results.items()}
    for row in ndcg.itertuples():
        alone = compare_systems(
            {row.system: per_query[row.system], row.baseline: per_query[row.baseline]},
            row.baseline,
            correction="none",
            n_permutations=2000,
            n_bootstrap=200,
        )
        assert row.p_value == alone["p_value"].iloc[0] and row.delta == alone["delta"].iloc[0]
    np.testing.assert_allclose(ndcg["p_adjusted"], adjust_pvalues(ndcg["p_value"].to_numpy(), "holm"))
    assert ndcg["significant"].tolist() == (ndcg["p_adjusted"] < 0.05).tolist()
    one = compare_results(results, "weak", METRICS, n_permutations=2000, n_bootstrap=200)  # unchanged
    expected = compare_systems(per_query, "weak", n_permutations=2000, n_bootstrap=200)
    np.testing.assert_allclose(one[one["metric"] == "ndcg@10"]["p_adjusted"], expected["p_adjusted"])


def test_compare_marks_each_baseline_and_says_the_correction(data) -> None:
    qrels, runs = data
    result = rs.compare(qrels=qrels, runs=runs, metrics=METRICS, baseline=["weak", "mid"])
    assert result.baselines == ("weak", "mid") and result.baseline == "weak"
    marked = result.marked()
    assert list(marked.index) == ["weak (baseline 1)", "mid (baseline 2)", "strong", "other"]
    assert marked.at["strong", "nDCG@10"].endswith("*+1+2")  # better than both
    assert marked.at["mid (baseline 2)", "nDCG@10"].endswith("+1")
    assert marked.at["other", "nDCG@10"].endswith("+1")  # as good as mid: better than weak only
    text = result.to_text()
    assert "Holm correction over the 5 comparisons made on each metric" in text
    assert "baseline N (1 = weak, 2 = mid;" in text
    assert "weak (baseline 1)" in result.to_latex() and result.to_dict()["baselines"] == ["weak", "mid"]
    with pytest.raises(RankscopeError, match="given twice"):
        rs.compare(qrels=qrels, runs=runs, metrics=METRICS, baseline=["weak", "weak"])
    with pytest.raises(RankscopeError, match="'nope' is not among the systems"):
        rs.compare(qrels=qrels, runs=runs, metrics=METRICS, baseline=["weak", "nope"])


def test_compare_cli_takes_baseline_twice(data, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs = data
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    argv = ["compare", "--quiet", "--dataset", str(tmp_path / "qrels.txt"), "--metrics", *METRICS]
    for name, run in runs.items():
        write_trec_run(run, tmp_path / f"{name}.trec")
        argv += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    assert main([*argv, "--baseline", "weak", "--baseline", "mid"]) == 0
    out = capsys.readouterr().out
    assert "mid (baseline 2)" in out and "Holm correction over the 5 comparisons" in out
    assert main([*argv, "--baseline", "weak"]) == 0
    assert "weak (baseline)" in capsys.readouterr().out


def test_one_system_alone_has_no_baseline_no_marks_no_legend(data) -> None:
    from rankscope.reporting.report import to_html
    from rankscope.workflows.compare.workflow import comparison
    from rankscope.workflows.options import Execution

    qrels, runs = data
    alone = comparison(
        qrels, {"mid": runs["mid"]}, METRICS, None, None, depth=None, execution=Execution(), judgments=None
    )
    assert list(alone.marked().index) == ["mid"] and not alone.marked().iloc[0].str.contains(r"[*+-]").any()
    assert alone.legend() == "" and "baseline" not in alone.to_text().split("Systems:")[0]
    assert "textbf" not in alone.to_latex() and "Significance against" not in to_html(alone.report())
