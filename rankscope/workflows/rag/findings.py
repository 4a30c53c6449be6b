"""The plain-language findings of a rag run; each quotes the numbers behind it."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rankscope.evaluation.marks import TIE_TOLERANCE
from rankscope.workflows.rag.scoring import DISTINCT_AT, WHOLE


def rag_findings(
    summary: pd.DataFrame, significance: pd.DataFrame, chunks: pd.DataFrame, baseline: str, budgets: Sequence[int]
) -> list[str]:
    """Plain-language findings; each quotes the numbers behind it."""
    out = []
    flags = {(r.metric, r.system): r for r in significance.itertuples(index=False)}
    for budget in budgets:
        metric = f"hit@{budget}tok"
        base = summary.at[baseline, metric]
        if summary[metric].max() - base <= TIE_TOLERANCE:
            out.append(
                f"Within {budget:,} tokens no chunking beats whole documents ({baseline}): "
                f"{base:.0%} of queries get evidence into the context."
            )
            continue
        top = summary[metric].max()
        best = [name for name, value in summary[metric].items() if top - value <= TIE_TOLERANCE]
        rows = [flags[(metric, name)] for name in best]
        significant = [row.significant for row in rows]
        verdict = "significant" if all(significant) else "not significant" if not any(significant) else "mixed"
        smallest = "p" if len(rows) == 1 else "smallest p"
        out.append(
            f"Within {budget:,} tokens, {_names(best)} put{'s' if len(best) == 1 else ''} evidence in the context "
            f"for {top:.0%} of queries against {base:.0%} for whole documents ({baseline}; {verdict}, "
            f"{smallest} = {min(row.p_adjusted for row in rows):.3g} after Holm)."
        )
    return out + token_findings(chunks)


def token_findings(chunks: pd.DataFrame) -> list[str]:
    """The chunk statistics in a few grouped findings (one per kind, not one per system; every
    system's numbers are in the chunks table): tokens to the first evidence, queries reaching none,
    chunked systems whose top chunks repeat documents."""
    median, p75 = chunks["median_tokens_to_first"], chunks["p75_tokens_to_first"]
    fewest, most = median.idxmin(), median.idxmax()

    def needs(name: str) -> str:
        return f"{name} (median {median[name]:,.0f}, 75th percentile {p75[name]:,.0f})"

    out = [
        f"Tokens of context the median query needs to reach its first evidence: fewest {needs(fewest)}"
        + ("" if fewest == most else f", most {needs(most)}")
        + ("" if len(chunks) <= 2 else f" (all {len(chunks)} systems in the chunks table)")
        + "."
    ]
    never = chunks["no_evidence_share"][chunks["no_evidence_share"] > 0]
    if len(never):
        worst = never.idxmax()
        out.append(
            f"{_count(len(never), 'system')} leave{'s' if len(never) == 1 else ''} some queries without evidence "
            f"within the depth (most: {worst}, {never[worst]:.0%} of queries)."
        )
    chunked = chunks.drop(index=[n for n in chunks.index if n.startswith(f"{WHOLE} / ")])
    distinct = chunked[f"distinct_docs@{DISTINCT_AT}"]
    repeating = distinct[distinct < DISTINCT_AT - 0.5]
    if len(repeating):
        span = (
            f"{repeating.iloc[0]:.1f}"
            if len(repeating) == 1
            else f"{repeating.min():.1f} ({repeating.idxmin()}) to {repeating.max():.1f}"
        )
        who = repeating.index[0] if len(repeating) == 1 else f"{len(repeating)} chunked systems"
        out.append(
            f"The top {DISTINCT_AT} chunks of {who} come from {span} distinct documents on average: several "
            "chunks of one document take context space, so Hit@k over chunks overstates the variety."
        )
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
