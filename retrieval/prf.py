"""Pseudo-relevance feedback over stored term counts: RM3 (as Anserini) and Bo1 (as Terrier).

Both take a first-pass ranking, read the top ``fb_docs`` documents' term counts
from the index (:class:`~retrieval.termcounts.TermCounts`, nothing re-tokenised)
and return a new queries x terms weight vector that the same retriever scores
with: score(d) = sum over terms t of w(t) x weight(t, d). So changing
``fb_docs``, ``fb_terms`` or ``weight`` never re-indexes. All queries of a batch
are expanded at once with array operations (no per-query Python loop).

**RM3** (Anserini's ``Rm3Reranker``; defaults fb_docs=10, fb_terms=10, weight=0.5):

1. each feedback document d (first-pass score s_d) is a vector of its term counts,
   keeping only *eligible* terms (2 to 20 characters, letters and digits only, in
   at most 10% of the documents: Anserini's stopword heuristic), pruned to its
   ``fb_terms`` most frequent terms; P(t|d) = tf(t, d) / (sum of the kept counts);
2. RM1: rm(t) = sum over feedback documents of P(t|d) x s_d (documents whose kept
   counts sum to at most 0.001 are skipped), pruned to the ``fb_terms`` largest,
   then scaled to sum 1;
3. RM3: w(t) = weight x q(t) + (1 - weight) x rm(t), where q(t) = count of t in the
   query / number of analysed query tokens (out-of-vocabulary tokens count, as in
   Anserini's query vector).

Where this differs from Anserini: float64 instead of float32 arithmetic; ties when
pruning (equal counts or weights) go to the term first in byte order, where
Anserini keeps whichever its hash map yields first; "letters and digits" is
Python's ``str.isalnum`` (Anserini's ``[a-z0-9]+``, the same for the default
lowercasing English analyzer, but it keeps non-ASCII letters, e.g. Chinese); the
second pass scores with our BM25 (exact document lengths, not Lucene's one-byte
lengths), which is also Anserini's BM25 with query-term boosts w(t).

**Bo1** (Terrier's ``QueryExpansion`` with ``DFRBagExpansionTerms`` and ``Bo1``, in
its default parameter-free mode; Terrier's defaults are 3 documents and 10 terms,
``bm25:prf=bo1`` uses them):

1. the feedback documents form one bag: tfx(t) = sum of tf(t, d), n(t) = number of
   feedback documents holding t;
2. w(t) = tfx log2((1 + f) / f) + log2(1 + f) with f = F(t) / N (F: the term's
   count in the collection, N: documents); with at least 2 feedback documents a
   term in fewer than 2 of them gets 0 unless it is a query term
   (``expansion.mindocuments=2``);
3. weights are divided by the parameter-free normaliser: the same formula with
   tfx* of the highest-weighted term in place of both tfx and F (Terrier's
   ``Bo1.parameterFreeNormaliser``);
4. the max(fb_terms, number of distinct query terms) best terms are added to the
   query, whose own weights are count / largest count: w(t) = q(t) + expansion(t).

Where this differs from Terrier: the normalising term is the highest-weighted one
with the lowest term id on ties (Terrier: the first in hash order); ties when
selecting terms go to the term first in byte order; Terrier's non-parameter-free
mode (``rocchio.beta``) is not implemented; the second pass uses our BM25, not
Terrier's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.retrieval.params import Param, SpecError
from rankscope.retrieval.termcounts import TermCounts
from rankscope.retrieval.topk import sparse_top_k

if TYPE_CHECKING:
    import scipy.sparse as sp

METHODS = ("none", "rm3", "bo1")
DEFAULTS: dict[str, dict[str, float]] = {
    "rm3": {"fb_docs": 10, "fb_terms": 10, "weight": 0.5},
    "bo1": {"fb_docs": 3, "fb_terms": 10},
}
"""Anserini's RM3 defaults and Terrier's Bo1 defaults (``expansion.documents``, ``expansion.terms``)."""

PRF = Param(str, "none", "pseudo-relevance feedback: rm3 (Anserini's) or bo1 (Terrier's)", choices=METHODS, name="prf")
FB_DOCS = Param(int, None, "feedback documents; None: 10 for rm3, 3 for bo1", low=1, optional=True, name="fb_docs")
FB_TERMS = Param(int, None, "expansion terms; None: 10", low=1, optional=True, name="fb_terms")
WEIGHT = Param(float, None, "rm3: weight of the original query; None: 0.5", low=0, high=1, optional=True, name="weight")
PARAMETERS = (PRF, FB_DOCS, FB_TERMS, WEIGHT)
"""The feedback parameters a retriever with ``prf`` declares (BM25 does)."""

MAX_DF_RATIO = 0.1
"""RM3: a term in more than this share of the documents is no feedback term (Anserini's heuristic)."""
TERM_LENGTHS = (2, 20)
"""RM3: shortest and longest eligible feedback term, in characters (Anserini)."""
MIN_NORM = 0.001
"""RM3: feedback documents whose kept counts sum to no more than this are skipped (Anserini)."""
BO1_MIN_DOCUMENTS = 2
"""Bo1: a non-query term must occur in this many feedback documents (Terrier's ``expansion.mindocuments``)."""


def check_applicable(values: Mapping[str, Any], owner: str) -> None:
    """Refuse feedback parameters that the chosen ``prf`` would ignore (the table checked their values)."""
    prf = values["prf"]
    given = [p.name for p in PARAMETERS[1:] if values[p.name] is not None]
    if prf == "none" and given:
        raise SpecError(f"{owner}: {', '.join(given)} apply only with prf=rm3 or prf=bo1, not prf=none")
    if prf == "bo1" and values["weight"] is not None:
        raise SpecError(f"{owner}: weight applies to prf=rm3 only (Bo1 is parameter-free, as Terrier's default)")


def settings(prf: str, fb_docs: int | None, fb_terms: int | None, weight: float | None) -> dict[str, Any]:
    """The feedback parameters in effect: the given ones, the method's defaults for those left None."""
    given = {"fb_docs": fb_docs, "fb_terms": fb_terms, "weight": weight}
    return {name: default if (value := given[name]) is None else value for name, default in DEFAULTS[prf].items()}


def expand(
    prf: str,
    counts: TermCounts,
    term_weights: sp.csr_matrix,
    query_terms: sp.csr_matrix,
    analysed: list[list[str]],
    *,
    fb_docs: int,
    fb_terms: int,
    weight: float = 0.5,
) -> sp.csr_matrix:
    """Expanded queries x terms weights, from the first pass ``query_terms @ term_weights``.

    ``query_terms`` holds each query's in-vocabulary term counts; ``analysed`` each
    query's analysed tokens (out-of-vocabulary ones included: they count in RM3's
    query length and Bo1's number of query terms, as in Anserini and Terrier).
    """
    import scipy.sparse as sp

    rows, docs, scores = first_pass(query_terms, term_weights, counts.doc_id_rank, fb_docs)
    if prf == "rm3":
        model = relevance_model(counts, rows, docs, scores, query_terms.shape[0], fb_terms)
        lengths = np.array([max(len(tokens), 1) for tokens in analysed], dtype=np.float64)
        expanded = weight * (sp.diags(1.0 / lengths) @ query_terms) + (1.0 - weight) * model
    elif prf == "bo1":
        distinct = np.array([len(set(tokens)) for tokens in analysed], dtype=np.int64)
        expanded = bo1_query(counts, rows, docs, query_terms, distinct, fb_terms)
    else:
        raise ValueError(f"prf must be one of {list(METHODS[1:])} to expand, got {prf!r}")
    expanded = sp.csr_matrix(expanded)
    expanded.eliminate_zeros()
    return expanded


def first_pass(
    query_terms: sp.csr_matrix, term_weights: sp.csr_matrix, doc_id_rank: np.ndarray, fb_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query row, document position and score of each feedback document (top ``fb_docs``, tie rule)."""
    positions, values = sparse_top_k(query_terms, term_weights, fb_docs, doc_id_rank)
    rows = np.repeat(np.arange(len(positions)), [len(p) for p in positions])
    docs = np.concatenate([np.empty(0, dtype=np.int64), *positions])
    scores = np.concatenate([np.empty(0, dtype=np.float64), *values])
    return rows, docs, scores


def relevance_model(
    counts: TermCounts, rows: np.ndarray, docs: np.ndarray, scores: np.ndarray, n_queries: int, fb_terms: int
) -> sp.csr_matrix:
    """RM1 of each query (queries x terms, rows summing to 1), steps 1-2 of RM3 above."""
    import scipy.sparse as sp

    entry, terms, tf = _feedback_postings(counts, docs)
    keep = rm3_eligible(counts)[terms]
    entry, terms, tf = entry[keep], terms[keep], tf[keep]
    keep = top_per_group(entry, tf, terms, fb_terms)
    entry, terms, tf = entry[keep], terms[keep], tf[keep]
    norms = np.bincount(entry, weights=tf, minlength=len(docs))
    used = norms[entry] > MIN_NORM
    entry, terms, tf = entry[used], terms[used], tf[used]
    contribution = tf / norms[entry] * scores[entry]
    model = _summed(rows[entry], terms, contribution, (n_queries, counts.n_terms))
    query_of = np.repeat(np.arange(n_queries), np.diff(model.indptr))
    keep = top_per_group(query_of, model.data, model.indices, fb_terms)
    pruned = sp.csr_matrix((model.data[keep], (query_of[keep], model.indices[keep])), shape=model.shape)
    totals = np.asarray(pruned.sum(axis=1)).ravel()
    return sp.csr_matrix(sp.diags(np.divide(1.0, totals, out=np.zeros_like(totals), where=totals != 0)) @ pruned)


def bo1_query(
    counts: TermCounts,
    rows: np.ndarray,
    docs: np.ndarray,
    query_terms: sp.csr_matrix,
    distinct: np.ndarray,
    fb_terms: int,
) -> sp.csr_matrix:
    """Terrier's parameter-free Bo1 expansion added to the max-normalised query (steps 1-4 above)."""
    import scipy.sparse as sp

    shape = (query_terms.shape[0], counts.n_terms)
    entry, terms, tf = _feedback_postings(counts, docs)
    bag = _summed(rows[entry], terms, tf, shape)  # tfx per query and term
    in_docs = _summed(rows[entry], terms, np.ones(len(terms)), shape)
    query_of = np.repeat(np.arange(shape[0]), np.diff(bag.indptr))
    tfx, term = bag.data, bag.indices
    weights = bo1_weight(tfx, counts.collection_frequency[term], counts.n_docs)
    n_feedback = np.bincount(rows, minlength=shape[0])
    query = sp.coo_matrix(query_terms)
    is_query_term = np.isin(query_of * shape[1] + term, query.row.astype(np.int64) * shape[1] + query.col)
    rare = (n_feedback[query_of] >= BO1_MIN_DOCUMENTS) & (in_docs.data < BO1_MIN_DOCUMENTS) & ~is_query_term
    weights = np.where(rare, 0.0, weights)
    best = top_per_group(query_of, weights, term, 1)
    normaliser = np.ones(shape[0])
    normaliser[query_of[best]] = bo1_weight(tfx[best], tfx[best], counts.n_docs)
    limit = np.maximum(fb_terms, distinct)[query_of]
    keep = top_per_group(query_of, weights, term, limit)
    expansion = sp.csr_matrix((weights[keep] / normaliser[query_of[keep]], (query_of[keep], term[keep])), shape=shape)
    largest = query_terms.max(axis=1).toarray().ravel()
    original = sp.diags(np.divide(1.0, largest, out=np.zeros_like(largest), where=largest > 0)) @ query_terms
    return sp.csr_matrix(original + expansion)


def bo1_weight(tfx: np.ndarray, collection_frequency: np.ndarray, n_docs: int) -> np.ndarray:
    """Bo1: tfx log2((1 + f) / f) + log2(1 + f), f = F / N (Bose-Einstein with the Poisson mean)."""
    f = np.asarray(collection_frequency, dtype=np.float64) / n_docs
    return tfx * np.log2((1.0 + f) / f) + np.log2(1.0 + f)


def rm3_eligible(counts: TermCounts) -> np.ndarray:
    """Per term: may it be an RM3 feedback term (length, letters and digits, document share)?"""
    shortest, longest = TERM_LENGTHS
    shape_ok = np.fromiter(
        (shortest <= len(t) <= longest and t.isalnum() for t in counts.vocabulary), dtype=bool, count=counts.n_terms
    )
    return shape_ok & (counts.df / counts.n_docs <= MAX_DF_RATIO)


def top_per_group(group: np.ndarray, values: np.ndarray, terms: np.ndarray, k: int | np.ndarray) -> np.ndarray:
    """Indices of the ``k`` largest ``values`` within each group (ties: lower term id first), in group order."""
    order = np.lexsort((terms, -values, group))
    sorted_group = group[order]
    starts = np.searchsorted(sorted_group, sorted_group, side="left")
    rank = np.arange(len(order)) - starts
    limit = k[order] if isinstance(k, np.ndarray) else k
    return np.sort(order[rank < limit])


def _feedback_postings(counts: TermCounts, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (feedback entry, term, tf) of the feedback documents, read from the document-major counts."""
    by_doc = counts.by_doc
    starts, ends = by_doc.indptr[docs], by_doc.indptr[docs + 1]
    lengths = ends - starts
    entry = np.repeat(np.arange(len(docs)), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    flat = np.repeat(starts, lengths) + offsets
    return entry, by_doc.indices[flat].astype(np.int64), by_doc.data[flat]


def _summed(rows: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix adding up ``values`` at (row, column); sorted indices, explicit zeros kept out."""
    import scipy.sparse as sp

    matrix = sp.csr_matrix((values, (rows, columns)), shape=shape)
    matrix.sum_duplicates()
    return matrix
