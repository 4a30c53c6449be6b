"""The metric formulas, each computed for all queries at once from a :class:`Judged` table.

Notation per query: ``R`` = number of relevant judgments (label >= relevance level,
retrieved or not), ``N`` = judged non-relevant (0 <= label < level), ``ret`` =
documents retrieved, ``rel(i)`` = 1 if the document at rank ``i`` (1-based) is
relevant. Unjudged documents are non-relevant. Negative labels mean "in the pool
but unjudged", as in trec_eval: never relevant, no gain, and not counted in ``N``.
A value whose denominator is 0 is 0 (trec_eval's convention). Every function
returns one float64 per query.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.ranking import Judged, group_positions


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0."""
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(len(den)), where=den != 0)


def _hits_at(j: Judged, k: int) -> np.ndarray:
    return j.per_query_sum(j.relevant & (j.pos < k))


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    return _ratio(2.0 * p * r, p + r)


def precision_at(j: Judged, k: int) -> np.ndarray:
    """P@k = (relevant in top k) / k; divides by k even when fewer than k were retrieved (trec_eval P.k)."""
    return _hits_at(j, k) / float(k)


def recall_at(j: Judged, k: int) -> np.ndarray:
    """recall@k = (relevant in top k) / R (trec_eval recall.k)."""
    return _ratio(_hits_at(j, k), j.num_rel)


def f1_at(j: Judged, k: int) -> np.ndarray:
    """f1@k = 2 P@k recall@k / (P@k + recall@k), with P@k dividing by k (no trec_eval equivalent)."""
    return _f1(precision_at(j, k), recall_at(j, k))


def hit_at(j: Judged, k: int) -> np.ndarray:
    """hit@k = 1 if any relevant document is in the top k, else 0 (trec_eval success.k)."""
    return (_hits_at(j, k) > 0).astype(np.float64)


def reciprocal_rank(j: Judged, k: int | None = None) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant document if that rank <= k, else 0.

    Without k this is trec_eval's recip_rank; with k it is the usual MRR@k cut.
    """
    rel = j.relevant
    q, pos = j.q[rel], j.pos[rel]
    first_q, first_at = np.unique(q, return_index=True)  # rows are sorted by (query, rank)
    first_pos = pos[first_at]
    if k is not None:
        first_q, first_pos = first_q[first_pos < k], first_pos[first_pos < k]
    out = np.zeros(j.n_queries)
    out[first_q] = 1.0 / (first_pos + 1.0)
    return out


def average_precision(j: Judged, k: int | None = None) -> np.ndarray:
    """AP@k = (1/R) * sum over relevant retrieved at rank i <= k of (relevant in top i) / i.

    Divides by all R relevant judgments, retrieved or not (trec_eval map and map_cut.k).
    """
    rel = j.relevant
    q, pos = j.q[rel], j.pos[rel]
    seen = group_positions(q, j.n_queries) + 1.0  # relevant documents up to and including this one
    precision = seen / (pos + 1.0)
    if k is not None:
        precision = np.where(pos < k, precision, 0.0)
    return _ratio(j.per_query_sum(precision, q), j.num_rel)


def r_precision(j: Judged) -> np.ndarray:
    """R-precision = (relevant in top R) / R, R = number of relevant judgments (trec_eval Rprec)."""
    return _ratio(j.per_query_sum(j.relevant & (j.pos < j.num_rel[j.q])), j.num_rel)


def bpref(j: Judged) -> np.ndarray:
    """bpref = (1/R) * sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)).

    ``n_r`` = judged non-relevant documents ranked above r; a term is 1 when n_r = 0.
    Unjudged and negative-label documents are skipped, exactly as trec_eval's bpref.
    """
    nonrel = ((j.label >= 0) & ~j.relevant).astype(np.int64)
    first_row = np.arange(len(j.q)) - group_positions(j.q, j.n_queries)  # of each row's query
    before = np.cumsum(nonrel) - nonrel  # non-relevant strictly above, across queries
    above = before - before[first_row]
    rel = j.relevant
    n_r, big_r, big_n = above[rel], j.num_rel[j.q[rel]], j.num_nonrel[j.q[rel]]
    term = np.where(n_r > 0, 1.0 - np.minimum(n_r, big_r) / np.maximum(np.minimum(big_n, big_r), 1), 1.0)
    return _ratio(j.per_query_sum(term, j.q[rel]), j.num_rel)


INFAP_EPSILON = 0.00001
"""trec_eval's INFAP_EPSILON: keeps the estimated precision above a relevant document finite."""


def inferred_ap(j: Judged) -> np.ndarray:
    """infAP (Yilmaz & Aslam 2006), trec_eval's estimator (m_infAP.c), for a judged random sample of a pool.

    Documents retrieved but absent from the qrels are outside the pool and count as non-relevant;
    a negative label means "in the pool, not judged" (trec_eval's -1, any negative label in
    trec_eval 9.0 and later). For the relevant document at rank i > 1 with, above it, r relevant,
    n judged non-relevant and u pooled-but-unjudged documents, the term is
    1/i + ((i-1)/i) * ((r+n+u)/(i-1)) * ((r+eps)/(r+n+2 eps)), 1 at rank 1; infAP = sum / R.
    With every pooled document judged it equals AP.
    """
    rel = j.relevant
    judged = j.label >= 0
    columns = np.stack([rel, judged & ~rel, ~judged]).astype(np.int64)
    first_row = np.arange(len(j.q)) - group_positions(j.q, j.n_queries)  # of each row's query
    before = np.cumsum(columns, axis=1) - columns  # strictly above, across queries
    r, n, u = (before - before[:, first_row])[:, rel]
    i = j.pos[rel].astype(np.float64)  # 0-based rank, trec_eval's j
    above = np.maximum(i, 1.0)  # rank 1 takes the first branch; no division by 0 there
    term = 1.0 / (i + 1.0) + (i / (i + 1.0)) * ((r + n + u) / above) * (
        (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
    )
    term = np.where(i == 0, 1.0, term)
    return _ratio(j.per_query_sum(term, j.q[rel]), j.num_rel)


def _dcg(j: Judged, k: int | None, gain: np.ndarray, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
    weight = gain / np.log2(pos + 2.0)
    if k is not None:
        weight = np.where(pos < k, weight, 0.0)
    return j.per_query_sum(weight, q)


def _ndcg(j: Judged, k: int | None, gain_of: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    positive = j.label > 0
    dcg = _dcg(j, k, np.where(positive, gain_of(np.maximum(j.label, 0)), 0.0), j.q, j.pos)
    ideal = _dcg(j, k, gain_of(j.ideal_label), j.ideal_q, j.ideal_pos)
    return _ratio(dcg, ideal)


def _linear_gain(label: np.ndarray) -> np.ndarray:
    return label.astype(np.float64)


MAX_EXP_LABEL = 1000
"""Largest label exponential gain takes: 2^1000 summed over millions of documents stays finite;
beyond it 2^label overflows to inf and nDCG becomes NaN, so such a label is refused, not scored."""


def _exp_gain(label: np.ndarray) -> np.ndarray:
    if len(label) and int(label.max()) > MAX_EXP_LABEL:
        raise RankscopeError(
            f"relevance {int(label.max())} is too large for exponential-gain nDCG (2^label overflows; "
            f"at most {MAX_EXP_LABEL}); use linear-gain ndcg"
        )
    return np.exp2(label.astype(np.float64)) - 1.0


def ndcg(j: Judged, k: int | None = None, gains: tuple[tuple[int, float], ...] = ()) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = sum_{i<=k} gain(label_i) / log2(i + 1), gain = label.

    trec_eval's ndcg / ndcg_cut.k (what BEIR and Pyserini report): linear gain, labels
    <= 0 give 0, the ideal ranking sorts all positive judgments of the query by label
    (retrieved or not), and the relevance level plays no part. 0 when IDCG = 0.
    ``gains`` ((label, gain) pairs; other labels keep their value) is ir_measures' ``nDCG(gains=...)``:
    trec_eval's nDCG of the qrels with those gains as labels (the ideal ranking sorted by gain).
    """
    if not gains:
        return _ndcg(j, k, _linear_gain)
    table = dict(gains)

    def gain_of(labels: np.ndarray) -> np.ndarray:
        values, where = np.unique(labels, return_inverse=True)
        mapped = np.array([table.get(int(v), float(v)) for v in values], dtype=np.float64)
        return np.maximum(mapped, 0.0)[where.reshape(-1)] if len(values) else np.zeros(0)

    dcg = _dcg(j, k, np.where(j.label > 0, gain_of(j.label), 0.0), j.q, j.pos)
    ideal_gain = gain_of(j.ideal_label)
    order = np.lexsort((-ideal_gain, j.ideal_q))
    ideal_q = j.ideal_q[order]
    starts = np.flatnonzero(np.r_[True, ideal_q[1:] != ideal_q[:-1]]) if len(ideal_q) else np.zeros(0, np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, len(ideal_q)]))
    ideal = _dcg(j, k, ideal_gain[order], ideal_q, np.arange(len(ideal_q)) - first)
    return _ratio(dcg, ideal)


def ndcg_exp(j: Judged, k: int | None = None) -> np.ndarray:
    """nDCG@k with exponential gain 2^label - 1 (the recommender-systems convention).

    Same discount, ideal ranking and handling of labels <= 0 as :func:`ndcg`; equal to
    it on binary labels. Not a trec_eval measure.
    """
    return _ndcg(j, k, _exp_gain)


def _set_counts(j: Judged, threshold: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(relevant retrieved, retrieved) per query; 'retrieved' means score >= threshold if given."""
    if threshold is None:
        return j.per_query_sum(j.relevant), j.num_ret
    retrieved = np.bincount(j.run_q[j.run_score >= threshold], minlength=j.n_queries)
    return j.per_query_sum(j.relevant & (j.score >= threshold)), retrieved


def set_precision(j: Judged, threshold: float | None = None) -> np.ndarray:
    """Set precision = relevant retrieved / retrieved over the whole list (trec_eval set_P).

    With a threshold, only documents with score >= threshold count as retrieved.
    """
    rel_ret, ret = _set_counts(j, threshold)
    return _ratio(rel_ret, ret)


def set_recall(j: Judged, threshold: float | None = None) -> np.ndarray:
    """Set recall = relevant retrieved / R (trec_eval set_recall); threshold as :func:`set_precision`."""
    rel_ret, _ = _set_counts(j, threshold)
    return _ratio(rel_ret, j.num_rel)


def set_f1(j: Judged, threshold: float | None = None) -> np.ndarray:
    """Set F1 = 2PR / (P + R) of set precision and recall (trec_eval set_F, beta = 1)."""
    return _f1(set_precision(j, threshold), set_recall(j, threshold))


def judged_at(j: Judged, k: int | None = None) -> np.ndarray:
    """judged@k = documents in the top k with any judgment for the query / min(k, ret) (ir_measures Judged@k).

    Any label counts as a judgment, negative ones too; 0 when nothing was retrieved.
    Without k, the whole retrieved list.
    """
    judged = j.per_query_sum(np.ones(len(j.q)) if k is None else j.pos < k)
    shown = j.num_ret if k is None else np.minimum(j.num_ret, k)
    return _ratio(judged, shown)


def num_ret(j: Judged) -> np.ndarray:
    """Documents retrieved (trec_eval num_ret)."""
    return j.num_ret.astype(np.float64)


def num_rel(j: Judged) -> np.ndarray:
    """Relevant judgments R, retrieved or not (trec_eval num_rel)."""
    return j.num_rel.astype(np.float64)


def num_rel_ret(j: Judged) -> np.ndarray:
    """Relevant documents retrieved (trec_eval num_rel_ret)."""
    return j.per_query_sum(j.relevant)


def interpolated_precision(j: Judged, recall: float, trec: float = 10) -> np.ndarray:
    """Interpolated precision at a recall level: the best precision at or after the rank reaching it.

    trec_eval's iprec_at_recall: the level asks for c relevant documents, c = round(recall * R)
    (halves up) in trec_eval 10, c = floor(recall * R + 0.9) in trec_eval 9 and before
    (``trec=9``: pytrec_eval, ir_measures); the value is the maximum of (relevant so far) /
    rank over the ranks of the c-th and later relevant documents (over all of them when
    c = 0), and 0 when fewer than c relevant documents were retrieved.
    """
    rel = j.relevant
    q, pos = j.q[rel], j.pos[rel]
    seen = group_positions(q, j.n_queries) + 1
    needed = np.floor(recall * j.num_rel.astype(np.float64) + (0.9 if trec < 10 else 0.5))
    keep = seen >= needed[q]
    q, precision = q[keep], seen[keep] / (pos[keep] + 1.0)
    out = np.zeros(j.n_queries)
    if len(q):
        starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
        out[q[starts]] = np.maximum.reduceat(precision, starts)
    return out


ERR_MAX_GRADE = 4  # gdeval's MAX_JUDGMENT (TREC Web track): a document of grade g stops the user with (2^g - 1) / 2^4


def err(j: Judged, k: int | None = None) -> np.ndarray:
    """ERR@k = sum_{i<=k} R_i / i * prod_{j<i} (1 - R_j), R = (2^label - 1) / 2^4 (Chapelle et al. 2009).

    As gdeval.pl (what ir_measures' ERR@k runs): grades are capped by design at 4, so a
    label above 4 is refused; labels <= 0 and unjudged documents stop no one (R = 0).
    """
    if len(j.label) and int(j.label.max()) > ERR_MAX_GRADE:
        raise RankscopeError(f"err: labels go up to {ERR_MAX_GRADE} (gdeval's scale), found {int(j.label.max())}")
    keep = j.label > 0 if k is None else (j.label > 0) & (j.pos < k)
    q, pos, grade = j.q[keep], j.pos[keep], j.label[keep]
    first = np.arange(len(q)) - group_positions(q, j.n_queries)  # of each row's query
    # log of prod (1 - R) over the documents above each row in its query, from whole counts per
    # grade: exact counts, so a query's value never depends on the queries numbered before it
    log_reached = np.zeros(len(q))
    for g in range(1, ERR_MAX_GRADE + 1):
        is_g = (grade == g).astype(np.int64)
        above = np.cumsum(is_g) - is_g
        log_reached += (above - above[first]) * np.log1p(-(2.0**g - 1.0) / 2.0**ERR_MAX_GRADE)
    stop = (np.exp2(grade.astype(np.float64)) - 1.0) / 2.0**ERR_MAX_GRADE
    return j.per_query_sum(stop * np.exp(log_reached) / (pos + 1.0), q)


def rbp(j: Judged, k: int | None = None, p: float = 0.8, binary: bool = False) -> np.ndarray:
    """RBP = (1 - p) * sum_{i(<=k)} p^(i-1) gain(i) (Moffat & Zobel 2008).

    ``binary`` (a ``rel=`` given): gain 1 for a relevant document, else 0; otherwise the label itself
    (labels <= 0 give 0), as ir_measures' ``RBP(p=x)`` without ``rel`` (trectools) and ranx weigh it.
    """
    shown = j.pos < k if k is not None else np.ones(len(j.pos), dtype=bool)
    gain = np.where(j.relevant, 1.0, 0.0) if binary else np.maximum(j.label, 0).astype(np.float64)
    return (1.0 - p) * j.per_query_sum(np.where(shown, gain * np.power(p, j.pos.astype(np.float64)), 0.0))
