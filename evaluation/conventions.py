"""How the judgments were read, in words every table and report carries: tools differ here silently
(trec_eval's ``-J`` drops unjudged documents, others count them non-relevant; negative labels mean
"pooled, not judged" to trec_eval and a grade to others), so a number without this sentence is ambiguous."""

from __future__ import annotations

from typing import Any

import numpy as np

WORKFLOW_EXCLUDE_UNJUDGED = True
"""The one rule of the workflows that score systems (compare, diagnose, rag, gate) for a query whose judgments hold
no relevant document: it is left out of the means, since it can be neither hit nor missed and scoring it 0
only lowers every system's mean alike (a collection's 23 questions gave bm25 nDCG@10 0.6830 in compare and
0.7480 in diagnose, 2 of them without a relevant document). ``rankscope evaluate`` keeps trec_eval's rule
(such a query scores 0 and counts) so that its numbers equal trec_eval's; every report states the rule
that made its numbers and how many queries it touched (:func:`label_conventions`)."""

FOLLOWING = frozenset({"compare", "diagnose", "rag", "gate"})
"""The workflows scored by :data:`WORKFLOW_EXCLUDE_UNJUDGED` (their provenance states it)."""

INTERVALS_RULE = (
    "intervals (naive, PPI, PPI++) and ranking agreement estimate the mean over every judged query, one fixed "
    "population whichever labels, people's or the judge's, hold a relevant document, so there a query without "
    "a relevant judgment scores 0 and counts"
)
"""Why the human-sample intervals (compare's and judge's) keep trec_eval's rule where compare's table does not."""

WHY_COUNTED = {
    "evaluate": "kept by rankscope evaluate so its numbers equal trec_eval's",
    "judge": f"kept by rankscope judge: its {INTERVALS_RULE}",
}
"""Why a command that scores systems keeps trec_eval's rule instead (the sentence under its numbers says it)."""


def queries_without_relevant(qrels: Any, relevance_level: int = 1) -> tuple[int, int]:
    """How many of the judged queries of ``qrels`` (query_id, relevance) have no relevant judgment, and of how many."""
    relevant = np.asarray(qrels["relevance"]) >= relevance_level
    queries = np.asarray(qrels["query_id"])
    judged = len(np.unique(queries))
    return judged - len(np.unique(queries[relevant])), judged


def label_conventions(
    labels: object,
    relevance_level: int = 1,
    exclude_unjudged: bool = False,
    counts: tuple[int, int] | None = None,
    why: str = "",
) -> str:
    """The conventions :func:`rankscope.evaluation.evaluate` applied to qrels with these ``labels`` (their
    relevance column), with the count of negative labels; ``exclude_unjudged`` as evaluate's; ``counts``
    (:func:`queries_without_relevant`) adds how many queries that rule touched, ``why`` (:data:`WHY_COUNTED`)
    why trec_eval's rule was kept."""
    values = np.asarray(labels)
    negative = values[values < 0]
    if len(negative):
        shown = ", ".join(str(int(v)) for v in np.unique(negative))
        labels = (
            f"{len(negative):,} judgments carry a negative label ({shown}): read as pooled but not judged "
            "(trec_eval's -1): never relevant, no gain, outside R and bpref's judged non-relevant, the unjudged "
            "part of infap's sample"
        )
    else:
        labels = "no judgment carries a negative label (trec_eval's -1, pooled but not judged)"
    counted = "" if counts is None else f" ({counts[0]} of {counts[1]} judged queries here)"
    rule = (
        "is left out of the means (the rule of compare, diagnose, rag and gate)"
        if exclude_unjudged
        else f"scores 0 and counts in the means (trec_eval's rule{', ' + why if why else ''}; compare, diagnose and "
        "rag leave such queries out)"
    )
    return (
        f"relevant = label >= {relevance_level}; a retrieved document without a judgment counts as non-relevant "
        f"and keeps its rank (no condensed lists, trec_eval without -J); {labels}; a query without a relevant "
        f"judgment{counted} {rule}"
    )
