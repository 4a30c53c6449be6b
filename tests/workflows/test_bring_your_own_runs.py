"""Bring your own system: runs written by other BM25 tools, compared and diagnosed from the CLI only.

rank-bm25 and bm25s (each with its own tokenisation) write TREC run files for
Cranfield, as any outside system would; ``rankscope compare --run`` tests one against
the other and writes the report, ``rankscope diagnose --run`` studies one of them.
The means are checked against pytrec_eval on the same files.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from rankscope.cli import main
from rankscope.corpora import load_dataset

DEPTH = 100


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def write_run(path: Path, query_ids: list[str], doc_ids: np.ndarray, scores: np.ndarray, tag: str) -> None:
    """A TREC run the way another tool writes one: top DEPTH per query by its own scores.

    Four decimals: distinct written scores stay distinct in trec_eval's float32 (documented difference).
    """
    lines = []
    for qid, row in zip(query_ids, scores):
        top = np.argsort(-row, kind="stable")[:DEPTH]
        lines += [f"{qid} Q0 {doc_ids[i]} {rank} {row[i]:.4f} {tag}\n" for rank, i in enumerate(top, start=1)]
    path.write_text("".join(lines))


@pytest.fixture(scope="module")
def runs(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    rank_bm25 = pytest.importorskip("rank_bm25")
    bm25s = pytest.importorskip("bm25s")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RANKSCOPE_DATA", str(data_dir))
        data = load_dataset("cranfield")
    folder = tmp_path_factory.mktemp("runs")
    doc_ids = data.corpus["doc_id"].to_numpy()
    texts = (data.corpus["title"].fillna("") + " " + data.corpus["text"].fillna("")).tolist()
    query_ids, queries = data.queries["query_id"].tolist(), data.queries["text"].tolist()
    okapi = rank_bm25.BM25Okapi([tokens(t) for t in texts])
    write_run(
        folder / "rank_bm25.trec",
        query_ids,
        doc_ids,
        np.array([okapi.get_scores(tokens(q)) for q in queries]),
        "rankbm25",
    )
    index = bm25s.BM25()
    index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    found, found_scores = index.retrieve(
        bm25s.tokenize(queries, stopwords="en", show_progress=False), k=DEPTH, show_progress=False
    )
    scores = np.full((len(queries), len(doc_ids)), -np.inf)
    np.put_along_axis(scores, found, found_scores, axis=1)
    write_run(folder / "bm25s.trec", query_ids, doc_ids, scores, "bm25s")
    return {"rankbm25": folder / "rank_bm25.trec", "bm25s": folder / "bm25s.trec"}


def pytrec_means(data_dir: Path, run_path: Path, measures: dict[str, str]) -> dict[str, float]:
    """Means over every qrels query (queries a run lacks score 0), from trec_eval's C code."""
    qrels: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RANKSCOPE_DATA", str(data_dir))
        frame = load_dataset("cranfield").qrels
    for q, d, r in frame.itertuples(index=False):
        qrels.setdefault(q, {})[d] = int(r)
    run: dict = {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    raw = pytrec_eval.RelevanceEvaluator(qrels, set(measures.values())).evaluate(run)
    key = {"ndcg_cut.10": "ndcg_cut_10", "map": "map", "P.10": "P_10"}
    return {ours: sum(v[key[m]] for v in raw.values()) / len(qrels) for ours, m in measures.items()}


def test_compare_runs_from_other_tools_then_diagnose_one(
    runs: dict[str, Path],
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    out = tmp_path / "compare"
    args = ["compare", "--dataset", "cranfield", "--depth", str(DEPTH), "--out", str(out)]
    args += ["--run", f"rankbm25={runs['rankbm25']}", "--run", f"bm25s={runs['bm25s']}", "--baseline", "rankbm25"]
    args += ["--metrics", "nDCG@10", "AP", "P_10"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "rankbm25 (baseline)" in text and "judged 11-100" in text
    summary = json.loads((out / "summary.json").read_text())
    for name, path in runs.items():
        expected = pytrec_means(data_dir, path, {"ndcg@10": "ndcg_cut.10", "map": "map", "precision@10": "P.10"})
        for metric, value in expected.items():
            assert summary["mean"][name][metric] == pytest.approx(value, abs=1e-9), (name, metric)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert summary["systems"][name]["description"] == f"run file {path} (sha256 {digest})"
    significance = {(row["metric"], row["system"]): row for row in summary["significance"]}
    assert set(significance) == {(m, "bm25s") for m in ("ndcg@10", "map", "precision@10")}
    row = significance[("ndcg@10", "bm25s")]
    assert row["delta"] == pytest.approx(summary["mean"]["bm25s"]["ndcg@10"] - summary["mean"]["rankbm25"]["ndcg@10"])
    assert 0 < row["p_value"] <= 1
    report = (out / "report.html").read_text()
    assert "sha256" in report and "Significance against the baseline" in report

    out = tmp_path / "diagnose"
    assert main(["diagnose", "--dataset", "cranfield", "--run", f"bm25s={runs['bm25s']}", "--out", str(out)]) == 0
    diagnosis = json.loads((out / "summary.json").read_text())
    assert list(diagnosis["retrievers"]) == ["bm25s"]
    assert diagnosis["retrievers"]["bm25s"]["sampled"] is None  # a run has no scorer for sampled candidates
    assert any(f"sha256 {hashlib.sha256(runs['bm25s'].read_bytes()).hexdigest()}" in n for n in diagnosis["notes"])
    hit10 = {row["K"]: row for row in diagnosis["retrievers"]["bm25s"]["cutoffs"]}[10]["Hit@K"]
    qrels = load_dataset("cranfield").qrels
    judged = qrels[qrels["relevance"] >= 1]["query_id"].nunique()
    hits = pytrec_eval.RelevanceEvaluator(
        {q: dict(zip(g["doc_id"], g["relevance"].astype(int))) for q, g in qrels.groupby("query_id")}, {"success.10"}
    ).evaluate({q: dict(zip(g["doc_id"], g["score"])) for q, g in _read(runs["bm25s"]).groupby("query_id")})
    assert hit10 == pytest.approx(sum(v["success_10"] for v in hits.values()) / judged, abs=1e-9)


def _read(path: Path):  # type: ignore[no-untyped-def]
    from rankscope.corpora.trec import read_trec_run

    return read_trec_run(path)


def test_run_for_another_collection_is_refused(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    other = tmp_path / "other.trec"
    other.write_text("1 Q0 MARCO-7 1 3.5 x\n2 Q0 MARCO-8 1 2.5 x\n")
    code = main(["compare", "--dataset", "cranfield", "--retrievers", "bm25", "--run", f"other={other}"])
    assert code == 2
    assert "names no document of the corpus" in capsys.readouterr().err
