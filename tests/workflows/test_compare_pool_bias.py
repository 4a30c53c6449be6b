"""compare --pool-bias: the pool-bias test of compare's own runs, the table ``rankscope poolbias`` gives for
the same runs, metrics and depth (one function builds both), under compare's table, in its files and report."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from rankscope.cli import main
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.workflows import poolbias
from tests.workflows.synthetic_runs import qrels_and_runs

METRICS = ["map", "precision@5"]


def test_with_pool_bias_equals_poolbias_on_the_same_runs() -> None:
    qrels, runs = qrels_and_runs({"weak": 0.2, "mid": 0.5, "strong": 0.9}, seed=4)
    compared = rs.compare(qrels=qrels, runs=runs, metrics=METRICS).with_pool_bias(5)
    alone = poolbias(qrels, runs, METRICS, depth=5)
    assert compared.pool_bias is not None
    pd.testing.assert_frame_equal(compared.pool_bias.table, alone.table)
    assert compared.pool_bias.flagged == alone.flagged
    assert compared.provenance.settings["pool_bias_depth"] == 5
    assert "Pool bias (as rankscope poolbias):" in compared.to_text()


def test_the_cli_writes_what_poolbias_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, made = qrels_and_runs({"weak": 0.2, "mid": 0.5, "strong": 0.9}, seed=4)
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    runs = []
    for name, run in made.items():
        write_trec_run(run, tmp_path / f"{name}.trec")
        runs += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    common = ["--quiet", "--metrics", "P@5", "AP", *runs]
    poolbias_argv = ["poolbias", "--qrels", str(tmp_path / "qrels.txt"), *common, "--depth", "5"]
    assert main([*poolbias_argv, "--out", str(tmp_path / "p"), "--format", "json"]) == 0
    flagged = json.loads(capsys.readouterr().out)["flagged"]
    argv = ["compare", "--dataset", str(tmp_path / "qrels.txt"), *common, "--pool-bias", "5"]
    assert main([*argv, "--out", str(tmp_path / "c")]) == 0
    assert f"flagged: {', '.join(flagged) or 'none'}" in capsys.readouterr().out
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "c" / "pool_bias.csv"), pd.read_csv(tmp_path / "p" / "pool_bias.csv")
    )
    assert "Leave one system out of the pool" in (tmp_path / "c" / "report.html").read_text(encoding="utf-8")
    assert main([*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["pool_bias"]["flagged"] == flagged and document["pool_bias"]["depth"] == 5
    assert main([*argv[:-1], "0"]) == 2
    assert capsys.readouterr().err == "rankscope compare: error: --pool-bias must be at least 1, got 0\n"  # was --depth
