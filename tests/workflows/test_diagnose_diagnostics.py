"""diagnose shows a retriever's own diagnostics: the ANN recall of an approximate index is the recall,
against exact search, of the very run it diagnoses, and a finding says what the dropped documents are."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.corpora.dataset import Dataset  # noqa: E402
from rankscope.retrieval.dense import DenseRetriever  # noqa: E402
from rankscope.workflows.diagnose import diagnose  # noqa: E402
from tests.needs import needs
from tests.retrieval.vectors import brute_force, random_vectors, unit  # noqa: E402

pytestmark = needs("faiss")


def test_ann_recall_of_the_diagnosed_run_is_shown_with_a_finding() -> None:
    docs = {f"d{i:03d}": f"document {i}" for i in range(400)}
    queries = {f"q{i}": f"query {i}" for i in range(12)}
    rng = np.random.default_rng(0)
    qrels = {q: {f"d{j:03d}": 1 for j in rng.choice(400, size=3, replace=False)} for q in queries}
    data = Dataset.from_dicts("random", docs, queries, qrels)
    retriever = DenseRetriever(model=random_vectors, faiss_index="hnsw", hnsw_m=4, ef_search=1, cache=False)
    result = diagnose(data, {"hnsw": retriever}, depth=20)
    diagnosis = result.diagnoses[0]
    # the exact top 20 of each query (documents without a title are embedded as their text)
    doc_ids, query_ids = list(docs), list(queries)
    exact = brute_force(
        unit(random_vectors(list(docs.values()))),
        unit(random_vectors(list(queries.values()))),
        doc_ids,
        20,
    )
    run = diagnosis.run
    recall = np.mean(
        [len(set(run.loc[run["query_id"] == q, "doc_id"]) & set(top)) / 20 for q, top in zip(query_ids, exact)]
    )
    assert 0.2 < recall < 1.0  # the approximation loses documents here
    assert diagnosis.diagnostics == {"ann_recall@20": pytest.approx(recall, abs=1e-12)}
    shown = f"ann_recall@20 {recall:.4f}"
    assert f"retriever diagnostics: {shown}" in result.to_text()
    assert any(f"returns {recall:.1%} of the exact top 20" in f for f in result.findings)
    summary = result.to_dict()["retrievers"][diagnosis.retriever]
    assert summary["diagnostics"] == {"ann_recall@20": pytest.approx(recall, abs=1e-12)}
    assert "hnsw: retriever diagnostics" in result.report()._repr_html_()


def test_exact_retrievers_show_no_diagnostics() -> None:
    data = Dataset.from_dicts("tiny", {"d1": "wing flow", "d2": "heat jet"}, {"q1": "flow"}, {"q1": {"d1": 1}})
    result = diagnose(data, "bm25", depth=2)
    assert result.diagnoses[0].diagnostics == {} and "retriever diagnostics" not in result.to_text()
