"""A real language model judging Cranfield pairs offline: xllamacpp's server with SmolLM2-135M, asked
through the ``openai:`` judge with ``grammar=1`` (llama.cpp's GBNF lets it reply ``Final score: N`` and
nothing else: unconstrained, it answered all 50 in prose). This proves the plumbing (server, client,
grammar, parser, statuses, cache); a 135M model's grades are poor, and nothing here asserts they are
good beyond being parseable (docs/judges.md). CI judges 12 pairs (about 110 s of CPU);
``RANKSCOPE_LLM_PAIRS=50`` gives the 50 of docs/judges.md's table."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from rankscope.corpora import load_dataset
from rankscope.judging import FAILED, INVALID, OK, STATUSES, Pair, make_judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.local import SMOLLM2, install_model, serve
from rankscope.judging.pairs import judge_pairs
from rankscope.judging.prompt import parse_label
from tests.needs import needs

pytestmark = [needs("xllamacpp"), pytest.mark.llm, pytest.mark.slow]
PAIRS = int(os.environ.get("RANKSCOPE_LLM_PAIRS", "12"))


def cranfield_pairs(data_dir: Path, n: int, seed: int = 0) -> tuple[list[Pair], list[int]]:
    """Half judged-relevant pairs, half random documents for the same queries (non-relevant unless judged)."""
    data = load_dataset(str(data_dir / "cranfield"))
    rng = np.random.default_rng(seed)
    queries = dict(zip(data.queries["query_id"], data.queries["text"]))
    texts = {
        d: f"{t}\n\n{x}".strip() for d, t, x in zip(data.corpus["doc_id"], data.corpus["title"], data.corpus["text"])
    }
    relevant = data.qrels[data.qrels["relevance"] > 0]
    picked = relevant.iloc[rng.choice(len(relevant), size=n // 2, replace=False)]
    judged = set(zip(data.qrels["query_id"], data.qrels["doc_id"]))
    pairs, human = [], []
    for query_id, doc_id in zip(picked["query_id"], picked["doc_id"]):
        pairs.append(Pair(query_id, doc_id, queries[query_id], texts[doc_id]))
        human.append(1)
        other = str(rng.choice(data.corpus["doc_id"]))
        pairs.append(Pair(query_id, other, queries[query_id], texts[other]))
        human.append(int((query_id, other) in judged))
    return pairs, human


def test_smollm2_judges_cranfield_pairs(data_dir: Path, tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    model = install_model()
    assert model.stat().st_size == SMOLLM2.size and install_model() == model  # kept: the second call fetches nothing
    pairs, human = cranfield_pairs(data_dir, PAIRS)
    started = time.perf_counter()
    with serve(model, threads=2, parallel=1, context=4096) as url:
        judge = make_judge(
            f"openai:model=smollm2-135m,base_url={url},max_tokens=16,concurrency=1,timeout=600,retries=1,grammar=1"
        )
        with JudgmentCache(tmp_path) as cache:
            outcome = judge_pairs(judge, pairs, cache)
            again = judge_pairs(judge, pairs, cache)
    wall = time.perf_counter() - started
    statuses = [j.status for j in outcome.judgments]
    assert len(statuses) == PAIRS and set(statuses) <= set(STATUSES)
    assert statuses.count(FAILED) == 0  # every prompt fits the context, and the server answered each
    assert outcome.invalid == statuses.count(INVALID) == 0  # the grammar leaves no room for prose
    for j in outcome.judgments:
        assert (j.label == parse_label(j.raw)) if j.status == OK else (j.label is None and parse_label(j.raw) is None)
    assert (again.calls, again.cache_hits) == (0, outcome.distinct)
    ok = [(h, int(j.label >= 1)) for h, j in zip(human, outcome.judgments) if j.status == OK]
    assert len(ok) == PAIRS and all(j.raw == f"Final score: {j.label}" for j in outcome.judgments)
    kappa = (
        cohen_kappa_score(*zip(*ok)) if len({h for h, _ in ok}) == 2 and len({g for _, g in ok}) == 2 else float("nan")
    )
    print(
        f"\nsmollm2-135m on {PAIRS} cranfield pairs: {wall:.1f} s wall, ok {statuses.count(OK)}, "
        f"invalid {outcome.invalid}, failed {outcome.failed}, kappa (relevant vs grade >= 1) {kappa:.3f}"
    )
