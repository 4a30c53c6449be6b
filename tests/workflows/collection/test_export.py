"""collection export: merged qrels (people over judges, the low median of several people), the judgments
table with sources and inclusion probabilities, agreement, and a folder compare reads."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.load import load_dataset
from rankscope.judging.base import JudgeIdentity, Judgment, Pair
from rankscope.judging.cache import JudgmentCache, pair_key
from rankscope.workflows.collection.labels import person, save_label
from tests.workflows.collection.labelled import sampled_collection
from tests.workflows.tiny_collection import QUERIES, TEXTS


def test_export_merges_labels_and_compare_reads_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3, budget=8)
    assert main(["collection", "export", str(folder)]) == 2
    assert "no labels yet" in capsys.readouterr().err
    sample = pd.read_csv(folder / "sample.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    pairs = list(zip(sample["query_id"], sample["doc_id"]))
    alice = [3, 2, 0, 1, 2, 0, 3, 1]
    bob = {0: 1, 1: 2, 2: 0, 3: 3}  # overlap on the first four
    carol = {0: 2}
    judge = JudgeIdentity("openai", "m")
    extra = next((q, f"docs/{d}.txt") for q in QUERIES for d in TEXTS if (q, f"docs/{d}.txt") not in pairs)
    with JudgmentCache(folder) as cache:
        for i, (q, d) in enumerate(pairs):
            pair = Pair(q, d, QUERIES[q], TEXTS[Path(d).stem])
            save_label(cache, person("alice"), pair, alice[i], "", 1.0)
            if i in bob:
                save_label(cache, person("bob"), pair, bob[i], "", 2.0)
            if i in carol:
                save_label(cache, person("carol"), pair, carol[i], "", 2.0)
        cache.add_judge(judge)
        for q, d in [pairs[4], extra]:
            key = pair_key(judge, Pair(q, d, QUERIES[q], TEXTS[Path(d).stem]), reads_ids=False)
            cache.link(judge.key, [(q, d, key)])
            cache.record(judge.key, key, Judgment(3, "ok", "Final score: 3"))
    assert main(["collection", "export", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "9 judged pairs" in out and "agreement human:alice and human:bob: kappa" in out
    table = pd.read_csv(
        folder / "judgments.tsv", sep="\t", dtype={"query_id": str, "doc_id": str}, keep_default_na=False
    )
    rows = {
        (q, d): (r, s, p)
        for q, d, r, s, p in zip(
            table["query_id"], table["doc_id"], table["relevance"], table["source"], table["people"]
        )
    }
    assert rows[pairs[0]] == (2, "human:alice+bob+carol", 3)  # grades 3, 1, 2: the median
    assert rows[pairs[1]] == (2, "human:alice+bob", 2)
    assert rows[pairs[3]] == (1, "human:alice+bob", 2)  # grades 1 and 3: the lower
    assert rows[pairs[4]] == (2, "human:alice", 1)  # a person's grade, not the judge's 3
    assert rows[extra] == (3, "openai:m", 0)
    probability = dict(zip(zip(table["query_id"], table["doc_id"]), table["inclusion_probability"]))
    sampled = dict(zip(pairs, sample["inclusion_probability"]))
    assert all(float(probability[p]) == sampled[p] for p in pairs) and probability[extra] == ""
    data = load_dataset(folder)  # the BEIR folder every workflow loads
    assert len(data.qrels) == 9 and set(data.qrels["query_id"]) <= set(QUERIES)
    human = load_dataset(folder, split="human")
    assert len(human.qrels) == 8
    provenance = json.loads((folder / "collection.json").read_text())
    assert provenance["labels"] == {"human:alice": 8, "human:bob": 4, "human:carol": 1, "openai:m": 2}
    assert provenance["sample"]["budget"] == 8 and list(provenance["pool"]["systems"]) == ["bm25"]
    assert set(provenance["annotators"]) == {"human:alice", "human:bob", "human:carol"}
    from sklearn.metrics import cohen_kappa_score

    kappa = {row["between"]: row["kappa"] for row in provenance["agreement"]}
    assert kappa["human:alice and human:bob"] == pytest.approx(
        cohen_kappa_score(alice[:4], [bob[i] for i in range(4)], labels=[0, 1, 2, 3]), abs=1e-12
    )
    compared = ["compare", "--dataset", str(folder), *"--retrievers bm25 tfidf --metrics ndcg@10 --format json".split()]
    status = main(["--quiet", *compared])
    assert status == 0
