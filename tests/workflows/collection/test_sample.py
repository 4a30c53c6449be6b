"""collection pool and sample: the pool is the systems' top documents with their ranks, the sample's
inclusion probabilities are right (a Horvitz-Thompson simulation with known truth) and labelled pairs
are never drawn again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.evaluation.strata import allocate, horvitz_thompson
from rankscope.judging.base import Pair
from rankscope.judging.cache import JudgmentCache
from rankscope.retrieval.registry import make_retriever
from rankscope.workflows.collection.ingest import init_collection
from rankscope.workflows.collection.labels import person, save_label
from rankscope.workflows.collection.layout import collection_dataset
from rankscope.workflows.collection.sample import (
    band_of,
    design,
    draw,
    draw_sample,
    stratify,
)
from tests.workflows.tiny_collection import QUERIES, TEXTS


def synthetic_pool(seed: int = 3) -> tuple[pd.DataFrame, dict[tuple[str, str], int]]:
    """Three systems' top 20 for 40 queries over 60 documents each, overlapping, and a relevance per pair
    that is likelier at top ranks (the truth the estimates are checked against)."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(40):
        base = rng.permutation(60)
        for s, name in enumerate(("a", "b", "c")):
            order = base.copy()
            swaps = rng.choice(60, size=(10 + 10 * s, 2))
            for i, j in swaps:
                order[i], order[j] = order[j], order[i]
            rows += [(name, f"q{q}", f"d{order[r]}", r + 1) for r in range(20)]
    ranks = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "rank"])
    best = ranks.groupby(["query_id", "doc_id"])["rank"].min()
    truth = {pair: int(rng.random() < 0.7 / np.sqrt(rank)) for pair, rank in best.items()}
    return ranks, truth


def test_bands_and_allocation() -> None:
    assert [band_of(r) for r in (1, 2, 3, 4, 7, 8, 15, 16, 100)] == [
        "1",
        "2-3",
        "2-3",
        "4-7",
        "4-7",
        "8-15",
        "8-15",
        "16-31",
        "64-127",
    ]
    assert allocate([100, 100], [1, 4], 20) == [14, 6]  # weights 100 : 100/log2(5) = 43.1, as 14 : 6
    assert allocate([3, 0, 50], [1, 2, 4], 30) == [3, 0, 27]  # capped at the stratum's size
    assert allocate([5, 5, 5], [1, 2, 4], 2) == [1, 1, 0]  # too small a budget for one each: by weight
    assert allocate([2, 3], [1, 2], 99) == [2, 3]


@pytest.mark.slow
def test_horvitz_thompson_is_unbiased_over_2000_samples() -> None:
    """The must-show: the mean of 2,000 HT estimates (each a sample of 150 of the pool's pairs) is within
    3 standard errors of the true totals, for the pool and for one system's top 10; an estimate that
    ignores the probabilities is not (the test can fail)."""
    ranks, truth = synthetic_pool()
    frame = stratify(ranks, ["a", "b", "c"])
    y = np.array([truth[(q, d)] for q, d in zip(frame["query_id"], frame["doc_id"])])
    in_a10 = frame.merge(ranks[(ranks["system"] == "a") & (ranks["rank"] <= 10)], on=["query_id", "doc_id"], how="left")
    a10 = in_a10["system_y"].notna().to_numpy()
    totals = {"pool": y.sum(), "a@10": y[a10].sum()}
    estimates: dict[str, list[float]] = {"pool": [], "a@10": [], "naive": []}
    plan = design(frame, 150)
    for seed in range(2000):
        at = draw(plan, seed)
        pi = plan.probability[plan.codes[at]]
        assert len(at) == 150 and len(set(at)) == 150
        estimates["pool"].append(horvitz_thompson(y[at], pi))
        estimates["a@10"].append(horvitz_thompson(y[at] * a10[at], pi))
        estimates["naive"].append(len(frame) * y[at].mean())
    rows, strata = draw_sample(frame, 150, 0)  # what sample_collection writes: the same draw, as rows
    assert list(rows["inclusion_probability"]) == list(plan.probability[plan.codes[draw(plan, 0)]])
    for name, truth_total in totals.items():
        values = np.array(estimates[name])
        standard_error = values.std(ddof=1) / np.sqrt(len(values))
        assert abs(values.mean() - truth_total) < 3 * standard_error, (name, values.mean(), truth_total, standard_error)
    naive = np.array(estimates["naive"])
    assert abs(naive.mean() - totals["pool"]) > 3 * naive.std(ddof=1) / np.sqrt(len(naive))
    assert strata["probability"].between(0, 1).all() and (strata["drawn"] >= 1).all()
    assert strata["probability"].iloc[0] > strata["probability"].iloc[-1]  # top ranks sampled more


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for doc_id, text in TEXTS.items():
        (docs / f"{doc_id}.txt").write_text(text + "\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(f'{{"id": "{q}", "text": "{t}"}}\n' for q, t in QUERIES.items()))
    init_collection(tmp_path / "c", [docs], queries=questions)
    return tmp_path / "c"


def test_pool_records_each_systems_ranks(collection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collection", "pool", str(collection), "--systems", "bm25", "tfidf", "--depth", "3"]) == 0
    assert "pooled pairs from 2 systems at depth 3" in capsys.readouterr().out
    pool = pd.read_csv(collection / "pool.tsv", sep="\t", dtype=str).astype({"rank": int})
    data = collection_dataset(collection)
    for spec in ("bm25", "tfidf"):
        run = make_retriever(spec).index(data.corpus).search(data.queries, k=3)
        expected = run[["query_id", "doc_id", "rank"]].sort_values(["query_id", "doc_id"]).reset_index(drop=True)
        mine = pool[pool["system"] == spec][["query_id", "doc_id", "rank"]].sort_values(["query_id", "doc_id"])
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), expected, check_dtype=False)
    assert main(["collection", "pool", str(collection)]) == 2
    assert "give the systems to pool" in capsys.readouterr().err


def test_sample_never_draws_labelled_pairs(collection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collection", "pool", str(collection), "--systems", "bm25", "tfidf", "--depth", "4"]) == 0
    assert main(["collection", "sample", str(collection), "--budget", "5", "--seed", "7"]) == 0
    first = (collection / "sample.tsv").read_text()
    assert main(["collection", "sample", str(collection), "--budget", "5", "--seed", "7"]) == 0
    assert (collection / "sample.tsv").read_text() == first  # the seed decides the draw
    sample = pd.read_csv(collection / "sample.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    assert len(sample) == 5 and list(sample["position"]) == [1, 2, 3, 4, 5]
    data = collection_dataset(collection)
    texts = dict(zip(data.corpus["doc_id"], data.corpus["text"]))
    with JudgmentCache(collection) as cache:
        for q, d in zip(sample["query_id"][:3], sample["doc_id"][:3]):
            save_label(cache, person("alice"), Pair(q, d, QUERIES[q], texts[d]), 2, "", 1.0)
    capsys.readouterr()
    assert main(["collection", "sample", str(collection), "--budget", "4", "--seed", "8"]) == 0
    assert "3 pairs labelled before kept with probability 1" in capsys.readouterr().out
    again = pd.read_csv(collection / "sample.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    labelled = set(zip(sample["query_id"][:3], sample["doc_id"][:3]))
    drawn = again[again["band"] != "labelled"]
    assert len(drawn) == 4 and not labelled & set(zip(drawn["query_id"], drawn["doc_id"]))
    kept = again[again["band"] == "labelled"]
    assert set(zip(kept["query_id"], kept["doc_id"])) == labelled and (kept["inclusion_probability"] == 1.0).all()
    pool = pd.read_csv(collection / "pool.tsv", sep="\t", dtype=str)
    strata = stratify(pool.astype({"rank": int}), ["bm25", "tfidf"])
    sizes = strata[~strata.set_index(["query_id", "doc_id"]).index.isin(labelled)].groupby(["band", "system"]).size()
    for row in drawn.itertuples():  # each probability is drawn / size of its stratum
        size = sizes[(row.band, row.system)]
        assert row.inclusion_probability * size == pytest.approx(round(row.inclusion_probability * size))
    assert main(["collection", "sample", str(collection), "--budget", "0"]) == 2
