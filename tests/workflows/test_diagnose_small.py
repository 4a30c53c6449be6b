"""diagnose with real retrievers on a six-document collection: defaults work, the sampled protocol
says which option fixes a too-small corpus, and the report drills down into every query."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from rankscope.corpora.dataset import Dataset
from rankscope.workflows.common.systems import SystemRun
from rankscope.workflows.diagnose.sampling import Sampled
from rankscope.workflows.diagnose.workflow import diagnose, diagnose_runs

SIX = Dataset.from_dicts(
    "six",
    {
        "d1": "Cats purr and sleep all day",
        "d2": "Dogs bark at the postman",
        "d3": "Kittens are young cats that play",
        "d4": "Retrieval of library documents",
        "d5": "Feline behaviour: purring and sleeping",
        "d6": "Search engines rank documents",
    },
    {"q1": "why do cats purr", "q2": "document retrieval in libraries"},
    {"q1": {"d1": 2, "d5": 1, "d2": 0}, "q2": {"d4": 1, "d6": 1}},
)


@pytest.mark.slow
def test_defaults_work_on_six_documents(tmp_path) -> None:
    result = diagnose(SIX, "bm25", vs="tfidf", out=tmp_path)
    bm25 = result.diagnoses[0]
    assert result.depth == 100 and result.metrics == ("ndcg@10", "mrr@10", "recall@10", "map")
    summary = bm25.loss_summary()
    assert summary["relevant"].eq(4).all()
    assert (summary["found"] + summary["ranking_loss"] + summary["recall_loss"]).eq(4).all()
    # term matching never retrieves d5 ("Feline behaviour: purring ..." stems to felin, pur, ...) for
    # "why do cats purr" (cat, purr), however deep: a recall loss by vocabulary mismatch, for both systems
    assert summary["recall_loss"].eq(1).all()
    assert bm25.failures[["doc_id", "reason", "rank_tfidf"]].to_dict("records") == [
        {"doc_id": "d5", "reason": "vocabulary mismatch", "rank_tfidf": pytest.approx(float("nan"), nan_ok=True)}
    ]
    assert bm25.sampled.empty and result.notes == ()  # the sampled protocol is off by default
    html = (tmp_path / "report.html").read_text()
    for q in ("q1", "q2"):
        assert f'<a href="#q-{q}">{q}</a>' in html and f'<section id="q-{q}">' in html
    assert "<mark>purr</mark>" in html  # the query's terms are highlighted in snippets
    assert re.search(r"<td>d1</td><td class=\"num\">2</td><td>Cats purr", html)
    assert "## Queries, worst first" in (tmp_path / "report.md").read_text()


def test_sampled_on_a_small_corpus_names_the_option_that_fixes_it() -> None:
    result = diagnose(SIX, "bm25", sampled=True)
    # q1 has two relevant documents in the corpus: 4 of 6 documents are left to sample from
    assert result.notes == (
        "sampled protocol skipped: six has only 4 documents not relevant to query 'q1', fewer than "
        "--sampled-negatives 100; run with --sampled-negatives 4 (or fewer)",
    )
    assert result.diagnoses[0].sampled.empty and "--sampled-negatives 4" in result.to_text()
    fixed = diagnose(SIX, "bm25", sampled=Sampled(negatives=4, repeats=2))
    assert fixed.notes == () and fixed.diagnoses[0].sampled["metric"].tolist() == ["hit@10", "mrr@10", "ndcg@10"]


def test_a_run_without_retriever_is_diagnosed_with_the_default_analyzer() -> None:
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d3", "d6"], "score": [1.0, 1.0]})
    result = diagnose_runs(SIX, [SystemRun("prod", run)], depth=1, sampled=True)
    prod = result.diagnoses[0]
    assert prod.loss_summary().loc[1, ["found", "ranking_loss", "recall_loss"]].tolist() == [1, 0, 3]
    reasons = prod.failures.set_index("doc_id")["reason"].to_dict()
    # q1 "why do cats purr" -> cat, purr: d1 shares both; d5 shares neither (Snowball stems "purring" to
    # "pur" but "purr" to "purr", and "feline" is not "cat"); d4 shares all three of q2's terms
    assert reasons == {"d1": "outscored", "d5": "vocabulary mismatch", "d4": "outscored"}
    assert "prod: the sampled protocol needs a retriever to score documents; skipped" in result.notes[-1]


def test_bad_sampled_options_fail_before_indexing() -> None:
    from rankscope.core.errors import RankscopeError

    with pytest.raises(RankscopeError, match="must be at least 1, got 0 and 10"):
        diagnose(SIX, "bm25", sampled=Sampled(negatives=0))


def test_the_sampled_protocol_has_its_own_progress_bar(monkeypatch, capsys) -> None:
    monkeypatch.setattr("rankscope.core.progress._quiet", False)  # bars on, though stderr is captured
    diagnose(SIX, "bm25", sampled=Sampled(negatives=4, repeats=3))
    err = capsys.readouterr().err
    # 4 relevant (query, document) pairs x 3 repeats = 12 candidate lists scored
    assert "sampled protocol:" in err and "/12 " in err
