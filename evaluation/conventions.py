"""How the judgments were read, in words every table and report carries: tools differ here silently
(trec_eval's ``-J`` drops unjudged documents, others count them non-relevant; negative labels mean
"pooled, not judged" to trec_eval and a grade to others), so a number without this sentence is ambiguous."""

from __future__ import annotations

import numpy as np


def label_conventions(labels: object, relevance_level: int = 1, exclude_unjudged: bool = False) -> str:
    """The conventions :func:`rankscope.evaluation.evaluate` applied to qrels with these ``labels`` (their
    relevance column), with the count of negative labels; ``exclude_unjudged`` as evaluate's."""
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
    return (
        f"relevant = label >= {relevance_level}; a retrieved document without a judgment counts as non-relevant "
        f"and keeps its rank (no condensed lists, trec_eval without -J); {labels}; a query without a relevant "
        + ("judgment is left out of the means" if exclude_unjudged else "judgment scores 0 and counts in the means")
    )
