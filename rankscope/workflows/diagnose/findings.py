"""Plain-language findings generated from diagnosis numbers.

Each rule compares numbers against a named threshold below; docs/workflows.md
lists them. A finding always quotes the numbers that triggered it, so a reader
can check the claim against the tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

HIGH_HIT = 0.6
"""Hit@K at or above this is "high": most queries get a relevant document in the top K."""
LOW_HIT = 0.5
"""Hit@K below this is "low"."""
LOW_MRR_RATIO = 0.5
"""MRR@K / Hit@K below this means that, among queries with a hit, the first relevant
document typically sits below rank 2 (the ratio is the mean reciprocal rank of the hits)."""
LOW_RECALL = 0.5
"""Recall@100 below this, with Hit@100 high, means most relevant documents are missed even
though most queries get one: fine for finding an answer, weak for recall-oriented search."""
SHARP_GAP = 0.15
"""Hit@20 - Hit@5 at least this means many first relevant documents sit at ranks 6-20."""
RECALL_MISS_SHARE = 0.10
"""A share of queries with no relevant document within the depth worth calling out."""
UNCHANGED = 0.01
"""With --vs, metric differences smaller than this count as unchanged."""
FLATTERS = 1.2
"""A sampled-protocol value at least this many times the full-ranking one "flatters"."""
COMPLEMENTARY = 0.10
"""With --vs, the other system retrieving at least this share of one's recall losses makes a case for fusion."""
HIGH_OOV = 0.05
"""A share of document or query tokens unknown to the word vectors worth calling out."""

_ANN_RECALL = re.compile(r"(?:^|\s)ann_recall@(\d+)$")


def queries(n: int) -> str:
    """``1 query``, ``2 queries``."""
    return f"{n} query" if n == 1 else f"{n} queries"


def _at(cutoffs: pd.DataFrame, column: str, k: int) -> float | None:
    return float(cutoffs.at[k, column]) if k in cutoffs.index else None


def _summary_k(table: pd.DataFrame) -> int:
    """The K findings speak about: 10, or the largest K when the depth is below 10."""
    return 10 if 10 in table.index else int(table.index.max())


def loss_findings(name: str, losses: pd.DataFrame, depth: int) -> list[str]:
    """Where the relevant documents are at K=10: found, ranking losses, recall losses (counts and shares).

    ``losses`` is :func:`rankscope.workflows.diagnose.misses.loss_summary` output (index K).
    """
    k = _summary_k(losses)
    row = losses.loc[k]
    return [
        f"{name}: of {int(row['relevant'])} relevant documents of {queries(int(row['queries']))}, "
        f"{int(row['found'])} are in the top {k}, {int(row['ranking_loss'])} are ranking losses (within the "
        f"top {depth} but below {k}: a reranker can lift them) and {int(row['recall_loss'])} are recall losses "
        f"(not within the top {depth}: only a better first stage can find them); per query that is "
        f"{row['found_share']:.0%} found (Recall@{k} = {row['found_share']:.3f}), "
        f"{row['ranking_loss_share']:.0%} ranking and {row['recall_loss_share']:.0%} recall losses on average.",
        *unjudged_findings(name, losses, depth),
    ]


def unjudged_findings(name: str, losses: pd.DataFrame, depth: int) -> list[str]:
    """What fills the top 10 and the top ``depth`` besides relevant documents: judged non-relevant
    ones (a real loss) or unjudged ones (perhaps relevant: a hole in the judgments)."""
    if "unjudged" not in losses.columns:
        return []
    k = _summary_k(losses)
    row = losses.loc[k]
    slots = int(row["judged_nonrelevant"] + row["unjudged"])
    if not slots:
        return []
    text = (
        f"{name}: the top {k} slots not holding a relevant document hold {int(row['judged_nonrelevant'])} judged "
        f"non-relevant and {int(row['unjudged'])} unjudged documents ({row['unjudged'] / slots:.0%} unjudged)"
    )
    if depth in losses.index and depth != k:
        deep = losses.loc[depth]
        text += f"; within the top {depth}, {int(deep['unjudged'])} unjudged against {int(deep['judged_nonrelevant'])} judged non-relevant"
    if row["unjudged"] > row["judged_nonrelevant"]:
        return [
            text
            + ": most losses are measured against documents nobody judged, so they may be holes in the judgments rather than ranking or recall errors (rankscope judge fills them)."
        ]
    return [text + "."]


def headroom_findings(name: str, summary: pd.DataFrame, depth: int) -> list[str]:
    """The first metric's gap in points: what a perfect reranker over the top ``depth`` wins, what needs recall.

    ``summary`` is :attr:`rankscope.workflows.diagnose.headroom.Headroom.summary` (index metric).
    """
    metric = str(summary.index[0])
    row = summary.loc[metric]
    larger = "ranking" if row["ranking_headroom"] >= row["recall_headroom"] else "recall"
    return [
        f"{name}: a perfect reranker over the top {depth} would take {metric} from {row['actual']:.3f} to "
        f"{row['oracle']:.3f} ({row['ranking_headroom']:+.3f}); the remaining {row['recall_headroom']:.3f} to the "
        f"ideal {row['ideal']:.3f} needs recall (a better first stage); the {larger} gap is the larger."
    ]


def failure_findings(name: str, summary: pd.DataFrame, depth: int) -> list[str]:
    """Why the recall losses were lost: vocabulary mismatch or outscored (and judged documents missing
    from the corpus). ``summary`` is :func:`rankscope.workflows.diagnose.recall_failures.failure_summary` output."""
    from rankscope.workflows.diagnose.recall_failures import MISMATCH, MISMATCH_SHARE, NOT_IN_CORPUS, OUTSCORED

    total = int(summary["losses"].sum())
    if not total:
        return [f"{name}: every relevant document is within the top {depth}: no recall losses."]
    mismatch, outscored = int(summary.at[MISMATCH, "losses"]), int(summary.at[OUTSCORED, "losses"])
    none = int(summary.at[MISMATCH, "no_shared_term"])
    missing = int(summary.at[NOT_IN_CORPUS, "losses"])
    absent = f"; {missing} are judged documents missing from the corpus" if missing else ""
    lead = (
        "mostly vocabulary: expand the query or add a dense retriever"
        if mismatch > outscored
        else (
            "mostly scoring: tune the term weighting and length normalisation (k1, b), or fuse with another first stage"
        )
    )
    return [
        f"{name}: of its {total} recall losses, {mismatch} ({mismatch / total:.0%}) are vocabulary mismatches "
        f"(the document holds fewer than {MISMATCH_SHARE:.0%} of the query's analysed terms; {none} share no term "
        f"at all) and {outscored} ({outscored / total:.0%}) were outscored (terms shared, but not ranked within "
        f"the top {depth}){absent}: {lead}."
    ]


def complementarity_findings(
    name: str, failures: pd.DataFrame, other: str, other_failures: pd.DataFrame, depth: int
) -> list[str]:
    """Which recall losses each system recovers from the other (``rank_<name>`` columns of
    :func:`rankscope.workflows.diagnose.recall_failures.recall_failures` output): the case for fusion."""
    out = []
    for lost_by, table, found_by in ((name, failures, other), (other, other_failures, name)):
        n = len(table)
        if not n:
            continue
        found = int(table[f"rank_{found_by}"].notna().sum())
        verdict = (
            "they find different documents: fusing them should raise recall"
            if found >= COMPLEMENTARY * n
            else "fusing them would recover little"
        )
        out.append(
            f"{name} vs {other}: {found_by} retrieves {found} ({found / n:.0%}) of {lost_by}'s {n} recall losses "
            f"within its top {depth}; {verdict}."
        )
    return out


def retriever_findings(name: str, cutoffs: pd.DataFrame, misses: pd.DataFrame, depth: int) -> list[str]:
    """Findings for one retriever from its Hit/Recall/MRR@K table and its miss breakdown (both indexed
    by K): the queries' view, through their first relevant document."""
    out = []
    k = _summary_k(misses)
    row = misses.loc[k]
    n_miss = int(row["ranking_misses"] + row["recall_misses"])
    if n_miss:
        kind = (
            f"mostly ranking misses: a reranker over the top {depth} could fix them"
            if row["ranking_misses"] >= row["recall_misses"]
            else "mostly recall misses: only a better first stage can fix them"
        )
        out.append(
            f"{name}: at K={k}, {n_miss} of {queries(int(row['queries']))} ({n_miss / row['queries']:.0%}) "
            f"have no relevant document in the top {k}: {int(row['ranking_misses'])} ranking misses "
            f"and {int(row['recall_misses'])} recall misses, {kind}."
        )
    else:
        out.append(f"{name}: every query has a relevant document in the top {k}.")
    hit20, mrr20 = _at(cutoffs, "hit", 20), _at(cutoffs, "mrr", 20)
    if hit20 is not None and mrr20 is not None and hit20 >= HIGH_HIT and mrr20 < LOW_MRR_RATIO * hit20:
        out.append(
            f"{name}: Hit@20 is high ({hit20:.3f}) but MRR@20 is low ({mrr20:.3f}): candidates are found "
            f"but ranked too low; for queries with a hit the mean reciprocal rank is {mrr20 / hit20:.2f} "
            f"(threshold {LOW_MRR_RATIO})."
        )
    hit5 = _at(cutoffs, "hit", 5)
    if hit5 is not None and hit20 is not None and hit5 < LOW_HIT and hit20 - hit5 >= SHARP_GAP:
        moved = int(misses.at[5, "ranking_misses"] - misses.at[20, "ranking_misses"])
        out.append(
            f"{name}: Hit@5 is low ({hit5:.3f}) but Hit@20 is {hit20:.3f}: the top of the list is not sharp; "
            f"{queries(moved)} have their first relevant document at ranks 6-20."
        )
    hit100, recall100 = _at(cutoffs, "hit", 100), _at(cutoffs, "recall", 100)
    if hit100 is not None and recall100 is not None and hit100 >= HIGH_HIT and recall100 < LOW_RECALL:
        deep = _at(cutoffs, "recall", depth)
        beyond = f"; within the top {depth} Recall is {deep:.3f}" if deep is not None and depth != 100 else ""
        out.append(
            f"{name}: Hit@100 is {hit100:.3f} but Recall@100 only {recall100:.3f}: most queries get a relevant "
            f"document, but {1 - recall100:.0%} of the relevant documents are not in the top 100{beyond}: "
            "good for finding an answer, weak for recall-oriented search."
        )
    share = float(row["recall_miss_share"])
    if share >= RECALL_MISS_SHARE:
        out.append(
            f"{name}: {queries(int(row['recall_misses']))} ({share:.0%}) have no relevant document within "
            f"the top {depth}: no reranking can help them, only better recall (query expansion, "
            "another first stage, fusion)."
        )
    return out


def sampled_findings(name: str, table: pd.DataFrame) -> list[str]:
    """Call out the metrics the sampled protocol inflates by at least :data:`FLATTERS`.

    ``table`` has columns metric, full_per_document and sampled: the same relevant
    documents ranked among every non-relevant document versus among a sample.
    """
    inflated = [
        f"{metric} {sampled:.3f} vs {full:.3f}" + (f" ({sampled / full:.1f}x)" if full > 0 else "")
        for metric, full, sampled in table[["metric", "full_per_document", "sampled"]].itertuples(index=False)
        if (full > 0 and sampled >= FLATTERS * full) or (full == 0 and sampled > 0)
    ]
    if not inflated:
        return []
    return [
        f"{name}: the sampled protocol flatters it: {', '.join(inflated)}, sampled vs the same relevant "
        "documents ranked among all non-relevant ones."
    ]


def comparison_findings(
    name: str,
    cutoffs: pd.DataFrame,
    ranks: pd.Series,
    other: str,
    other_cutoffs: pd.DataFrame,
    other_ranks: pd.Series,
    depth: int,
) -> list[str]:
    """What changed from ``other`` to ``name``: ranking, recall, or both, with per-query counts."""
    out = []
    ks = [k for k in cutoffs.index if k in other_cutoffs.index]
    d_hit = cutoffs.loc[ks, "hit"] - other_cutoffs.loc[ks, "hit"]
    d_mrr = cutoffs.loc[ks, "mrr"] - other_cutoffs.loc[ks, "mrr"]
    ranking_only = [k for k in ks if abs(d_hit[k]) < UNCHANGED and abs(d_mrr[k]) >= UNCHANGED]
    if ranking_only:
        direction = "improved" if d_mrr[ranking_only[-1]] > 0 else "worsened"
        detail = ", ".join(f"MRR@{k} {d_mrr[k]:+.3f}" for k in ranking_only)
        out.append(
            f"{name} vs {other}: at K in {{{', '.join(map(str, ranking_only))}}} Hit@K is unchanged "
            f"(|difference| < {UNCHANGED}) while {detail}: the change {direction} ranking, not recall."
        )
    better = [k for k in ks if d_hit[k] >= UNCHANGED]
    worse = [k for k in ks if d_hit[k] <= -UNCHANGED]
    n = len(ranks)
    for group, word in ((better, "more"), (worse, "fewer")):
        if group:
            detail = ", ".join(f"Hit@{k} {d_hit[k]:+.3f} ({round(d_hit[k] * n):+d})" for k in group)
            out.append(
                f"{name} vs {other}: {name} puts a relevant document in the top K for {word} queries ({detail})."
            )
    both = pd.concat([ranks.rename("a"), other_ranks.rename("b")], axis=1)
    found_a, found_b = both["a"].notna(), both["b"].notna()
    only_a, only_b = int((found_a & ~found_b).sum()), int((found_b & ~found_a).sum())
    if only_a or only_b:
        out.append(
            f"{name} vs {other}: within the top {depth}, {name} finds a relevant document for {queries(only_a)} "
            f"where {other} finds none, and misses {only_b} that {other} finds (recall)."
        )
    common = both[found_a & found_b]
    higher = int(np.sum(common["a"] < common["b"]))
    lower = int(np.sum(common["a"] > common["b"]))
    out.append(
        f"{name} vs {other}: of {len(common)} queries both retrieve, {name} ranks the first relevant "
        f"document higher on {higher}, lower on {lower} and at the same rank on {len(common) - higher - lower} (ranking)."
    )
    return out


def diagnostics_findings(name: str, diagnostics: Mapping[str, float]) -> list[str]:
    """What a retriever's own numbers (``Retriever.diagnostics()``) mean for its diagnosis: an approximate
    index that drops part of the exact top K, and word vectors that miss many tokens."""
    found = []
    for key, value in diagnostics.items():
        ann = _ANN_RECALL.search(key)
        if ann and value < 1:
            k = ann.group(1)
            found.append(
                f"{name}: its approximate index returns {value:.1%} of the exact top {k} ({key} {value:.4f}); the "
                "documents it drops are recall losses of the index, not of the model: raise ef_search (hnsw) or "
                "nprobe (ivf), or use faiss_index=flat"
            )
        elif key.endswith(("oov_documents", "oov_queries")) and value >= HIGH_OOV:
            which = "document" if key.endswith("oov_documents") else "query"
            found.append(
                f"{name}: {value:.1%} of {which} tokens are unknown to its word vectors ({key} {value:.4f}) and "
                "count for nothing in the embeddings: vectors trained on the collection (vectors=corpus) know every document word"
            )
    return found
