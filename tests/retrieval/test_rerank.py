"""The rerank stage: hand-made orderings (ties included), interpolation, scorers of every kind, compare/diagnose."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation import evaluate
from rankscope.retrieval.base import Retriever, check_k, doc_positions, make_run, query_texts
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import load_retriever, make_retriever
from rankscope.retrieval.rerank import RerankRetriever
from rankscope.workflows import compare, diagnose

FIRST = {"d1": 5.0, "d2": 4.0, "d3": 4.0, "d4": 3.0, "d5": 2.0, "d6": 1.0, "d7": 1.0}
# first-stage order by the tie rule: d1, d3, d2, d4, d5, d7, d6
BY = {"d1": 0.2, "d2": 0.9, "d3": 0.2, "d4": 7.0, "d5": 0.0, "d6": 0.0, "d7": 0.0}


class Fixed(Retriever):
    """A first stage with fixed scores for every query."""

    parameters = (Param("scores", str, None, "fixed scores by doc_id", optional=True, objects=(dict,)),)

    def index(self, corpus: pd.DataFrame) -> Fixed:
        self.doc_index_ = {d: i for i, d in enumerate(corpus["doc_id"])}
        return self

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        ids, _ = query_texts(queries)
        docs = np.array(list(self.scores), dtype=object)
        run = make_run(ids, [docs] * len(ids), [np.array(list(self.scores.values()))] * len(ids))
        return run[run["rank"] <= check_k(k)].reset_index(drop=True)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        doc_positions(self.doc_index_, doc_ids)
        return np.array([self.scores[d] for d in doc_ids])


class ByScore:
    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        return np.array([BY[d] for d in doc_ids])


class FakeCrossEncoder:
    """What rerank needs of a sentence-transformers CrossEncoder: predict((query, text) pairs)."""

    def predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return np.array([BY[text.split()[0]] for _, text in pairs])


CORPUS = pd.DataFrame({"doc_id": list(FIRST), "title": "", "text": [f"{d} text" for d in FIRST]})
QUERIES = pd.DataFrame({"query_id": ["q1"], "text": ["anything"]})


def _ranking(run: pd.DataFrame) -> list[tuple[str, float]]:
    return [(d, round(s, 10)) for d, s in zip(run["doc_id"], run["score"])]


def test_top_depth_reranked_ties_by_doc_id_rest_in_first_stage_order() -> None:
    rerank = RerankRetriever(first=Fixed(scores=FIRST), by=ByScore(), depth=3).index(CORPUS)
    run = rerank.search(QUERIES)
    # head d1, d3, d2 rescored .2, .2, .9: d2 first, then the tie d3/d1 by doc_id descending; d4 is below the
    # head although its by-score is 7. Tail shifted by min(head) - 1 - s_depth = 0.2 - 1 - 4 = -4.8,
    # keeping the first stage's tie d7/d6 in its order.
    assert _ranking(run) == [
        ("d2", 0.9), ("d3", 0.2), ("d1", 0.2), ("d4", -1.8), ("d5", -2.8), ("d7", -3.8), ("d6", -3.8)
    ]  # fmt: skip
    assert run["rank"].tolist() == list(range(1, 8))
    np.testing.assert_allclose(rerank.score("anything", run["doc_id"].tolist()), run["score"])
    assert rerank.search(QUERIES, k=2)["doc_id"].tolist() == ["d2", "d3"]


def test_alpha_interpolates_min_max_normalised_scores() -> None:
    rerank = RerankRetriever(first=Fixed(scores=FIRST), by=ByScore(), depth=3, alpha=0.5).index(CORPUS)
    # head first scores 5, 4, 4 -> 1, 0, 0; by .2, .2, .9 -> 0, 0, 1; halves: d1 .5, d3 0, d2 .5 (tie: d2 first)
    # tail shift 0 - 1 - 4 = -5
    assert _ranking(rerank.search(QUERIES))[:4] == [("d2", 0.5), ("d1", 0.5), ("d3", 0.0), ("d4", -2.0)]
    first_only = RerankRetriever(first=Fixed(scores=FIRST), by=ByScore(), depth=3, alpha=1.0).index(CORPUS)
    first_run = Fixed(scores=FIRST).index(CORPUS).search(QUERIES)
    assert first_only.search(QUERIES)["doc_id"].tolist() == first_run["doc_id"].tolist()


def test_every_kind_of_scorer_gives_the_same_ranking() -> None:
    expected = RerankRetriever(first=Fixed(scores=FIRST), by=ByScore(), depth=4).index(CORPUS).search(QUERIES)
    assert expected["doc_id"].tolist()[:4] == ["d4", "d2", "d3", "d1"]
    scorers = [FakeCrossEncoder(), lambda query, texts: [BY[t.split()[0]] for t in texts]]
    for by in scorers:
        run = RerankRetriever(first=Fixed(scores=FIRST), by=by, depth=4).index(CORPUS).search(QUERIES)
        pd.testing.assert_frame_equal(run, expected)
    with pytest.raises(RankscopeError, match="returned 1 scores"):
        RerankRetriever(first=Fixed(scores=FIRST), by=lambda q, texts: [1.0], depth=4).index(CORPUS).search(QUERIES)
    with pytest.raises(ValueError, match=r"alpha=1\.5 is not allowed; alpha must be a float in \[0, 1\]"):
        RerankRetriever(alpha=1.5)
    with pytest.raises(ValueError, match="unknown retriever 'nope'"):
        make_retriever("rerank:first=nope")


def test_spec_with_brackets_save_and_load(
    tiny_corpus: pd.DataFrame, tiny_queries: pd.DataFrame, tmp_path: Path
) -> None:
    spec = "rerank:first=[bm25:k1=0.9,b=0.4],by=tfidf,depth=2"
    rerank = make_retriever(spec).index(tiny_corpus)
    bm25 = make_retriever("bm25:k1=0.9,b=0.4").index(tiny_corpus)
    tfidf = make_retriever("tfidf").index(tiny_corpus)
    run = rerank.search(tiny_queries)
    for qid, text in zip(tiny_queries["query_id"], tiny_queries["text"]):
        first = bm25.search(tiny_queries[tiny_queries["query_id"] == qid])
        got = run[run["query_id"] == qid]["doc_id"].tolist()
        head = first["doc_id"].tolist()[:2]
        by_tfidf = sorted(head, key=lambda d: (-tfidf.score(text, [d])[0], [-ord(c) for c in d]))
        assert got == by_tfidf + first["doc_id"].tolist()[2:]
    rerank.save(tmp_path / "index")
    loaded = load_retriever(tmp_path / "index")
    assert loaded.get_params() == rerank.get_params()
    pd.testing.assert_frame_equal(loaded.search(tiny_queries), run)


@pytest.mark.slow
def test_compare_and_diagnose_treat_rerank_like_any_retriever(data_dir: Path) -> None:
    spec = "rerank:first=bm25,by=tfidf,depth=10"
    result = compare(str(data_dir / "cranfield"), ["bm25", spec], metrics=["ndcg@10", "recall@100"], depth=100)
    # reranking the top 10 keeps the top 100 as a set: the same recall@100, to the last bit
    assert result.summary.loc[spec, "recall@100"] == result.summary.loc["bm25", "recall@100"]
    from rankscope.corpora import load_dataset

    data = load_dataset(str(data_dir / "cranfield"))
    bm25, tfidf = make_retriever("bm25").index(data.corpus), make_retriever("tfidf").index(data.corpus)
    first = bm25.search(data.queries, k=10)
    text = dict(zip(data.queries["query_id"], data.queries["text"]))
    manual = first.assign(score=[tfidf.score(text[q], [d])[0] for q, d in zip(first["query_id"], first["doc_id"])])
    expected = evaluate(data.qrels, manual, ["ndcg@10"]).mean["ndcg@10"]
    assert result.summary.loc[spec, "ndcg@10"] == pytest.approx(expected, abs=1e-12)
    reranked, plain = (d.loss_summary() for d in diagnose(data, spec, vs="bm25", depth=100).diagnoses)
    # the same candidates: the same recall losses at every K; only the ranking within the top 10 moved
    pd.testing.assert_series_equal(reranked["recall_loss"], plain["recall_loss"])
    assert (reranked.loc[reranked.index >= 10, "found"] == plain.loc[plain.index >= 10, "found"]).all()
    assert (reranked["found"] != plain["found"]).any()
