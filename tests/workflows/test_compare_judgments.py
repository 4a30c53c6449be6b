"""compare --judgments DIR: scored with the folder's merged qrels, each system's judge share and invalid
replies counted pair by pair, and the human sample's intervals equal to ppi_evaluate on the judging
process's own labels (not the sample's human ones the merged qrels hold)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.core.errors import FormatError
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.export import export_dataset
from rankscope.corpora.trec import write_trec_qrels, write_trec_run
from rankscope.evaluation import evaluate
from rankscope.evaluation.ppi import ppi_evaluate
from rankscope.workflows.common.judgments import read_labels
from rankscope.workflows.compare import compare

N_QUERIES, N_DOCS, SAMPLE = 60, 40, 15


def _world(seed: int = 5) -> dict[str, object]:
    """A collection with complete human labels, two runs of 10, and a judge that flips 25% of the labels
    and gives no label for a few pairs; the first SAMPLE queries (random ids) are the human sample."""
    rng = np.random.default_rng(seed)
    queries = {f"q{i}": f"query {i}" for i in range(N_QUERIES)}
    docs = {f"d{i}": f"document {i} words" for i in range(N_DOCS)}
    truth = {q: {d: int(rng.random() < 0.3) for d in docs} for q in queries}
    data = Dataset.from_dicts("synthetic", docs, queries, truth)
    runs = {}
    for name in ("a", "b"):
        rows = [(q, d, float(10 - r)) for q in queries for r, d in enumerate(rng.choice(list(docs), 10, replace=False))]
        runs[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    pooled = pd.concat(runs.values())[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)
    human_label = np.array([truth[q][d] for q, d in zip(pooled["query_id"], pooled["doc_id"])])
    judge_label = np.where(rng.random(len(pooled)) < 0.25, 1 - human_label, human_label)
    status = np.where(rng.random(len(pooled)) < 0.03, "invalid", "ok")
    sample = list(rng.choice(list(queries), SAMPLE, replace=False))
    return {"data": data, "runs": runs, "pooled": pooled, "human": human_label, "judge": judge_label,
            "status": status, "sample": sample, "truth": truth}  # fmt: skip


def _write_folder(world: dict[str, object], folder: Path) -> dict[str, pd.DataFrame]:
    """What judge --blind --human-sample would write: humans' labels on the sample (the merged qrels hold
    them there), the judge's ok labels elsewhere; labels.jsonl has both sources on the sample."""
    pooled, sample = world["pooled"], world["sample"]
    in_sample = pooled["query_id"].isin(sample).to_numpy()
    ok = world["status"] == "ok"
    lines = []
    for i, (q, d) in enumerate(zip(pooled["query_id"], pooled["doc_id"])):
        label = int(world["judge"][i]) if ok[i] else None
        lines.append({"query_id": q, "doc_id": d, "label": label, "source": "judge", "status": world["status"][i],
                      "judge_id": "j", "prompt_hash": "p"})  # fmt: skip
        if in_sample[i]:
            lines.append({"query_id": q, "doc_id": d, "label": int(world["human"][i]), "source": "human",
                          "status": "ok", "judge_id": "", "prompt_hash": ""})  # fmt: skip
    folder.mkdir()
    (folder / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    frame = pooled.assign(relevance=world["judge"])
    merged = pd.concat(
        [frame[~in_sample & ok], pooled[in_sample].assign(relevance=world["human"][in_sample])], ignore_index=True
    )
    write_trec_qrels(merged, folder / "qrels.txt")
    truth = world["data"].qrels
    human_sample = truth[truth["query_id"].isin(sample)]
    write_trec_qrels(human_sample, folder / "human_sample.txt")
    judge_process = pd.concat([frame[~in_sample & ok], frame[in_sample & ok]], ignore_index=True)
    return {"merged": merged, "human_sample": human_sample, "judge_process": judge_process}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], dict[str, pd.DataFrame], Path]:
    world = _world()
    folder = tmp_path_factory.mktemp("judge") / "out"
    return world, _write_folder(world, folder), folder


def test_compare_scores_with_merged_qrels_and_counts_judge_labels(judged) -> None:
    world, written, folder = judged
    metrics = ["precision@10", "ndcg@10"]
    result = compare(world["data"], world["runs"], metrics, baseline="a", judgments=folder, depth=10)
    merged = written["merged"]
    pooled, sample = world["pooled"], world["sample"]
    for name, run in world["runs"].items():
        expected = evaluate(merged, run, metrics).mean
        assert result.summary.loc[name].to_dict() == pytest.approx(expected, abs=1e-12)
        # judge-only share: pairs of the top 10 outside the sample whose judge reply was ok; invalid: replies
        status = run.merge(pooled.assign(status=world["status"]), on=["query_id", "doc_id"])["status"]
        outside = ~run["query_id"].isin(sample).to_numpy()
        row = result.systems.loc[name]
        assert row["judge_share@10"] == pytest.approx(((status == "ok").to_numpy() & outside).sum() / len(run))
        assert row["invalid@10"] == int((status == "invalid").sum()) > 0


def test_compare_intervals_use_the_judges_labels_on_the_sample(judged) -> None:
    world, written, folder = judged
    result = compare(world["data"], world["runs"], ["precision@10"], baseline="a", judgments=folder, depth=10)
    expected = ppi_evaluate(written["human_sample"], written["judge_process"], world["runs"], "precision@10",
                            baseline="a")  # fmt: skip
    intervals = result.intervals
    means = intervals[intervals["baseline"] == ""].set_index("system")
    for name in ("a", "b"):
        row, want = means.loc[name], expected.means.set_index("system").loc[name]
        for column in ("naive_low", "ppi_low", "ppi_high", "ppipp_low", "ppipp_high", "ppipp_lambda"):
            assert row[column] == pytest.approx(want[column], abs=1e-12), column
        assert (row["n_labelled"], row["n_total"]) == (SAMPLE, N_QUERIES)
    difference = intervals[intervals["baseline"] == "a"].set_index("system").loc["b"]
    assert difference["ppipp_high"] == pytest.approx(expected.differences.iloc[0]["ppipp_high"], abs=1e-12)
    # had the merged qrels' human labels been used on the sample, the correction would be smaller
    wrong = ppi_evaluate(written["human_sample"], written["merged"], world["runs"], "precision@10")
    assert wrong.means.iloc[0]["ppi_estimate"] != pytest.approx(means.loc["a", "ppi_estimate"], abs=1e-6)
    text = result.to_text()
    assert "judge_share@10" in text and "PPI++" in text and "b vs a" in text
    assert f"{SAMPLE} human-labelled queries of {N_QUERIES}" in text
    flat = " ".join(text.split())  # the intervals say their rule for queries without a relevant judgment differs
    assert "Unlike the table above, the intervals (naive, PPI, PPI++) and ranking agreement estimate the mean" in flat
    assert len(result.to_dict()["intervals"]) == 3


def test_without_a_human_sample_no_intervals(judged, tmp_path: Path) -> None:
    world, _, folder = judged
    copy = tmp_path / "nosample"
    copy.mkdir()
    for name in ("qrels.txt", "labels.jsonl"):
        (copy / name).write_bytes((folder / name).read_bytes())
    result = compare(world["data"], world["runs"], ["precision@10"], judgments=copy, depth=10)
    assert result.intervals.empty and "judge_share@10" in result.systems.columns
    assert "PPI" not in result.to_text()


def test_cli_prints_intervals_and_refuses_a_bad_labels_line(judged, tmp_path: Path, capsys) -> None:
    world, _, folder = judged
    export_dataset(world["data"], tmp_path / "data")
    for name, run in world["runs"].items():
        write_trec_run(run, tmp_path / f"{name}.trec")
    base = ["--quiet", "compare", "--dataset", str(tmp_path / "data"), "--run", f"a={tmp_path / 'a.trec'}",
            "--run", f"b={tmp_path / 'b.trec'}", "--baseline", "a", "--metrics", "precision@10", "--depth", "10"]  # fmt: skip
    assert main([*base, "--judgments", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert "PPI++" in printed and "b vs a" in printed and "invalid@10" in printed
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "qrels.txt").write_bytes((folder / "qrels.txt").read_bytes())
    lines = (folder / "labels.jsonl").read_text().splitlines()
    lines[2] = re.sub('"status": "[a-z]+"', '"status": "maybe"', lines[2])
    (bad / "labels.jsonl").write_text("\n".join(lines) + "\n")
    assert main([*base, "--judgments", str(bad)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"rankscope compare: error: {bad / 'labels.jsonl'}, line 3: status must be one of ['ok', 'invalid', 'failed'], "
        "got 'maybe'"
    ]
    assert main([*base, "--judgments", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


GOOD = '{"query_id": "q1", "doc_id": "d1", "label": 2, "source": "judge", "status": "ok"}'


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[1, 2]", "expected a JSON object, found list"),
        ('{"query_id": "q1", "doc_id": "d1", "label": 1, "status": "ok"}', "missing field 'source'"),
        ('{"query_id": "q1", "doc_id": "d1", "label": 1, "source": "llm", "status": "ok"}', "source must be one of"),
        (
            '{"query_id": "q1", "doc_id": "d1", "label": null, "source": "judge", "status": "ok"}',
            "label must be an integer",
        ),
        ('{"query_id": "q1", "doc_id": "d1", "label": 2, "source": "judge", "status": "invalid"}', "else null; got 2"),
        ('{"query_id": "q1", "doc_id": "d1", "label": "2", "source": "judge", "status": "ok"}', "got '2'"),
        (GOOD, "duplicate query, document, source 'q1', 'd1', 'judge' (first at line 1)"),
    ],
)
def test_labels_file_errors_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(f"{GOOD}\n{line}\n")
    with pytest.raises(FormatError, match=re.escape(f"{path}, line 2: ") + ".*" + re.escape(problem)):
        read_labels(path)
    path.write_text(f"{GOOD}\n")
    assert read_labels(path).iloc[0].to_dict() == {
        "query_id": "q1", "doc_id": "d1", "label": 2, "source": "judge", "status": "ok", "judge_id": "", "prompt_hash": ""
    }  # fmt: skip
