"""rankscope retrievers as PyTerrier transformers (retrieval/pyterrier_transformer.py): ``pt.Experiment`` on
CISI gives the numbers ``rankscope compare`` gives for the same retrievers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.corpora.load import load_dataset
from rankscope.retrieval.pyterrier_transformer import as_transformer
from rankscope.workflows.compare import compare
from tests.needs import needs

pytestmark = needs("pyterrier")

# PyTerrier's (trec_eval's) names -> rankscope's
MEASURES = {
    "map": "map",
    "ndcg_cut_10": "ndcg@10",
    "P_5": "precision@5",
    "recall_100": "recall@100",
    "recip_rank": "mrr",
}


@pytest.mark.slow
def test_pt_experiment_runs_rankscope_retrievers_with_compares_numbers(data_dir: Path) -> None:
    cisi = load_dataset(data_dir / "cisi")
    judged = cisi.queries[cisi.queries["query_id"].isin(cisi.qrels["query_id"])]
    topics = pd.DataFrame({"qid": judged["query_id"], "query": judged["text"]})
    qrels = pd.DataFrame(
        {"qid": cisi.qrels["query_id"], "docno": cisi.qrels["doc_id"], "label": cisi.qrels["relevance"]}
    )
    specs = ["bm25", "tfidf"]
    import pyterrier as pt

    experiment = pt.Experiment(
        [as_transformer(spec, cisi) for spec in specs], topics, qrels, eval_metrics=list(MEASURES), names=specs
    )
    ours = compare(cisi, specs, list(MEASURES.values())).summary
    # pytrec_eval, under pt.Experiment, holds scores as 32-bit floats, as trec_eval does (docs/metrics.md):
    # BM25 scores equal to 7 digits tie there. The same runs with float32 scores give compare's numbers exactly.
    runs32 = {
        spec: ours_run.astype({"score": np.float32}) for spec, ours_run in compare(cisi, specs, ["map"]).runs.items()
    }
    as32 = compare(cisi, runs32, list(MEASURES.values())).summary
    for spec in specs:
        row = experiment.set_index("name").loc[spec]
        for theirs, name in MEASURES.items():
            assert row[theirs] == pytest.approx(as32.loc[spec, name], abs=1e-12), (spec, theirs)
            assert row[theirs] == pytest.approx(ours.loc[spec, name], abs=1e-5), (spec, theirs)
    assert ours.loc["bm25", "map"] > 0.1


def test_the_transformer_gives_pyterrier_results_in_the_tie_rule_order() -> None:
    corpus = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": "", "text": ["wing flow", "wing", "wing"]})
    results = as_transformer("bm25", corpus, k=2).transform(pd.DataFrame({"qid": ["1"], "query": ["wing"]}))
    assert list(results.columns) == ["qid", "query", "docno", "score", "rank"]
    assert results["docno"].tolist() == ["c", "b"]  # b and c tie above the longer a: doc_id descending
    assert results["rank"].tolist() == [0, 1] and results["query"].tolist() == ["wing", "wing"]
    with pytest.raises(RankscopeError, match="lacks 'query'"):
        as_transformer("bm25", corpus).transform(pd.DataFrame({"qid": ["1"]}))
