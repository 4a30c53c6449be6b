"""statAP (Aslam, Pavlu & Yilmaz 2006; Pavlu & Aslam 2007): average precision estimated from a judged sample
whose pairs were drawn with known inclusion probabilities (``rankscope collection sample`` records them;
``collection export`` writes them in ``judgments.tsv``).

Per query, with the sampled pairs s, their labels x (1 if relevant) and inclusion probabilities pi:

- R^ = sum_s x_s / pi_s, the Horvitz-Thompson estimate of the number of relevant documents;
- for a sampled relevant document at rank k of the run, the precision at k is estimated as
  (1 + sum over sampled documents above it of x / pi) / k (the document itself is known relevant);
- statAP = (1 / R^) * sum over sampled relevant retrieved documents of that precision / pi.

R^ and the sum are each unbiased when pairs are included independently (Poisson sampling); statAP is
their ratio, so it is consistent rather than exactly unbiased (a small bias with few relevant documents
sampled). With every pair judged (pi = 1) it is AP.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.corpora.schema import sort_run, validate

COLUMNS = ("query_id", "r_hat", "precision_sum", "stat_ap")


def stat_ap(sample: pd.DataFrame, run: pd.DataFrame, relevance_level: int = 1) -> pd.DataFrame:
    """Per query of ``sample`` (columns ``query_id, doc_id, relevance, inclusion_probability``; rows
    without a probability are not part of the sample and are left out): :data:`COLUMNS`.

    ``precision_sum`` is the estimate of the sum of precisions at the relevant retrieved documents, so
    ``stat_ap = precision_sum / r_hat`` (0 when ``r_hat`` is 0). ``run`` is ranked by trec_eval's order.
    """
    missing = {"query_id", "doc_id", "relevance", "inclusion_probability"} - set(sample.columns)
    if missing:
        raise RankscopeError(f"statAP needs the sample's columns {sorted(missing)}")
    drawn = sample[sample["inclusion_probability"].notna()]
    probability = drawn["inclusion_probability"].astype(float).to_numpy()
    if len(drawn) and not ((probability > 0) & (probability <= 1)).all():
        raise RankscopeError("statAP: every inclusion probability must be in (0, 1]")
    drawn = drawn.assign(
        query_id=drawn["query_id"].astype(str),
        doc_id=drawn["doc_id"].astype(str),
        weight=np.where(drawn["relevance"].to_numpy() >= relevance_level, 1.0 / probability, 0.0),
    )
    ranked = sort_run(validate(run, "run", "run"))[["query_id", "doc_id", "rank"]]
    found = drawn.merge(ranked, on=["query_id", "doc_id"], how="left").sort_values(["query_id", "rank"])
    rows = []
    for query_id, group in drawn.groupby("query_id", sort=True):
        retrieved = found[(found["query_id"] == query_id) & found["rank"].notna()]
        weights = retrieved["weight"].to_numpy()
        above = np.cumsum(weights) - weights  # estimated relevant documents ranked above each
        relevant = weights > 0
        precision = (1.0 + above[relevant]) / retrieved["rank"].to_numpy()[relevant]
        total = float(np.sum(precision * weights[relevant]))
        r_hat = float(group["weight"].sum())
        rows.append((query_id, r_hat, total, total / r_hat if r_hat else 0.0))
    return pd.DataFrame(rows, columns=list(COLUMNS))
