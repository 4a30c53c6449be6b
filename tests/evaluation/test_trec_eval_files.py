"""``rankscope evaluate`` on trec_eval's own test files gives trec_eval's numbers.

``out.test`` and ``out.test.a`` are trec_eval's expected output for ``qrels.test`` and
``results.test`` (see the folder's README). Every measure there that rankscope also
defines is compared, from the command line, at the 4 decimals trec_eval prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.corpora.trec import read_trec_qrels, read_trec_run
from rankscope.evaluation.metrics import parse_metric

COUNTS = {"num_ret", "num_rel", "num_rel_ret"}  # trec_eval's summary line holds their sums over queries
# trec_eval 10's rbp uses p = 0.9 by default (ir_measures' RBP, and rankscope's rbp, 0.8)
SAME_MEASURE = {"rbp": "rbp(p=0.9)"}
# measures rankscope defines under a name trec_eval uses for something else: none may be compared silently
NOT_SHARED = {"runid", "num_q"}


def expected_summary(path: Path) -> dict[str, float]:
    """{trec_eval measure name: value} from the ``all`` lines of a trec_eval output file."""
    values = {}
    for line in path.read_text().splitlines():
        name, query, value = line.split()
        if query == "all" and name not in NOT_SHARED:
            values[name] = float(value)
    return values


def shared(expected: dict[str, float]) -> dict[str, str]:
    """trec_eval name -> rankscope canonical name, for every measure rankscope also defines."""
    names = {}
    for name in expected:
        if name in SAME_MEASURE:
            names[name] = SAME_MEASURE[name]
            continue
        try:
            names[name] = parse_metric(name).name
        except RankscopeError:
            continue
    return names


def cli_means(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["evaluate", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("output", ["out.test", "out.test.a"])
def test_evaluate_gives_trec_eval_numbers(trec_eval_dir: Path, output: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected = expected_summary(trec_eval_dir / output)
    names = shared(expected)
    args = [str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")]
    result = cli_means(
        capsys, *args, *(f"-m{SAME_MEASURE.get(name, name)}" for name in names)
    )  # as trec_eval prints them
    assert result["n_queries"] == 3
    for trec_name, ours in names.items():
        value = result["mean"][ours] * (result["n_queries"] if trec_name in COUNTS else 1)
        assert round(value, 4) == pytest.approx(expected[trec_name], abs=1e-9), trec_name
    # out.test holds 30 measures, 27 of them shared (not runid, num_q, gm_map); out.test.a 99, 63 shared (infAP too)
    assert len(names) == (27 if output == "out.test" else 63)


def test_unjudged_share_is_one_minus_judged(trec_eval_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """trec_eval -a's unj_k (share of the top k without judgment) against judged@k."""
    expected = expected_summary(trec_eval_dir / "out.test.a")
    args = [str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")]
    result = cli_means(capsys, *args, "-m", "judged@5", "-m", "judged@10", "-m", "judged@20")
    for k in (5, 10, 20):
        assert round(1 - result["mean"][f"judged@{k}"], 4) == pytest.approx(expected[f"unj_{k}"], abs=1e-9)


def test_run_with_fields_after_the_tag(trec_eval_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """results.trunc carries words after the tag (trec_eval ignores them); scored as pytrec_eval scores it."""
    qrels, trunc = trec_eval_dir / "qrels.test", trec_eval_dir / "results.trunc"
    run = read_trec_run(trunc)
    assert len(run) == 584
    result = cli_means(capsys, str(qrels), str(trunc), "-m", "P_10", "-m", "nDCG@10", "-m", "recip_rank", "-m", "map")
    assert list(result["mean"]) == ["precision@10", "ndcg@10", "mrr", "map"]  # canonical labels
    qrels_frame = read_trec_qrels(qrels)
    judged = {q: dict(zip(g["doc_id"], g["relevance"].astype(int))) for q, g in qrels_frame.groupby("query_id")}
    scored = {q: dict(zip(g["doc_id"], g["score"])) for q, g in run.groupby("query_id")}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, {"P.10", "ndcg_cut.10", "recip_rank", "map"})
    reference = evaluator.evaluate(scored)
    for ours, key in [("precision@10", "P_10"), ("ndcg@10", "ndcg_cut_10"), ("mrr", "recip_rank"), ("map", "map")]:
        mean = sum(v[key] for v in reference.values()) / result["n_queries"]  # queries without rows score 0
        assert result["mean"][ours] == pytest.approx(mean, abs=1e-12), ours


def test_several_runs_are_tested_against_the_first(trec_eval_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, full, trunc = (str(trec_eval_dir / n) for n in ("qrels.test", "results.test", "results.trunc"))
    assert main(["evaluate", qrels, full, trunc, "-m", "P_10", "-m", "map", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert f"{full} (baseline)" in text and "randomization" in text
    result = cli_means(capsys, qrels, full, trunc, "-m", "P_10", "-m", "map", "--baseline", trunc)
    assert result["baseline"] == trunc
    rows = {(r["metric"], r["system"]): r for r in result["significance"]}
    assert set(rows) == {("precision@10", full), ("map", full)}
    delta = result["runs"][full]["mean"]["map"] - result["runs"][trunc]["mean"]["map"]
    assert rows[("map", full)]["delta"] == pytest.approx(delta, abs=1e-12)
