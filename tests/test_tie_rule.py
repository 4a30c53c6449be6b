"""Every implementation of the tie rule (score descending, then doc_id descending in byte order) against the
one reference, :func:`rankscope.corpora.schema.sort_run`, on random runs where most scores tie and doc ids
are prefixes of each other, differ in case or are not ASCII (where byte order and naive orders part)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankscope.corpora.schema import sort_run, trec_ranks
from rankscope.evaluation.loo import full_ranking_run
from rankscope.evaluation.ranking import judge_run
from rankscope.retrieval.base import make_run
from rankscope.retrieval.termcounts import doc_id_ranks
from rankscope.retrieval.topk import TermBounds, sparse_top_k, top_k, top_k_rows

IDS = np.array(["a", "ab", "b", "B", "d1", "d10", "d2", "é", "e", "z9", "Ω", "10", "9"], dtype=object)
SEEDS = range(25)


def random_run(seed: int, n_queries: int = 3) -> pd.DataFrame:
    """Each query retrieves a random subset of IDS with scores drawn from three values (so most tie)."""
    rng = np.random.default_rng(seed)
    parts = []
    for q in range(n_queries):
        docs = rng.choice(IDS, size=rng.integers(1, len(IDS) + 1), replace=False)
        scores = rng.choice([0.5, 1.0, 2.0], size=len(docs))
        parts.append(pd.DataFrame({"query_id": f"q{q}", "doc_id": docs, "score": scores}))
    return pd.concat(parts, ignore_index=True)


def reference_top(run: pd.DataFrame, k: int) -> list[list[str]]:
    ordered = sort_run(run)
    return [list(g["doc_id"][g["rank"] <= k]) for _, g in ordered.groupby("query_id", sort=True)]


def test_the_reference_is_the_definition() -> None:
    """sort_run orders exactly as sorting by (score desc, UTF-8 bytes of doc_id desc) does."""
    for seed in SEEDS:
        run = random_run(seed)
        for query_id, group in sort_run(run).groupby("query_id"):
            rows = run[run["query_id"] == query_id]
            by_definition = sorted(
                zip(rows["score"], rows["doc_id"]), key=lambda r: (r[0], r[1].encode()), reverse=True
            )
            assert list(group["doc_id"]) == [d for _, d in by_definition]
        assert (
            trec_ranks(run)
            == sort_run(run)
            .set_index(["query_id", "doc_id"])
            .loc[list(zip(run["query_id"], run["doc_id"])), "rank"]
            .to_numpy()
        ).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_evaluation_ranks(seed: int) -> None:
    """evaluation.ranking.judge_run's fast path: every document judged, so Judged.pos is its 0-based rank."""
    run = random_run(seed).sample(frac=1.0, random_state=seed)  # shuffled: the sorting path
    obj = lambda column: run[column].to_numpy(dtype=object)  # noqa: E731
    judged = judge_run(
        obj("query_id"),
        obj("doc_id"),
        np.ones(len(run), dtype=np.int64),
        obj("query_id"),
        obj("doc_id"),
        run["score"].to_numpy(),
        relevance_level=1,
        judged_only=False,
    )
    expected = sort_run(run)
    for code, query_id in enumerate(judged.query_ids):
        rows = judged.q == code
        want = expected[expected["query_id"] == query_id]
        assert (judged.pos[rows] + 1).tolist() == want["rank"].tolist()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 3, 100])
def test_retrieval_top_k(seed: int, k: int) -> None:
    """retrieval.topk (numpy and the compiled kernel) with the doc-id ranks the indexes use."""
    run = random_run(seed)
    rank = doc_id_ranks(list(IDS))
    position = {d: i for i, d in enumerate(IDS)}
    matrix = sp.csr_matrix(
        (run["score"], ([int(q[1:]) for q in run["query_id"]], [position[d] for d in run["doc_id"]])),
        shape=(3, len(IDS)),
    )
    expected = reference_top(run, k)
    positions, _ = top_k_rows(matrix, k, rank)
    assert [list(IDS[p]) for p in positions] == expected
    identity = sp.identity(len(IDS), format="csr")
    for bounds in (None, TermBounds.of(identity)):  # the kernel, exhaustive and pruned
        kernel_positions, _ = sparse_top_k(matrix, identity, k, rank, bounds)
        assert [list(IDS[p]) for p in kernel_positions] == expected
    for q, group in run.groupby("query_id", sort=True):
        cols = np.array([position[d] for d in group["doc_id"]])
        chosen = top_k(group["score"].to_numpy(), cols, k, rank)
        assert list(IDS[cols[chosen]]) == expected[int(q[1:])]


@pytest.mark.parametrize("seed", SEEDS)
def test_make_run_ordered_and_unordered(seed: int) -> None:
    run = random_run(seed).sample(frac=1.0, random_state=seed)
    groups = [g for _, g in run.groupby("query_id", sort=True)]
    made = make_run(
        [g["query_id"].iloc[0] for g in groups],
        [g["doc_id"].to_numpy() for g in groups],
        [g["score"].to_numpy() for g in groups],
    )
    pd.testing.assert_frame_equal(made, sort_run(run.sort_values("query_id", kind="stable")))


@pytest.mark.parametrize("seed", SEEDS)
def test_leave_one_out_full_ranking(seed: int) -> None:
    """evaluation.loo.full_ranking_run: catalogue in doc_id-descending order, then a stable score sort."""
    run = random_run(seed)
    table = {(q, d): s for q, d, s in zip(run["query_id"], run["doc_id"], run["score"])}
    users = sorted(run["query_id"].unique())
    scores = lambda user, items: np.array([table.get((user, i), 0.1) for i in items])  # noqa: E731
    seen = pd.DataFrame({"query_id": pd.Series([], dtype=object), "doc_id": pd.Series([], dtype=object)})
    got = full_ranking_run(scores, users, list(IDS), seen, k=5)
    full = pd.DataFrame(
        [(u, d, table.get((u, d), 0.1)) for u in users for d in IDS], columns=["query_id", "doc_id", "score"]
    )
    assert [list(g["doc_id"]) for _, g in got.groupby("query_id", sort=True)] == reference_top(full, 5)
