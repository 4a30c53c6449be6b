"""Put a run in trec_eval's order and attach the judgments, for all queries at once.

Every metric in rankscope depends only on where the *judged* documents sit in each
ranking, plus a few per-query counts. So this module does the expensive part once,
vectorised over the whole run (no per-query Python loop) and hands the metrics a
compact :class:`Judged` table:

- the rank of every retrieved document that has a judgment for its query;
- per query: documents retrieved, relevant, judged non-relevant, and the ideal
  ordering of the graded labels (for nDCG).

Ordering is trec_eval's: score descending, ties by doc_id descending in byte order
(Python compares ``str`` by code point, which is the UTF-8 byte order); the run's
``rank`` column is ignored. Scores are compared as float64 (trec_eval 9.0.8 reads
them into a float32 first, so runs whose scores differ only beyond float32
precision can tie there and not here).

How it stays fast on 10 million rows of Python strings: query ids are coded from
the places where the id changes (runs are grouped by query); document ids are
coded by object address first (rows holding the same ``str`` object need no
hashing) and only the distinct objects are hashed; a run already in rank order
(what retrievers and TREC files give) is not sorted again, and any other run gets
one sort of packed (query, score) keys in which only the judged rows are looked
up (the metrics need no other rank); (query, document) pairs are matched with one
integer sort plus a binary search of the qrels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError, duplicate_message
from rankscope.corpora.trec import CodedTable

_KEY_BITS = 63  # packed (pair, row) sort keys must fit a signed 64-bit integer
_REGION_BITS = 12  # address regions of 2^12 slots of 16 bytes (64 kB)
_MAX_REGIONS = 1 << 22  # span of the region table (256 GB of address space)
_MIN_TABLE_SLOTS = 1 << 20  # the slot table may always be this large, whatever the run's length


@dataclass(frozen=True)
class Judged:
    """What the metrics read: judged retrieved documents in rank order, and per-query counts.

    Queries are numbered ``0..n_queries-1`` in the order of :attr:`query_ids`. Rows of
    ``q``/``pos``/``label``/``score`` are the retrieved documents that have a judgment
    for their query, sorted by query then rank (``pos`` is the 0-based rank).
    ``run_q``/``run_score`` cover every retrieved document (for score thresholds).
    """

    query_ids: np.ndarray
    relevance_level: int
    num_ret: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    q: np.ndarray
    pos: np.ndarray
    label: np.ndarray
    score: np.ndarray
    ideal_q: np.ndarray
    ideal_pos: np.ndarray
    ideal_label: np.ndarray
    run_q: np.ndarray
    run_score: np.ndarray

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def relevant(self) -> np.ndarray:
        """Mask of judged rows whose label reaches the relevance level."""
        return self.label >= self.relevance_level

    def per_query_sum(self, weights: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` (bool or float, one per judged row unless ``q`` given) per query."""
        codes = self.q if q is None else q
        return np.bincount(codes, weights=weights.astype(np.float64), minlength=self.n_queries)

    def at_level(self, level: int) -> Judged:
        """The same judgments read with another relevance level (a metric's own ``rel=``).

        Every label >= 1 is in the ideal ranking, so R and N at any level >= 1 follow from it.
        """
        if level == self.relevance_level:
            return self
        low, high = sorted((level, self.relevance_level))
        between = (self.ideal_label >= low) & (self.ideal_label < high)
        moved = np.bincount(self.ideal_q[between], minlength=self.n_queries)
        sign = 1 if level > self.relevance_level else -1
        return replace(
            self,
            relevance_level=level,
            num_rel=self.num_rel - sign * moved,
            num_nonrel=self.num_nonrel + sign * moved,
        )


def judge_run(
    qrels_query: np.ndarray,
    qrels_doc: np.ndarray,
    qrels_label: np.ndarray,
    run_query: np.ndarray,
    run_doc: np.ndarray,
    run_score: np.ndarray,
    *,
    relevance_level: int,
    judged_only: bool,
) -> Judged:
    """Rank the run per query (trec_eval order) and join it with the qrels.

    Queries evaluated are those of the qrels (trec_eval ``-c``), or only those also
    in the run when ``judged_only``. Run-only queries are dropped. Inputs are
    1-d arrays (ids as ``str`` objects) and are not modified. Duplicate (query,
    document) pairs in either input raise :class:`SchemaError`.
    """
    run_names, run_codes = _query_codes(run_query)
    qrels_codes, qrels_names = pd.factorize(qrels_query)
    run_dc, qrels_dc, doc_names = _doc_codes(run_doc, qrels_doc)
    return _judge(
        _Coded(qrels_codes, np.asarray(qrels_names, dtype=object), qrels_dc, qrels_label),
        _Coded(run_codes, run_names, run_dc, run_score),
        doc_names,
        relevance_level=relevance_level,
        judged_only=judged_only,
    )


def judge_coded(qrels: CodedTable, run: CodedTable, *, relevance_level: int, judged_only: bool) -> Judged:
    """:func:`judge_run` for tables whose ids are already coded (the compiled TREC reader's): no ``str``
    object per row is made or hashed; the two tables' document codes are joined through their distinct ids."""
    at = pd.Index(run.doc_names).get_indexer(qrels.doc_names)  # each qrels document's run code, -1 if none
    new = at < 0
    at[new] = len(run.doc_names) + np.arange(int(new.sum()))
    doc_names = np.concatenate([run.doc_names, qrels.doc_names[new]])
    return _judge(
        _Coded(qrels.query, qrels.query_names, at[qrels.doc], qrels.value),
        _Coded(run.query, run.query_names, run.doc, run.value),
        doc_names,
        relevance_level=relevance_level,
        judged_only=judged_only,
    )


@dataclass(frozen=True)
class _Coded:
    """Rows of a run or qrels: ``query_names[query]`` is a row's query id (a name may be listed twice),
    ``doc`` its document's code in the ``doc_names`` both tables share, ``value`` its score or label."""

    query: np.ndarray
    query_names: np.ndarray
    doc: np.ndarray
    value: np.ndarray


def _judge(qrels: _Coded, run: _Coded, doc_names: np.ndarray, *, relevance_level: int, judged_only: bool) -> Judged:
    """The join and the ranking, on coded ids (see :func:`judge_run`)."""
    query_ids = evaluated_queries(qrels.query_names, run.query_names, judged_only)
    n_queries = len(query_ids)
    query_index = pd.Index(query_ids)  # one hash table for both lookups
    run_q = query_index.get_indexer(run.query_names)[run.query]
    run_dc, run_score = run.doc, run.value
    keep = run_q >= 0
    if not keep.all():  # run-only queries are ignored, as trec_eval does
        run_q, run_dc, run_score = run_q[keep], run_dc[keep], run_score[keep]

    n_docs = max(len(doc_names), 1)
    sorted_pairs, pair_rows = _sorted_pairs(run_q, run_dc, n_docs, n_queries)
    _refuse_duplicates("run", sorted_pairs, pair_rows, lambda row: (query_ids[run_q[row]], doc_names[run_dc[row]]))

    qrels_q = query_index.get_indexer(qrels.query_names)[qrels.query]
    in_eval = qrels_q >= 0
    qrels_q, qrels_dc, qrels_label = qrels_q[in_eval], qrels.doc[in_eval], qrels.value[in_eval]
    qrels_pairs = qrels_q * np.int64(n_docs) + qrels_dc
    by_pair = np.argsort(qrels_pairs, kind="stable")
    _refuse_duplicates(
        "qrels", qrels_pairs[by_pair], by_pair, lambda row: (query_ids[qrels_q[row]], doc_names[qrels_dc[row]])
    )
    qrels_q, qrels_label, qrels_pairs = qrels_q[by_pair], qrels_label[by_pair], qrels_pairs[by_pair]
    found, rows = _find_pairs(sorted_pairs, pair_rows, qrels_pairs)
    j_q, j_pos = qrels_q[found], _ranks(run_q, run_score, doc_names, run_dc, n_queries, rows)
    by_rank = np.lexsort((j_pos, j_q))

    # trec_eval counts judgments with label >= 0 only; negative labels are "in pool but unjudged"
    nonrel = (qrels_label >= 0) & (qrels_label < relevance_level)
    positive = qrels_label > 0
    ideal_q, ideal_label = qrels_q[positive], qrels_label[positive]
    ideal_order = np.lexsort((-ideal_label, ideal_q))
    ideal_q = ideal_q[ideal_order]
    return Judged(
        query_ids=query_ids,
        relevance_level=relevance_level,
        num_ret=np.bincount(run_q, minlength=n_queries),
        num_rel=np.bincount(qrels_q[qrels_label >= relevance_level], minlength=n_queries),
        num_nonrel=np.bincount(qrels_q[nonrel], minlength=n_queries),
        q=j_q[by_rank],
        pos=j_pos[by_rank],
        label=qrels_label[found][by_rank],
        score=run_score[rows][by_rank],
        ideal_q=ideal_q,
        ideal_pos=group_positions(ideal_q, n_queries),
        ideal_label=ideal_label[ideal_order],
        run_q=run_q,
        run_score=run_score,
    )


def evaluated_queries(qrels_query: np.ndarray, run_names: np.ndarray, judged_only: bool) -> np.ndarray:
    """The queries evaluated, in the order they are numbered: the qrels' (only those also among
    ``run_names`` when ``judged_only``), sorted by code point, which is the UTF-8 byte order."""
    query_ids = np.sort(pd.unique(qrels_query))
    if judged_only:
        query_ids = query_ids[pd.Index(query_ids).isin(run_names)]
        if len(query_ids) == 0:
            raise RankscopeError("judged_only: no query appears in both the qrels and the run")
    return query_ids


def _query_codes(run_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row code into a short array of query names (a name may appear more than once).

    Runs are grouped by query, so the names are read where the id changes: object
    addresses are compared first (one integer comparison per row), strings only
    where the object changes. A run whose rows are interleaved is coded by object
    address instead, or failing that by hashing the strings.
    """
    n = len(run_query)
    if n == 0:
        return run_query[:0], np.zeros(0, dtype=np.int64)
    addresses = np.frombuffer(np.ascontiguousarray(run_query), dtype=np.intp)
    changes = np.flatnonzero(addresses[1:] != addresses[:-1]) + 1
    if len(changes) > n // 4:  # interleaved queries, or a separate object on each row
        coded = _code_objects(run_query)
        if coded is not None:
            codes, one_row = coded
            return run_query[one_row], codes
    starts = changes[run_query[changes] != run_query[changes - 1]]  # equal ids in distinct objects
    if len(starts) > n // 4:
        codes, names = pd.factorize(run_query)
        return np.asarray(names, dtype=object), codes.astype(np.int64, copy=False)
    starts = np.concatenate([[0], starts])
    codes = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    return run_query[starts], codes


def group_positions(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """0-based position of each row within its group, for rows already grouped by code."""
    counts = np.bincount(codes, minlength=n_groups)
    return np.arange(len(codes), dtype=np.int64) - (np.cumsum(counts) - counts)[codes]


def _doc_codes(run_doc: np.ndarray, qrels_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer codes for document ids, equal codes iff equal strings, shared by run and qrels.

    Rows of an object array that point at the same ``str`` object are equal without
    looking at the string, so when the run's objects sit close together it is first
    coded by object address and only one row per distinct object is hashed as a string.
    """
    coded = _code_objects(run_doc)
    if coded is None:
        codes, names = pd.factorize(np.concatenate([run_doc, qrels_doc]))
        return codes[: len(run_doc)], codes[len(run_doc) :], np.asarray(names, dtype=object)
    object_codes, one_row = coded
    codes, names = pd.factorize(np.concatenate([run_doc[one_row], qrels_doc]))
    return codes[: len(one_row)][object_codes], codes[len(one_row) :], np.asarray(names, dtype=object)


def distinct_objects(values: np.ndarray) -> np.ndarray:
    """One row per distinct object of an object array (equal strings in separate objects may repeat):
    what a set of the values needs to hash, without hashing every row of a large run."""
    coded = _code_objects(values)
    return values if coded is None else values[coded[1]]


def _code_objects(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Code per row for the object it holds (0..n_objects-1), and one row holding each object.

    Small objects created together sit close in memory (a run built from one array
    of document ids, or read by pandas), so the addresses, in 16-byte slots, are
    coded through a dense lookup table: a few array passes, no hashing. When they
    are spread out, only the 64 kB regions in use get table space. Addresses spread
    over too many regions mostly mean one object per row (nothing to gain): None,
    and the caller hashes the strings themselves.
    """
    if len(values) == 0:
        return None
    return _code_addresses(np.frombuffer(np.ascontiguousarray(values), dtype=np.intp))


def _code_addresses(addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_code_objects` on the addresses themselves."""
    slots = addresses - int(addresses.min())
    slots >>= 4  # live objects are >= 16 bytes (a str >= 40), so no two share a 16-byte slot
    n_slots = int(slots.max()) + 1
    limit = max(2 * len(addresses), _MIN_TABLE_SLOTS)
    if n_slots > limit:  # spread out: keep only the regions in use
        regions = slots >> _REGION_BITS
        if int(regions.max()) >= _MAX_REGIONS:
            return None
        region_used = np.zeros(int(regions.max()) + 1, dtype=bool)
        region_used[regions] = True
        region_code = np.cumsum(region_used) - 1
        n_slots = (int(region_code[-1]) + 1) << _REGION_BITS
        if n_slots > limit:
            return None
        slots &= (1 << _REGION_BITS) - 1
        slots |= region_code[regions] << _REGION_BITS
        del regions
    row_at = np.full(n_slots, -1, dtype=np.int64)
    row_at[slots] = np.arange(len(slots))  # any row holding the object in each slot
    used = row_at >= 0
    code_at = np.cumsum(used) - 1
    return code_at[slots], row_at[used]


def _sorted_pairs(run_q: np.ndarray, run_dc: np.ndarray, n_docs: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """The (query, document) pair codes ``q * n_docs + doc`` sorted, and the row each came from.

    When pair code and row index fit together in 63 bits they are packed into one
    integer and sorted by value in place (much faster than an argsort, and no
    index array beside the keys); otherwise argsort.
    """
    n = len(run_q)
    packed = run_q.astype(np.int64)  # a new array: the arguments stay untouched
    packed *= n_docs
    packed += run_dc
    row_bits = max(n - 1, 1).bit_length()
    if max(n_queries * n_docs - 1, 1).bit_length() + row_bits > _KEY_BITS:
        rows = np.argsort(packed, kind="stable")
        return packed[rows], rows
    packed <<= row_bits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    rows = packed & ((1 << row_bits) - 1)
    packed >>= row_bits
    return packed, rows


def _find_pairs(sorted_pairs: np.ndarray, pair_rows: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which ``wanted`` pairs (sorted, so the binary searches run in order) the run holds, and their rows."""
    at, found = find_sorted(sorted_pairs, wanted)
    return found, pair_rows[at[found]]


def find_sorted(sorted_values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``wanted`` would sit in ``sorted_values`` (clipped to the last index) and whether it is there.

    One binary search per value; neither side is sorted again (``np.isin`` would sort both).
    """
    if len(sorted_values) == 0:
        return np.zeros(len(wanted), dtype=np.intp), np.zeros(len(wanted), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, wanted), len(sorted_values) - 1)
    return at, sorted_values[at] == wanted


def _refuse_duplicates(
    what: str, sorted_pairs: np.ndarray, rows: np.ndarray, ids: Callable[[int], tuple[str, str]]
) -> None:
    """trec_eval refuses a run or qrels naming one document twice for a query; so do we (``ids``: a row's
    query and document ids, looked up only for the message)."""
    repeated = np.flatnonzero(sorted_pairs[1:] == sorted_pairs[:-1])
    if len(repeated):
        raise SchemaError(f"{what}: {duplicate_message('query, document', ids(int(rows[repeated[0]])))}")


def _ranks(
    run_q: np.ndarray, score: np.ndarray, doc_names: np.ndarray, doc: np.ndarray, n_queries: int, rows: np.ndarray
) -> np.ndarray:
    """0-based rank within its query of each of ``rows``: score descending, then doc_id descending
    (``doc_names[doc]`` are the rows' doc ids, looked up only where scores tie).

    A fast path of the tie rule (no DataFrame, no sort of a run already in order); the reference is
    :func:`corpora.schema.sort_run`, and tests/test_tie_rule.py checks this against it.
    """
    same_query = run_q[1:] == run_q[:-1]
    changes = np.flatnonzero(~same_query)  # rows after which the query changes
    if not _in_score_order(run_q, score, same_query, changes, n_queries):
        del changes  # about one per row when the run is shuffled: free it before the sort
        return _ranks_by_keys(run_q, score, doc_names, doc, rows)
    starts = np.concatenate([[0], changes + 1])  # each query's first row
    order = _settle(same_query & (score[1:] == score[:-1]), doc_names, doc)
    if order is None:
        at = rows
    else:  # where each row landed once its ties were put in order
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        at = place[rows]
    return at - starts[np.searchsorted(starts, at, "right") - 1]


def _in_score_order(
    run_q: np.ndarray, score: np.ndarray, same_query: np.ndarray, changes: np.ndarray, n_queries: int
) -> bool:
    """True if each query's rows are contiguous and their scores never increase (ties checked later)."""
    if len(changes) >= n_queries:  # more stretches than queries: some query is split
        return False
    heads = run_q[np.concatenate([[0], changes + 1])] if len(run_q) else run_q
    if len(np.unique(heads)) != len(heads):
        return False
    return bool(np.all((score[1:] <= score[:-1]) | ~same_query))


def _ranks_by_keys(
    run_q: np.ndarray, score: np.ndarray, doc_names: np.ndarray, doc: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """Ranks of ``rows`` in a run not in rank order, from one sort of packed (query, score) keys.

    A row's rank is the number of rows of its query with a smaller key, plus those
    sharing its key (equal or nearly equal scores) that come first in exact order.
    Only the judged rows are looked up in the sorted keys, so the order of the whole
    run is never built: no row numbers in the keys, no permutation to invert.
    """
    keys, score_bits = _query_score_keys(run_q, score)
    sorted_keys = np.sort(keys)
    by_key = np.argsort(keys[rows])  # ascending needles: each binary search starts at the last one's bound
    wanted = keys[rows[by_key]]
    before = np.searchsorted(sorted_keys, wanted, "left")
    shared = by_key[np.searchsorted(sorted_keys, wanted, "right") - before > 1]
    query_head = (wanted >> np.uint64(score_bits)) << np.uint64(score_bits)  # smallest key of the query
    ranks = np.empty(len(rows), dtype=np.int64)
    ranks[by_key] = before - np.searchsorted(sorted_keys, query_head, "left")
    if len(shared):
        ranks[shared] += _ahead_among_equal_keys(keys, rows[shared], score, doc_names, doc)
    return ranks


def _query_score_keys(run_q: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, int]:
    """Per row, the query code above the leading bits of the score, as an unsigned key.

    The score's bits are mapped so that a larger score gives a smaller key; keys
    therefore sort by query, then score descending, and rows whose scores agree on
    the leading bits share a key. Returns the keys and how many score bits they hold.
    """
    score_bits = 64 - max(int(run_q.max(initial=0)), 1).bit_length()
    keys = (score + 0.0).view(np.uint64)  # a new array; + 0.0 turns -0.0 into 0.0 (equal, as in C)
    positive = keys < np.uint64(1 << 63)
    np.invert(keys, out=keys, where=positive)  # larger positive score -> smaller key
    np.bitwise_and(keys, np.uint64((1 << 63) - 1), out=keys, where=positive)  # positives before negatives
    keys >>= np.uint64(64 - score_bits)
    packed = run_q.astype(np.uint64)
    packed <<= np.uint64(score_bits)
    packed |= keys
    return packed, score_bits


def _ahead_among_equal_keys(
    keys: np.ndarray, rows: np.ndarray, score: np.ndarray, doc_names: np.ndarray, doc: np.ndarray
) -> np.ndarray:
    """For each of ``rows``, how many rows with the same key precede it exactly (score, then doc_id, descending)."""
    _, shared = find_sorted(np.unique(keys[rows]), keys)
    members = np.flatnonzero(shared)  # every row holding one of the keys of ``rows``, ascending
    member_keys = keys[members]
    order = np.lexsort((-_byte_order_rank(doc_names[doc[members]]), -score[members], member_keys))
    ordered_keys = member_keys[order]
    ahead = np.empty(len(members), dtype=np.int64)
    ahead[order] = np.arange(len(members)) - np.searchsorted(ordered_keys, ordered_keys, "left")
    return ahead[np.searchsorted(members, rows)]


def _byte_order_rank(docs: np.ndarray) -> np.ndarray:
    """Per row, the rank of its doc id among the distinct ids in byte order (code point order of ``str``)."""
    codes, names = pd.factorize(docs)
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.argsort(np.asarray(names, dtype=object))] = np.arange(len(names))
    return rank[codes]


def _settle(ties: np.ndarray, doc_names: np.ndarray, doc: np.ndarray) -> np.ndarray | None:
    """Row order of a run in score order once each stretch of equal scores is in doc_id-descending order.

    ``ties[i]`` says rows i and i + 1 have the same query and score. Equal scores are
    ordered by doc_id descending in byte order, as trec_eval does; only those rows are
    looked at. None when they already are in that order.
    """
    pairs = np.flatnonzero(ties)
    if len(pairs) == 0:
        return None
    members = np.union1d(pairs, pairs + 1)  # rows inside such a stretch
    docs = doc_names[doc[members]]
    at = np.searchsorted(members, pairs)  # each pair sits at members[at], members[at + 1]
    if bool(np.all(docs[at] > docs[at + 1])):
        return None
    stretch = np.cumsum(~np.isin(members - 1, pairs))  # a stretch starts where the row before is no tie
    order = np.arange(len(doc))
    order[members] = members[np.lexsort((-_byte_order_rank(docs), stretch))]
    return order
