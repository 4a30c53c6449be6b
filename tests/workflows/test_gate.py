"""``rankscope gate`` (issue 43 item 6): exit 0 pass, 1 fail, 3 undecided, the worst queries first, a
JUnit XML file and a Markdown summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.evaluation import evaluate
from tests.workflows.gate_files import QUERIES, write_qrels, write_run


def gate(tmp_path: Path, missed: list[str], margin: str, *more: str) -> int:
    qrels = write_qrels(tmp_path)
    base = write_run(tmp_path / "base.trec")
    cand = write_run(tmp_path / "cand.trec", missed)
    argv = ["--quiet", "gate", "--dataset", str(qrels), "--baseline", str(base), "--candidate", str(cand)]
    return main([*argv, "--metric", "precision@1", "--margin", margin, *more])


def test_an_equal_candidate_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gate(tmp_path, [], "0.01", "--junit", str(tmp_path / "j.xml")) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: cand.trec is not worse than base.trec by more than 0.01 on precision@1 (30 queries)")
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "0")


def test_a_candidate_worse_on_every_query_fails_and_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gate(tmp_path, QUERIES, "0.1", "--junit", str(tmp_path / "j.xml"), "--summary", str(tmp_path / "s.md")) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL:") and "mean difference -1.0000" in out
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "1"
    assert suite.find("testcase/failure").get("message").startswith("FAIL: cand.trec is worse than base.trec")
    summary = (tmp_path / "s.md").read_text()
    assert summary.startswith("# rankscope gate: cand.trec vs base.trec on qrels.txt")
    assert "| q00 | 1.0000 | 0.0000 | -1.0000 |" in summary  # ties of the worst broken by query id


def test_three_losses_in_thirty_at_a_margin_of_a_tenth_are_undecided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mean difference -0.1 exactly at the margin: the interval holds -0.1, so neither pass nor fail."""
    assert gate(tmp_path, ["q07", "q03", "q21"], "0.1", "--format", "json") == 3
    import json

    found = json.loads(capsys.readouterr().out)
    assert (found["verdict"], found["exit_status"], found["estimate"]) == ("undecided", 3, pytest.approx(-0.1))
    assert found["low"] < -0.1 < found["high"]
    assert [row["query_id"] for row in found["regressed"]] == ["q03", "q07", "q21"]


def test_a_query_the_candidate_dropped_counts_as_a_loss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = write_qrels(tmp_path)
    base = write_run(tmp_path / "base.trec")
    cand = write_run(tmp_path / "cand.trec", queries=QUERIES[:20])
    argv = ["gate", "--dataset", str(qrels), "--baseline", str(base), "--candidate", str(cand), "--margin", "0.05"]
    assert main([*argv, "--metric", "precision@1"]) == 1
    captured = capsys.readouterr()
    assert "cand.trec has no answer for 10 judged queries the other answers (scored 0), e.g. 'q20'" in captured.err
    assert "mean difference -0.3333" in captured.out


def test_a_query_without_a_relevant_judgment_is_left_out_as_compare_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workflows' one rule (evaluation.conventions): a query judged only non-relevant is not in the test."""
    qrels = write_qrels(tmp_path)
    qrels.write_text(qrels.read_text() + "qz 0 qz-other 0\n")
    runs = [write_run(tmp_path / name, queries=[*QUERIES, "qz"]) for name in ("base.trec", "cand.trec")]
    argv = ["gate", "--dataset", str(qrels), "--baseline", str(runs[0]), "--candidate", str(runs[1])]
    assert main([*argv, "--metric", "precision@1", "--margin", "0.01", "--format", "json"]) == 0
    import json

    found = json.loads(capsys.readouterr().out)
    assert found["n_queries"] == 30
    assert "(1 of 31 judged queries here) is left out of the means" in json.dumps(found["provenance"])


def test_with_a_judge_and_a_human_sample_it_decides_by_ppi_never_the_judge_alone(tmp_path: Path) -> None:
    """A perfect judge (the qrels themselves) on precision@5 within the pool's depth: PPI's difference is the humans' mean difference exactly, with an
    interval of width 0; a flipping judge: the bounds are PPI's 90% interval of tfidf - bm25, not the t
    interval of the judge-labelled per-query values."""
    from rankscope.evaluation.noninferiority import paired_bounds
    from rankscope.evaluation.ppi import ppi_evaluate
    from rankscope.workflows.common.judgments import read_judgments
    from rankscope.workflows.gate import gate
    from rankscope.workflows.judge import Study, judge
    from rankscope.workflows.options import Execution
    from tests.workflows.tiny_collection import small_dataset

    data = small_dataset()
    systems = ["bm25", "tfidf"]
    judge(data, systems, "qrels:", tmp_path / "perfect", depth=10, judgments=tmp_path / "c",
          study=Study(human_sample=4), execution=Execution(seed=3))  # fmt: skip
    with pytest.warns(UserWarning, match="4 human-labelled queries: fewer than the simulation"):  # PPI's own warning
        exact = gate(
            data, baseline="bm25", candidate="tfidf", margin=0.05, metric="precision@5", judgments=tmp_path / "perfect"
        )
    runs = {name: make_run(data, name) for name in systems}
    queries = read_judgments(tmp_path / "perfect").queries()
    truth = {
        name: evaluate(data.qrels, run, ["precision@5"])
        .per_query.set_index("query_id")["value"]
        .reindex(queries)
        .fillna(0)
        for name, run in runs.items()
    }
    assert exact.method == "ppi"
    assert exact.bounds.estimate == pytest.approx((truth["tfidf"] - truth["bm25"]).mean(), abs=1e-12)
    assert exact.bounds.low == pytest.approx(exact.bounds.high, abs=1e-12)

    judge(data, systems, "qrels:flip=0.3,seed=2", tmp_path / "flips", depth=8, judgments=tmp_path / "c2",
          study=Study(human_sample=5), execution=Execution(seed=7))  # fmt: skip
    with pytest.warns(UserWarning, match="5 human-labelled queries: in simulation"):
        found = gate(data, baseline="bm25", candidate="tfidf", margin=0.05, judgments=tmp_path / "flips")
    judged = read_judgments(tmp_path / "flips")
    human, by_judge = judged.ppi_qrels()
    row = ppi_evaluate(human, by_judge, runs, "ndcg@10", baseline="bm25", queries=judged.queries(), confidence=0.9)
    expected = row.differences.set_index("system").loc["tfidf"]
    assert (found.bounds.estimate, found.bounds.low, found.bounds.high) == pytest.approx(
        (expected["ppi_estimate"], expected["ppi_low"], expected["ppi_high"]), abs=1e-12
    )
    judge_only = paired_bounds(found.per_query["difference"].to_numpy(), 0.05)
    assert (found.bounds.low, found.bounds.high) != pytest.approx((judge_only.low, judge_only.high), abs=1e-6)


def make_run(data, spec: str):  # type: ignore[no-untyped-def]
    from rankscope.retrieval.registry import make_retriever

    return make_retriever(spec).index(data.corpus).search(data.queries, k=1000)


def test_sequential_decides_by_the_confidence_sequence_in_a_seeded_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--sequential: the last interval of the confidence sequence at 2 alpha over the differences in the --seed
    order; an equal candidate on 30 queries, which t passes at 0.01, is undecided there (the sequence is wide)
    and passes at a margin of 0.9."""
    import json

    import numpy as np

    from rankscope.evaluation.confidence_sequence import confidence_sequence

    assert gate(tmp_path, [], "0.01") == 0
    assert gate(tmp_path, [], "0.01", "--sequential") == 3
    assert gate(tmp_path, [], "0.9", "--sequential") == 0
    capsys.readouterr()
    missed = ["q03", "q07", "q21"]
    status = gate(tmp_path, missed, "0.9", "--sequential", "--seed", "5", "--format", "json")
    found = json.loads(capsys.readouterr().out)
    differences = np.array([-1.0 if q in missed else 0.0 for q in QUERIES])  # by query id, then the seed's order
    expected = confidence_sequence(differences[np.random.default_rng(5).permutation(30)], 0.1)
    assert found["method"] == "sequence"
    assert (found["low"], found["high"]) == pytest.approx((expected.low[-1], expected.high[-1]), abs=1e-12)
    assert found["low"] < -0.1 < found["high"]
    assert status == (0 if expected.low[-1] > -0.9 else 3) == found["exit_status"]
    other = (
        json.loads(capsys.readouterr().out)
        if gate(tmp_path, missed, "0.9", "--sequential", "--seed", "6", "--format", "json") >= 0
        else {}
    )
    assert other["low"] != pytest.approx(found["low"], abs=1e-9)  # another order, another sequence


def test_a_judge_while_gating_equals_judge_then_gate(tmp_path: Path) -> None:
    """judgments=Judging(spec, human_sample, depth, cache): the same labels, sample and PPI bounds as
    rankscope judge --out DIR then gate --judgments DIR; without a human sample it is refused."""
    from rankscope.core.errors import RankscopeError
    from rankscope.workflows.gate import gate
    from rankscope.workflows.judge import Study, judge
    from rankscope.workflows.options import Execution, Judging
    from tests.workflows.tiny_collection import small_dataset

    data = small_dataset()
    spec, cache = "qrels:flip=0.3,seed=2", tmp_path / "cache"
    judge(data, ["bm25", "tfidf"], spec, tmp_path / "judged", depth=8, judgments=cache,
          study=Study(human_sample=5), execution=Execution(seed=7))  # fmt: skip
    with pytest.warns(UserWarning, match="5 human-labelled queries"):
        two_steps = gate(data, baseline="bm25", candidate="tfidf", margin=0.05, judgments=tmp_path / "judged")
    with pytest.warns(UserWarning, match="5 human-labelled queries"):
        one_step = gate(data, baseline="bm25", candidate="tfidf", margin=0.05,
                        judgments=Judging(spec, 5, 8, cache), execution=Execution(seed=7))  # fmt: skip
    assert one_step.bounds == two_steps.bounds and one_step.method == "ppi"
    pd.testing.assert_frame_equal(one_step.per_query, two_steps.per_query)
    assert one_step.provenance.settings["judge"] == spec
    with pytest.raises(RankscopeError, match="--judge needs --human-sample N"):
        gate(data, baseline="bm25", candidate="tfidf", margin=0.05, judgments=Judging(spec, None, 8, cache))
