"""Randomized (fixed seeds) checks: the result never depends on row order or on which internal
path ran, and the metrics trec_eval lacks keep the relations their definitions imply."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import SchemaError
from rankscope.evaluation import evaluate, ranking
from tests.evaluation.trec_reference import random_case

METRICS = ["ndcg@5", "ndcg_exp@5", "ndcg_exp", "mrr@3", "mrr", "hit@3", "precision@3", "recall@3", "f1@3",
           "map", "map@5", "bpref", "rprec", "recall", "recall@1000", "f1", "precision(threshold=1.5)"]  # fmt: skip


def ranked(run: pd.DataFrame, doc_descending: bool) -> pd.DataFrame:
    order = ["query_id", "score", "doc_id"]
    return run.sort_values(order, ascending=[True, False, not doc_descending], ignore_index=True)


@pytest.mark.parametrize("seed", range(5))
def test_row_order_and_internal_paths_do_not_change_results(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = random_case(seed)
    expected = evaluate(qrels, run, METRICS).per_query
    in_order = ranked(run, doc_descending=True)  # already in trec_eval order: no sort at all
    ties_wrong = ranked(run, doc_descending=False)  # only the ties need reordering
    ascending = in_order.iloc[::-1]  # grouped, but worst first: full sort
    for variant in (in_order, ties_wrong, ascending):
        pd.testing.assert_frame_equal(evaluate(qrels, variant, METRICS).per_query, expected)
    monkeypatch.setattr(ranking, "_KEY_BITS", 8)  # pair keys no longer packable: argsort path
    pd.testing.assert_frame_equal(evaluate(qrels, run, METRICS).per_query, expected)


@pytest.mark.parametrize("seed", range(5))
def test_definitional_relations(seed: int) -> None:
    qrels, run = random_case(seed)
    w = evaluate(qrels, run, METRICS).wide()
    assert ((w >= 0) & (w <= 1 + 1e-12)).all().all()
    assert ((w["hit@3"] > 0) == (w["precision@3"] > 0)).all()
    assert (w["mrr@3"] <= w["hit@3"]).all() and (w["mrr@3"] >= w["hit@3"] / 3).all()
    assert (w["mrr@3"] <= w["mrr"] + 1e-12).all()
    assert (w["map@5"] <= w["map"] + 1e-12).all()
    assert np.allclose(w["recall@1000"], w["recall"])  # no ranking here is longer than 1000
    p, r = w["precision@3"], w["recall@3"]
    assert np.allclose(w["f1@3"], np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0))


@pytest.mark.parametrize("seed", range(3))
def test_exponential_gain_equals_linear_on_binary_labels(seed: int) -> None:
    qrels, run = random_case(seed)
    binary = qrels.assign(relevance=(qrels["relevance"] > 0).astype(int))
    w = evaluate(binary, run, ["ndcg@5", "ndcg_exp@5"]).wide()
    assert np.allclose(w["ndcg@5"], w["ndcg_exp@5"], atol=1e-12)
    graded = evaluate(qrels, run, ["ndcg@5", "ndcg_exp@5"]).wide()
    assert not np.allclose(graded["ndcg@5"], graded["ndcg_exp@5"])


def test_ndcg_exp_hand_computed_with_labels_3_and_1() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 3]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    # DCG = (2^1-1)/log2(2) + (2^3-1)/log2(3); IDCG = 7/log2(2) + 1/log2(3)
    expected = (1 + 7 / np.log2(3)) / (7 + 1 / np.log2(3))
    assert evaluate(qrels, run, ["ndcg_exp"]).mean["ndcg_exp"] == pytest.approx(expected, abs=1e-12)


def test_equal_strings_in_distinct_objects_are_still_duplicates() -> None:
    first, second = "".join(["d", "1"]), "".join(["d", "1"])
    assert first is not second
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": np.array([first, second], dtype=object), "score": [1.0, 2.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(SchemaError, match="duplicate query, document 'q', 'd1'"):
        evaluate(qrels, run)


def test_address_coding_gives_one_code_per_object_or_gives_up_when_spread() -> None:
    rng = np.random.default_rng(3)
    near = (1 << 40) + 48 * rng.integers(0, 50, 400)  # 50 objects of 48 bytes side by side
    two_places = near.copy()
    two_places[::7] += 48 << 30  # some objects 48 GB away: two regions
    for addresses in (near, two_places):
        codes, one_row = ranking._code_addresses(addresses)
        assert np.array_equal(addresses[one_row][codes], addresses)  # each code names one address
        assert len(one_row) == len(np.unique(addresses))
    scattered = (1 << 40) + (rng.permutation(400) << 21)  # 400 objects, each in its own region
    assert ranking._code_addresses(scattered) is None
    far_apart = np.array([1 << 20, 1 << 46])  # regions table would span 2^26 entries
    assert ranking._code_addresses(far_apart) is None


def test_hashing_the_strings_gives_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = random_case(4)
    expected = evaluate(qrels, run, METRICS).per_query
    monkeypatch.setattr(ranking, "_code_objects", lambda values: None)  # as for widely spread objects
    pd.testing.assert_frame_equal(evaluate(qrels, run, METRICS).per_query, expected)
    pd.testing.assert_frame_equal(evaluate(qrels, run.sort_values("query_id"), METRICS).per_query, expected)
    fresh = run.assign(query_id=[q.encode().decode() for q in run["query_id"]])  # a new str object on every row
    pd.testing.assert_frame_equal(evaluate(qrels, fresh.sort_values("query_id"), METRICS).per_query, expected)


def reference_ranks(run_q: np.ndarray, score: np.ndarray, doc: np.ndarray) -> np.ndarray:
    frame = pd.DataFrame({"q": run_q, "score": score, "doc": doc, "row": np.arange(len(doc))})
    frame = frame.sort_values(["q", "score", "doc"], ascending=[True, False, False], kind="stable")
    ranks = np.empty(len(doc), dtype=np.int64)
    ranks[frame["row"].to_numpy()] = frame.groupby("q").cumcount().to_numpy()
    return ranks


def ranks_of(run_q: np.ndarray, score: np.ndarray, doc: np.ndarray, n_queries: int, rows: np.ndarray) -> np.ndarray:
    """ranking._ranks with each row's doc id as its own code (the codes only index the names)."""
    return ranking._ranks(run_q, score, doc, np.arange(len(doc)), n_queries, rows)


# query codes near 2^55 leave 8 score bits in the packed keys: many near-equal scores share a key
@pytest.mark.parametrize("code_offset", [0, 2**55 - 300])
def test_ranks_with_near_ties_signs_and_zero_match_a_plain_sort(code_offset: int) -> None:
    rng = np.random.default_rng(11)
    n = 20_000
    run_q = rng.integers(0, 300, n) + code_offset
    pool = np.array([0.0, -0.0, 1.0, -1.0, 1.0 + 2**-40, 1.0 - 2**-45, -1.0 - 2**-44, 3e-300, -3e-300, 7.5])
    score = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.normal(0, 10, n))
    doc = np.array([f"d{i % 997}-{i // 997}" for i in range(n)], dtype=object)
    expected = reference_ranks(run_q, score, doc)
    rows = np.arange(n)
    assert np.array_equal(ranks_of(run_q, score, doc, 300, rows), expected)
    ordered = np.lexsort((score, run_q))  # grouped by query, ascending: not in rank order
    assert np.array_equal(ranks_of(run_q[ordered], score[ordered], doc[ordered], 300, rows), expected[ordered])
    in_rank_order = np.lexsort((rng.random(n), -score, run_q))  # score order (the fast path), ties shuffled
    some = rng.choice(n, 500, replace=False)
    ranks = ranks_of(run_q[in_rank_order], score[in_rank_order], doc[in_rank_order], 300, some)
    assert np.array_equal(ranks, expected[in_rank_order][some])


def test_query_order_handles_more_than_65536_queries() -> None:
    rng = np.random.default_rng(5)
    run_q = rng.integers(0, 70_000, 200_000)
    score = rng.permutation(200_000).astype(np.float64)  # distinct scores
    doc = np.array([f"d{i}" for i in range(200_000)], dtype=object)
    ranks = ranks_of(run_q, score, doc, 70_000, np.arange(200_000))
    assert np.array_equal(ranks, reference_ranks(run_q, score, doc))
