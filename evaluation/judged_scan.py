"""A piece of a TREC run file (whole queries) straight to the :class:`~rankscope.evaluation.ranking.Judged`
table the metrics read, through the compiled ``judged`` pass of ``corpora/_trec_scan.c``: no document
id is coded or made a ``str`` (a 10^8-row run holds millions of distinct ones); each row's document is
looked up among its own query's judgments only, and each judged row's rank follows the tie rule of
:mod:`rankscope.evaluation.ranking` (score descending, then doc_id descending in byte order).

The table equals what :func:`~rankscope.evaluation.ranking.judge_coded` gives for the piece's judged
queries (``judged_only``), array for array, so the per-query values are the same floats
(tests/evaluation/test_judged_scan.py). A piece the pass doubts (a bad line, a (query, document) pair
twice) comes back as None, for the line-by-line reader to word; a piece whose queries interleave as
:data:`INTERLEAVED`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from rankscope.corpora import _trec_scan
from rankscope.corpora.trec import CodedTable
from rankscope.evaluation.ranking import Judged

INTERLEAVED: Final = "interleaved"
"""What :meth:`Judgments.piece` gives for a piece in which a query's lines are in two places."""


@dataclass(frozen=True)
class Piece:
    """A piece's judged table (None when none of its queries is judged) and every query id it holds."""

    judged: Judged | None
    query_names: np.ndarray
    rows: int


class Judgments:
    """The qrels, held by the compiled pass and as the per-query counts and ideal labels of ``Judged``."""

    def __init__(self, qrels: CodedTable, relevance_level: int) -> None:
        order = np.argsort(qrels.query, kind="stable")
        counts = np.bincount(qrels.query, minlength=len(qrels.query_names))
        first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        doc_bytes = [name.encode() for name in qrels.doc_names]
        labels = qrels.value[order].astype(np.int64)
        self._table = _trec_scan.judgments(
            [name.encode() for name in qrels.query_names],
            first.tobytes(),
            [doc_bytes[code] for code in qrels.doc[order].tolist()],
            labels.tobytes(),
        )
        self.query_names = qrels.query_names
        self.relevance_level = relevance_level
        query = qrels.query[order]
        size = len(qrels.query_names)
        self._num_rel = np.bincount(query[labels >= relevance_level], minlength=size)
        self._num_nonrel = np.bincount(query[(labels >= 0) & (labels < relevance_level)], minlength=size)
        positive = labels > 0
        ideal_query, ideal_label = query[positive], labels[positive]
        ideal_order = np.lexsort((-ideal_label, ideal_query))
        self._ideal_label = ideal_label[ideal_order]
        ideal_counts = np.bincount(ideal_query, minlength=size)
        self._ideal_first = np.concatenate([[0], np.cumsum(ideal_counts)])
        pairs = np.sort(qrels.query * np.int64(max(len(qrels.doc_names), 1)) + qrels.doc)
        repeated = pairs[1:][pairs[1:] == pairs[:-1]] // max(len(qrels.doc_names), 1)
        self._repeated = np.zeros(size, dtype=bool)  # queries judging a document twice: evaluate's error
        self._repeated[repeated] = True

    def piece(self, raw: bytes, ignore_self: bool) -> Piece | str | None:
        """The piece of whole lines ``raw`` judged; None on doubt, :data:`INTERLEAVED` when not grouped."""
        if not raw.isascii():
            try:
                raw.decode("utf-8")  # ids are decoded one distinct id at a time: check every byte first
            except UnicodeDecodeError:
                return None
        scanned = _trec_scan.judged(raw, self._table, ignore_self)
        if scanned is None:
            return None
        if isinstance(scanned, bool):  # False
            return INTERLEAVED
        names_raw, codes_raw, row_query, row_score, query, pos, label, score, rows = scanned
        names = np.array([name.decode() for name in names_raw], dtype=object)
        codes = np.frombuffer(codes_raw, dtype=np.int64)
        judged_at = np.flatnonzero(codes >= 0)  # the piece's judged queries, in order of appearance
        if len(judged_at) == 0:
            return Piece(None, names, rows)
        if self._repeated[codes[judged_at]].any():
            return None  # the whole-file path words the repeated judgment
        by_name = np.argsort(names[judged_at])  # evaluated_queries' order: code point order
        number = np.full(len(names), -1, dtype=np.int64)
        number[judged_at[by_name]] = np.arange(len(judged_at))
        return Piece(self._judged(names[judged_at[by_name]], codes[judged_at[by_name]], number, (
            row_query, row_score, query, pos, label, score)), names, rows)  # fmt: skip

    def _judged(
        self, query_ids: np.ndarray, codes: np.ndarray, number: np.ndarray, columns: tuple[bytes, ...]
    ) -> Judged:
        """The Judged table of the piece's judged queries ``query_ids`` (qrels ``codes``; ``number``: each
        piece query's place among them) from the compiled pass's columns."""
        row_query, row_score, query, pos, label, score = columns
        n = len(query_ids)
        run_q = number[np.frombuffer(row_query, dtype=np.int64)]
        j_q = number[np.frombuffer(query, dtype=np.int64)]
        j_pos = np.frombuffer(pos, dtype=np.int64)
        by_rank = np.lexsort((j_pos, j_q))
        starts, ends = self._ideal_first[codes], self._ideal_first[codes + 1]
        lengths = ends - starts
        within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return Judged(
            query_ids=query_ids,
            relevance_level=self.relevance_level,
            num_ret=np.bincount(run_q, minlength=n),
            num_rel=self._num_rel[codes],
            num_nonrel=self._num_nonrel[codes],
            q=j_q[by_rank],
            pos=j_pos[by_rank],
            label=np.frombuffer(label, dtype=np.int64)[by_rank],
            score=np.frombuffer(score, dtype=np.float64)[by_rank],
            ideal_q=np.repeat(np.arange(n, dtype=np.int64), lengths),
            ideal_pos=within,
            ideal_label=self._ideal_label[np.repeat(starts, lengths) + within],
            run_q=run_q,
            run_score=np.frombuffer(row_score, dtype=np.float64),
        )
