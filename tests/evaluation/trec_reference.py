"""Test helpers (not a test module): pytrec_eval as the reference for every metric trec_eval defines,
and random qrels/runs to compare on. Imported by the evaluation tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from rankscope.corpora.schema import validate
from rankscope.evaluation import evaluate
from rankscope.evaluation.metrics import known_forms, parse_metric

# rankscope metric -> pytrec_eval measure (parameter form) and result key, from the registry's trec_eval names
_PLAIN = ["ndcg@10", "ndcg@3", "ndcg", "recall@5", "recall@100", "precision@5", "precision@10", "hit@1", "hit@10"]
_PLAIN += ["mrr", "map", "map@10", "rprec", "bpref", "infap", "precision", "recall", "f1", "num_ret", "num_rel"]
TREC_NAMES = {
    **{metric: parse_metric(metric).trec_eval for metric in [*_PLAIN, "num_rel_ret"]},
    # trec_eval 9.0.8's rounding of recall levels (pytrec_eval's); trec_eval 10's: test_trec_eval_files
    **{f"iprec(trec=9)@{i / 10:g}": ("iprec_at_recall", f"iprec_at_recall_{i / 10:.2f}") for i in range(11)},
}
NOT_RUN_DEPENDENT = {"num_rel"}  # the one measure not 0 for a query the run lacks

EVERY_FAMILY = [
    form.replace("@k", "@10")
    .replace("threshold=x", "threshold=1.5")
    .replace("(trec=x)@recall", "@0.5")
    .replace("p=x", "p=0.8")
    for form in known_forms()
] + ["precision(rel=2)@10", "map(rel=3)"]
"""A metric of every family, with parameters: what the exact-partitioning tests score."""


def pytrec_per_query(qrels: pd.DataFrame, run: pd.DataFrame, metrics: list[str], relevance_level: int = 1) -> dict:
    """{query_id: {metric: value}} from trec_eval's C code, for queries in both qrels and run."""
    qrels_dict: dict = {}
    for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        qrels_dict.setdefault(q, {})[d] = int(r)
    run_dict: dict = {}
    for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False):
        run_dict.setdefault(q, {})[d] = float(s)
    measures = {TREC_NAMES[m][0] for m in metrics}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, measures, relevance_level=relevance_level)
    raw = evaluator.evaluate(run_dict)
    return {q: {m: vals[TREC_NAMES[m][1]] for m in metrics} for q, vals in raw.items()}


def random_case(seed: int, n_queries: int = 25, n_docs: int = 80) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random qrels and run with ties, graded and negative labels, missing/extra queries, short lists.

    Scores are multiples of 1/4 so they are exact in float32 (trec_eval's precision):
    ties here are ties there too.
    """
    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(n_queries):
        qid = f"q{q}"
        if q % 7 != 3:  # some queries only in the run
            judged = rng.choice(n_docs, rng.integers(1, 30), replace=False)
            labels = rng.integers(-1, 4, len(judged)) if q % 5 else np.zeros(len(judged), dtype=int)
            qrels_rows += [(qid, f"d{d}", int(r)) for d, r in zip(judged, labels)]
        if q % 6 != 2:  # some queries only in the qrels
            retrieved = rng.choice(n_docs, rng.integers(1, 60), replace=False)
            scores = rng.integers(0, 12, len(retrieved)) / 4.0
            run_rows += [(qid, f"d{d}", s) for d, s in zip(retrieved, scores)]
    qrels = validate(pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"]), "qrels")  # as read back
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return qrels, run.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def assert_matches_trec(qrels: pd.DataFrame, run: pd.DataFrame, relevance_level: int = 1) -> int:
    """Compare on the queries both tools score (qrels-only queries must be all 0); return how many."""
    ours = evaluate(qrels, run, list(TREC_NAMES), relevance_level=relevance_level).wide()
    reference = pytrec_per_query(qrels, run, list(TREC_NAMES), relevance_level)
    for qid, values in reference.items():
        for metric, expected in values.items():
            assert ours.loc[qid, metric] == pytest.approx(expected, abs=1e-9), (qid, metric)
    not_retrieved = ours.drop(index=list(reference))
    assert set(not_retrieved.index).isdisjoint(run["query_id"])
    assert (not_retrieved.drop(columns=list(NOT_RUN_DEPENDENT)) == 0).all().all()
    return len(reference)
