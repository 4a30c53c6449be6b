"""``rankscope judge``: the pool, the calls (exactly the distinct unjudged pooled pairs), the merged qrels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import read_trec_qrels, write_trec_run
from rankscope.judging.callable_judge import CallableJudge
from rankscope.workflows.judge import Study, judge
from rankscope.workflows.options import Execution

WORDS = "wing flow plate boundary layer heat shock wave load supersonic drag lift pressure".split()


def synthetic(seed: int = 3) -> Dataset:
    """40 documents (some with the same text under other ids), 6 queries, qrels for about a third of the pairs."""
    rng = np.random.default_rng(seed)
    texts = {f"d{i}": " ".join(rng.choice(WORDS, size=8)) for i in range(32)}
    texts.update({f"copy{i}": texts[f"d{i}"] for i in range(8)})  # identical texts, other ids
    queries = {f"q{i}": " ".join(rng.choice(WORDS, size=2, replace=False)) for i in range(6)}
    qrels = {q: {d: int(rng.integers(0, 3)) for d in rng.choice(list(texts), size=12, replace=False)} for q in queries}
    return Dataset.from_dicts("synthetic", texts, queries, qrels)


class Counting:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def __call__(self, query: str, document: str) -> int | str:
        self.asked.append((query, document))
        return "unsure" if document.startswith("shock") else (len(query) + len(document)) % 4


def own_pool(data: Dataset, runs: dict[str, pd.DataFrame], depth: int) -> set[tuple[str, str]]:
    """The pool computed here, from the runs alone, without the workflow's code."""
    pool = set()
    for run in runs.values():
        for query_id, group in run.groupby("query_id"):
            ranked = sorted(zip(group["score"], group["doc_id"]), reverse=True)  # score, then doc_id, descending
            pool |= {(query_id, doc) for _, doc in ranked[:depth]}
    return pool


def test_calls_are_exactly_the_distinct_unjudged_pooled_pairs(tmp_path: Path) -> None:
    from rankscope.retrieval.registry import make_retriever

    data = synthetic()
    runs = {spec: make_retriever(spec).index(data.corpus).search(data.queries, k=10) for spec in ("bm25", "tfidf")}
    given = runs["tfidf"].assign(score=lambda r: -r["score"])  # a run file: tfidf's ranking reversed
    write_trec_run(given, tmp_path / "reversed.trec")
    runs["reversed"] = given
    pool = own_pool(data, runs, 5)
    human = set(zip(data.qrels["query_id"], data.qrels["doc_id"]))
    query_text = dict(zip(data.queries["query_id"], data.queries["text"]))
    doc_text = dict(zip(data.corpus["doc_id"], data.corpus["text"]))
    holes = pool - human
    distinct = {(query_text[q], doc_text[d]) for q, d in holes}
    assert len(distinct) < len(holes)  # the copies make the count of texts differ from the count of pairs

    function = Counting()
    systems = {"bm25": "bm25", "tfidf": "tfidf", "reversed": tmp_path / "reversed.trec"}
    stub = CallableJudge(function, name="stub")
    result = judge(data, systems, stub, tmp_path / "out", depth=5, judgments=tmp_path / "cache")
    assert result.counts["calls"] == len(function.asked) == len(distinct)
    assert set(function.asked) == distinct
    assert (result.counts["pairs"], result.counts["unjudged_pairs"]) == (len(pool), len(holes))
    assert result.counts["human_pairs"] == len(pool & human)

    labels = [json.loads(line) for line in (tmp_path / "out" / "labels.jsonl").read_text().splitlines()]
    assert {(r["query_id"], r["doc_id"]) for r in labels} == pool
    by_judge = {(r["query_id"], r["doc_id"]): r for r in labels if r["source"] == "judge"}
    assert set(by_judge) == holes
    for (q, d), r in by_judge.items():
        expected = None if doc_text[d].startswith("shock") else (len(query_text[q]) + len(doc_text[d])) % 4
        assert (r["label"], r["status"]) == (expected, "ok" if expected is not None else "invalid")
        assert r["judge_id"] == stub.identity.key
    assert result.counts["invalid"] == sum(r["status"] == "invalid" for r in by_judge.values())

    merged = read_trec_qrels(tmp_path / "out" / "qrels.txt")
    got = dict(zip(zip(merged["query_id"], merged["doc_id"]), merged["relevance"]))
    expected = dict(zip(zip(data.qrels["query_id"], data.qrels["doc_id"]), data.qrels["relevance"]))
    expected |= {pair: r["label"] for pair, r in by_judge.items() if r["status"] == "ok"}
    assert got == expected  # human labels kept; the judge fills holes; invalid replies stay holes

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["calls"] == len(distinct) and summary["cache_hits"] == 0
    for name, run in runs.items():
        top = {(q, d) for q, group in run.groupby("query_id") for d in _top(group, 5)}
        share = sum(p in by_judge and by_judge[p]["status"] == "ok" for p in top) / len(top)
        assert summary["systems"][name]["judge_share@5"] == pytest.approx(share)

    again = judge(data, systems, CallableJudge(function, name="stub"), None, depth=5, judgments=tmp_path / "cache")
    assert (again.counts["calls"], again.counts["cache_hits"]) == (0, len(distinct))
    assert len(function.asked) == len(distinct)

    everything = judge(data, systems, stub, None, depth=5, judgments=tmp_path / "cache", study=Study(rejudge=True))
    judged_too = {(query_text[q], doc_text[d]) for q, d in pool} - distinct
    assert everything.counts["calls"] == len(judged_too)  # only the pairs not asked before
    assert len(everything.labels) == len(pool) + len(pool & human)  # a human and a judge line for judged pairs


def _top(group: pd.DataFrame, depth: int) -> list[str]:
    return [doc for _, doc in sorted(zip(group["score"], group["doc_id"]), reverse=True)[:depth]]


def test_a_system_naming_the_judge_model_is_warned_about(tmp_path: Path) -> None:
    from rankscope.judging.base import JudgeIdentity
    from rankscope.workflows.common.systems import resolve_systems
    from rankscope.workflows.judge.workflow import circular_warnings

    systems = resolve_systems({"bm25": "bm25", "rerank-smollm2": "tfidf"})
    identity = JudgeIdentity("openai", "SmolLM2")
    (warning,) = circular_warnings(systems, identity)
    assert "rerank-smollm2" in warning and "circular" in warning
    assert circular_warnings(resolve_systems(["bm25"]), identity) == ()


def test_a_system_using_the_trained_judge_features_is_warned_about() -> None:
    """The trained judge reads BM25's and TF-IDF's scores: a system ranking by BM25 is flagged, a dense one not."""
    from rankscope.judging.base import JudgeIdentity
    from rankscope.judging.trained import TrainedJudge
    from rankscope.workflows.common.systems import resolve_systems
    from rankscope.workflows.judge.workflow import circular_warnings

    systems = resolve_systems({"lexical": "bm25:k1=0.9", "other": "dense:model=model2vec"})
    (warning,) = circular_warnings(systems, JudgeIdentity("trained", "logistic:bm25+tfidf+rm3"), TrainedJudge.shares)
    assert "'lexical' uses bm25" in warning and "circular" in warning


def test_audit_flags_a_keyword_stuffing_judge_and_warns(tmp_path: Path) -> None:
    def stuffable(query: str, document: str) -> int:
        return min(3, sum(document.split().count(word) for word in query.split()) // 3)

    result = judge(
        synthetic(), ["bm25", "tfidf"], CallableJudge(stuffable), tmp_path / "out", depth=10,
        judgments=tmp_path / "cache", study=Study(audit=True, audit_pairs=200), execution=Execution(seed=1),
    )  # fmt: skip
    probes = {r.probe: r for r in result.audit}
    assert probes["keyword_stuffing"].flagged and probes["keyword_stuffing"].mean_shift > 0.5
    assert probes["keyword_stuffing"].pairs == result.counts["pairs"] < 200  # the pool is smaller: all of it
    assert any("keyword stuffing bias" in w for w in result.warnings)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["audit"]["keyword_stuffing"]["flagged"] is True


def test_blind_study_with_a_perfect_judge_has_the_truth_as_naive_estimate(tmp_path: Path) -> None:
    from rankscope.corpora.trec import write_trec_qrels
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    data = synthetic()
    write_trec_qrels(data.qrels, tmp_path / "truth.qrels")
    result = judge(
        data, ["bm25", "tfidf"], f"qrels:{tmp_path / 'truth.qrels'}", None, depth=10,
        judgments=tmp_path / "cache", study=Study(human_sample=3, blind=True, metric="precision@10"),
        execution=Execution(seed=4),
    )  # fmt: skip
    assert result.counts["calls"] == result.counts["pairs"]  # blind: every pooled pair, the sample's too
    means = result.ppi.means.set_index("system")
    for name in ("bm25", "tfidf"):
        run = make_retriever(name).index(data.corpus).search(data.queries, k=10)
        truth = evaluate(data.qrels, run, ["precision@10"]).mean["precision@10"]
        assert means.loc[name, "truth"] == pytest.approx(truth, abs=1e-12)
        assert means.loc[name, "naive_estimate"] == pytest.approx(truth, abs=1e-12)  # P@10 sees only pooled labels
        assert (means.loc[name, "n_labelled"], means.loc[name, "n_total"]) == (3, 6)
        assert means.loc[name, "naive_covered"] and means.loc[name, "ppi_covered"]
    assert list(result.ppi.differences["system"]) == ["tfidf"] and set(result.ppi.differences["baseline"]) == {"bm25"}
    sample = result.provenance.settings["sample"].split()
    assert len(sample) == 3 and set(sample) <= set(data.qrels["query_id"])


def test_rejudging_gives_agreement_equal_to_scikit_learn(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    data = synthetic()
    function = Counting()
    result = judge(
        data, ["bm25", "tfidf"], CallableJudge(function), None, depth=10, judgments=tmp_path, study=Study(rejudge=True)
    )
    rows = result.labels
    judge_rows = rows[(rows["source"] == "judge") & (rows["status"] == "ok")].set_index(["query_id", "doc_id"])
    human = data.qrels.set_index(["query_id", "doc_id"])["relevance"]
    both = judge_rows.join(human, how="inner")
    grades = sorted(set(both["relevance"]) | set(both["label"].astype(int)))
    expected = cohen_kappa_score(both["relevance"], both["label"].astype(int), labels=grades)
    labels = result.agreement["labels"]
    assert labels["n_pairs"] == len(both) >= 5
    assert labels["kappa"] == pytest.approx(expected, abs=1e-12)
    assert [r["systems"] for r in result.agreement["rankings"]] == ["all", "better half"]


def test_the_folder_reads_back_for_compare(tmp_path: Path) -> None:
    from rankscope.workflows.common.judgments import read_judgments

    data = synthetic()
    result = judge(
        data, ["bm25", "tfidf"], "qrels:flip=0.3,seed=2", tmp_path / "out", depth=10,
        judgments=tmp_path / "cache", study=Study(human_sample=3, blind=True), execution=Execution(seed=4),
    )  # fmt: skip
    back = read_judgments(tmp_path / "out")
    assert back.human_sample is not None and sorted(back.human_sample["query_id"].unique()) == sorted(
        result.provenance.settings["sample"].split()
    )
    assert len(back.labels) == len(result.labels) and len(back.qrels) == len(result.qrels)
    human, judged = back.ppi_qrels()
    assert set(human["query_id"]) == set(back.human_sample["query_id"]) and len(judged) > 0


def test_the_facade_judges_the_holes_from_a_qrels_file(tmp_path: Path) -> None:
    """rs.judge is the workflow: with ``qrels:PATH`` of fuller judgments, every hole gets that file's grade."""
    import rankscope as rs
    from rankscope.corpora.trec import write_trec_qrels

    data = synthetic()
    rng = np.random.default_rng(5)
    fuller = pd.DataFrame(
        [(q, d, int(rng.integers(0, 4))) for q in data.queries["query_id"] for d in data.corpus["doc_id"]],
        columns=["query_id", "doc_id", "relevance"],
    )
    write_trec_qrels(fuller, tmp_path / "fuller.qrels")
    result = rs.judge(data, ["bm25", "tfidf"], f"qrels:{tmp_path / 'fuller.qrels'}", depth=5, judgments=tmp_path / "c")
    human = set(zip(data.qrels["query_id"], data.qrels["doc_id"]))
    holes = result.labels[result.labels["source"] == "judge"]
    assert len(holes) == result.counts["unjudged_pairs"] == result.counts["calls"] > 0
    assert not human & set(zip(holes["query_id"], holes["doc_id"]))
    grade = dict(zip(zip(fuller["query_id"], fuller["doc_id"]), fuller["relevance"]))
    merged = dict(zip(zip(result.qrels["query_id"], result.qrels["doc_id"]), result.qrels["relevance"]))
    assert all(merged[q, d] == grade[q, d] for q, d in zip(holes["query_id"], holes["doc_id"]))
    assert all(merged[q, d] == r for q, d, r in data.qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False))
