"""The trained judge against the lexical scores as judges, on the pairs a judge is really asked.

Protocol (issue 44): the pooled pairs of each judged query are the union of BM25's and TF-IDF's
top 10; a pair's truth is its qrels grade (unjudged = 0), relevant = grade >= 1. The trained
judge (:class:`~rankscope.judging.trained.TrainedJudge`, trained on the dataset's qrels) judges
each pair by a model that did not see its query. A lexical score as a judge is cross-fitted the
same way (a logistic regression on that one score, same folds), so its kappa has a threshold it
did not pick on its own query. AUC ranks pairs by P(relevant); kappa compares labels >= 1
(unweighted) and the grades 0-3 (quadratic weights). Also timed: training, and judging the pool
again after training (pairs per second).

    RANKSCOPE_DATA=/work/shared/corpora python benchmarks/bench_trained_judge.py cranfield cisi
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from rankscope.corpora.load import load_dataset
from rankscope.judging.base import Pair
from rankscope.judging.trained import TrainedJudge
from rankscope.reporting.tables import markdown_table


def measure(name: str) -> list[dict[str, object]]:
    data = load_dataset(name)
    started, cpu = time.perf_counter(), time.process_time()
    judge = TrainedJudge(data.corpus, data.queries, data.qrels)
    trained = (time.perf_counter() - started, time.process_time() - cpu)
    bm25, tfidf = judge.features.retrievers["bm25"], judge.features.retrievers["tfidf"]
    judged = data.queries[data.queries["query_id"].isin(set(data.qrels["query_id"]))]
    runs = [bm25.search(judged, k=10), tfidf.search(judged, k=10)]
    pool = pd.concat(runs)[["query_id", "doc_id"]].drop_duplicates().sort_values(["query_id", "doc_id"])
    grades = {
        (q, d): min(max(int(r), 0), 3) for q, d, r in zip(data.qrels.query_id, data.qrels.doc_id, data.qrels.relevance)
    }
    truth = np.array([grades.get(k, 0) for k in zip(pool.query_id, pool.doc_id)])
    texts = dict(zip(data.queries.query_id, data.queries.text))
    documents = dict(zip(data.corpus.doc_id, data.corpus.text))
    pairs = [Pair(q, d, texts[q], documents[d]) for q, d in zip(pool.query_id, pool.doc_id)]
    started, cpu = time.perf_counter(), time.process_time()
    judgments = judge.judge(pairs)
    rate = (len(pairs) / (time.perf_counter() - started), len(pairs) / (time.process_time() - cpu))
    p_relevant = np.array([1 - json.loads(j.raw)["p"][0] for j in judgments])
    labels = np.array([j.label for j in judgments])
    rows = [row(name, "trained", truth, p_relevant, labels, trained, rate)]
    folds = np.array([judge.fold(q) for q in pool.query_id])
    for retriever_name, retriever in (("bm25", bm25), ("tfidf", tfidf)):
        scores = np.concatenate(
            [retriever.score(texts[q], list(g.doc_id)) for q, g in pool.groupby("query_id", sort=False)]
        )
        expected = np.zeros(len(scores))
        for fold in range(judge.folds):
            model = LogisticRegression(max_iter=2000).fit(scores[folds != fold, None], truth[folds != fold])
            p = model.predict_proba(scores[folds == fold, None])
            expected[folds == fold] = p @ model.classes_
        lexical = np.clip(np.rint(expected), 0, 3).astype(int)
        rows.append(row(name, retriever_name, truth, scores, lexical, None, None))
    return rows


def row(
    dataset: str,
    judge: str,
    truth: np.ndarray,
    score: np.ndarray,
    labels: np.ndarray,
    trained: tuple[float, float] | None,
    rate: tuple[float, float] | None,
) -> dict[str, object]:
    """One line of the table; ``trained``: wall and CPU seconds; ``rate``: pairs per wall and per CPU second."""
    relevant = truth >= 1
    return {
        "dataset": dataset,
        "judge": judge,
        "pairs": len(truth),
        "relevant": round(float(relevant.mean()), 3),
        "AUC": round(float(roc_auc_score(relevant, score)), 3),
        "kappa": round(float(cohen_kappa_score(relevant, labels >= 1)), 3),
        "kappa_quadratic": round(float(cohen_kappa_score(truth, labels, weights="quadratic")), 3),
        "train_s (wall/CPU)": "" if trained is None else f"{trained[0]:.1f} / {trained[1]:.1f}",
        "pairs/s (wall/CPU)": "" if rate is None else f"{rate[0]:,.0f} / {rate[1]:,.0f}",
    }


if __name__ == "__main__":
    table = pd.DataFrame([r for name in sys.argv[1:] or ["cranfield", "cisi"] for r in measure(name)])
    print(markdown_table(table, digits=3, index=False))
