"""``rag`` on CISI against plain-Python recomputations from its own runs and the raw texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.corpora import load_dataset
from rankscope.workflows.rag import rag


@pytest.fixture(scope="module")
def cisi(data_dir: Path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKSCOPE_DATA", str(data_dir))
        data = load_dataset("cisi")
    return data, rag(data, ["words:100:25"], ["bm25"], [250, 1000])


def plain_tokens_to_first(run: pd.DataFrame, lengths: dict[str, int], relevant: dict[str, set[str]]) -> dict:
    """Walk each query's ranking in rank order, adding lengths until a chunk of a relevant document."""
    first = {}
    for query_id, rows in run.sort_values(["query_id", "rank"]).groupby("query_id"):
        total = 0
        for chunk in rows["doc_id"]:
            total += lengths[chunk]
            if chunk.rsplit("#", 1)[0] in relevant.get(query_id, ()):
                first[query_id] = total
                break
    return first


@pytest.mark.slow
@pytest.mark.parametrize("system", ["whole / bm25", "words:100:25 / bm25"])
def test_budget_numbers_equal_a_plain_recomputation(cisi, system):
    data, result = cisi
    relevant = data.relevant.groupby("query_id")["doc_id"].agg(set).to_dict()
    run = result.runs[system]
    if system.startswith("whole"):
        lengths = {f"{d}#0": len(t.split()) for d, t in zip(data.corpus["doc_id"], data.corpus["text"])}
    else:  # 100-word windows overlapping by 25: starts 0, 75, 150, ...; the last one ends at the last word
        lengths = {}
        for d, t in zip(data.corpus["doc_id"], data.corpus["text"]):
            n, starts = len(t.split()), range(0, len(t.split()), 75)
            for position, start in enumerate(starts):
                lengths[f"{d}#{position}"] = min(start + 100, n) - start
                if start + 100 >= n:
                    break
    first = plain_tokens_to_first(run, lengths, relevant)
    ours = result.tokens[result.tokens["system"] == system].set_index("query_id")["tokens_to_first"]
    assert len(ours) == len(relevant) == 76
    for query_id in relevant:
        assert ours[query_id] == first.get(query_id, np.nan) or (np.isnan(ours[query_id]) and query_id not in first)
    for budget in (250, 1000):
        expected = np.mean([first.get(q, np.inf) <= budget for q in relevant])
        assert result.summary.at[system, f"hit@{budget}tok"] == pytest.approx(expected, abs=1e-12)


def test_maxp_metrics_equal_pytrec_eval_on_a_plain_maxp(cisi):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    data, result = cisi
    best: dict[str, dict[str, float]] = {}
    for q, chunk, score in result.runs["words:100:25 / bm25"][["query_id", "doc_id", "score"]].itertuples(index=False):
        doc = chunk.rsplit("#", 1)[0]
        best.setdefault(q, {})[doc] = max(score, best.get(q, {}).get(doc, -np.inf))
    qrels = data.to_dicts()["qrels"]
    scored = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(best)
    expected = np.mean([scored.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels])
    assert result.summary.at["words:100:25 / bm25", "maxp ndcg@10"] == pytest.approx(expected, abs=1e-9)
