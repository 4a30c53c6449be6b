"""A judge learned from the collection's own human labels (``trained:``), cross-fitted by query.

Prompted judges small enough for this machine grade relevance near chance (docs/judges.md); a
classifier trained on the labels people already gave, over features rankscope computes
(:mod:`rankscope.judging.pair_features`), does better on the pairs a judge is really asked.

Training pairs: every labelled pair, and the top ``pool`` documents of BM25 and TF-IDF for each
labelled query with the pairs the labels do not hold read as 0 (TREC's reading of an unjudged
document; a qrels file of relevant documents alone could not be learnt from otherwise). The
classifier (standardised features, multinomial logistic regression over the grades 0-3) is
fitted ``folds + 1`` times: once per fold of the labelled queries, leaving that fold out, and once
on all of them. A pair of a labelled query is judged by the model that left its query's fold out
(so no pair is judged by a model that saw its own query, and PPI over its labels stays valid); a
pair of any other query by the model trained on all. Folds are a hash of the seed and the query
id, so a pair's label never depends on the order or company it is asked in. The label is the
expected grade rounded; the raw text keeps the probabilities of grades 0-3 and the fold.

The judge reads BM25's and TF-IDF's scores: a compared system ranking by them shares its
features, which favours it (:attr:`TrainedJudge.shares`, warned about as circular evaluation).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.judging.base import INVALID, LABELS, OK, Judge, JudgeError, JudgeIdentity, Judgment, Pair
from rankscope.judging.pair_features import NAMES, RETRIEVERS, PairFeatures

if TYPE_CHECKING:
    import pandas as pd

MIN_PER_CLASS = 10
"""Fewest relevant (grade >= 1) and non-relevant training pairs every fold's model must see."""

REGULARISATION = 1.0
"""The logistic regression's C (inverse regularisation strength)."""


class TrainedJudge(Judge):
    """Labels from classifiers trained on ``labels`` (query_id, doc_id, relevance) over ``corpus``."""

    reads_ids = True
    shares = ("bm25", "tfidf")
    """Retriever kinds whose scores are features (RM3 is BM25's): a compared system using them is flagged."""

    def __init__(
        self,
        corpus: pd.DataFrame,
        queries: pd.DataFrame,
        labels: pd.DataFrame,
        *,
        folds: int = 5,
        seed: int = 0,
        pool: int = 10,
    ) -> None:
        """Fit the ``folds + 1`` models; a one-line :class:`JudgeError` when the labels are too few."""
        if folds < 2:
            raise JudgeError(f"trained judge: folds={folds} is not allowed; folds must be an integer >= 2")
        if pool < 0:
            raise JudgeError(f"trained judge: pool={pool} is not allowed; pool must be an integer >= 0")
        self.folds, self.seed, self.pool = int(folds), int(seed), int(pool)
        self.features = PairFeatures(corpus)
        grades = _grades(labels)
        texts = {str(q): str(t) for q, t in zip(queries["query_id"], queries["text"])}
        self.labelled = frozenset(q for q, _ in grades if q in texts)
        pairs = self._training_pairs(grades, texts)
        rows, targets, query_of = self._rows(pairs, grades, texts)
        self.models = self._fit(rows, targets, query_of)
        self.identity = JudgeIdentity(
            kind="trained",
            model=f"logistic:{'+'.join(RETRIEVERS)}",
            parameters=(
                ("folds", self.folds),
                ("seed", self.seed),
                ("pool", self.pool),
                ("labels", _digest_rows((q, d, r) for (q, d), r in grades.items())),
                ("corpus", _digest_rows(zip(corpus["doc_id"], corpus["title"], corpus["text"]))),
                ("queries", _digest_rows(sorted(texts.items()))),
                ("features", ",".join(NAMES)),
                ("C", REGULARISATION),
            ),
        )

    def fold(self, query_id: str) -> int:
        """The fold of a query: a hash of the seed and its id, whatever else is asked."""
        digest = hashlib.sha256(f"{self.seed}\t{query_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.folds

    def ask(self, pair: Pair) -> Judgment:
        return self.judge([pair])[0]

    def stream(self, pairs: Sequence[Pair]) -> Iterator[tuple[int, Judgment]]:
        """Judgments query by query: each query's documents are featured and predicted in one batch."""
        by_query: dict[tuple[str, str], list[int]] = {}
        for i, pair in enumerate(pairs):
            if not self.features.knows(pair.doc_id):
                yield i, Judgment(None, INVALID, f"document {pair.doc_id!r} is not in the judge's corpus")
                continue
            by_query.setdefault((pair.query_id, pair.query), []).append(i)
        asked = [(query, [pairs[i].doc_id for i in positions]) for (_, query), positions in by_query.items()]
        for ((query_id, _), positions), rows in zip(by_query.items(), self.features.of_queries(asked)):
            fold = self.fold(query_id) if query_id in self.labelled else self.folds
            probabilities = _grade_probabilities(self.models[fold], rows)
            for i, p in zip(positions, probabilities):
                label = int(np.clip(np.rint(float(p @ np.array(LABELS, dtype=float))), 0, 3))
                raw = json.dumps({"p": [round(float(x), 4) for x in p], "fold": fold if fold < self.folds else "all"})
                yield i, Judgment(label, OK, raw)

    def _training_pairs(self, grades: dict[tuple[str, str], int], texts: dict[str, str]) -> list[tuple[str, str]]:
        """Labelled pairs of known queries and documents, then each labelled query's unlabelled pool."""
        import pandas as pd

        if not self.pool:
            return [(q, d) for q, d in grades if q in texts and self.features.knows(d)]
        pairs = []
        if self.labelled:
            table = pd.DataFrame({"query_id": sorted(self.labelled), "text": [texts[q] for q in sorted(self.labelled)]})
            for retriever in (self.features.retrievers["bm25"], self.features.retrievers["tfidf"]):
                run = retriever.search(table, k=self.pool)
                pairs += [(str(q), str(d)) for q, d in zip(run["query_id"], run["doc_id"])]
        return sorted(set(pairs))

    def _rows(
        self, pairs: list[tuple[str, str]], grades: dict[tuple[str, str], int], texts: dict[str, str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        by_query: dict[str, list[str]] = {}
        for q, d in pairs:
            by_query.setdefault(q, []).append(d)
        blocks = self.features.of_queries([(texts[q], docs) for q, docs in by_query.items()])
        targets: list[int] = []
        query_of: list[str] = []
        for q, docs in by_query.items():
            targets += [grades.get((q, d), 0) for d in docs]
            query_of += [q] * len(docs)
        rows = np.vstack(blocks) if blocks else np.zeros((0, len(NAMES)))
        return rows, np.array(targets, dtype=int), np.array(query_of, dtype=object)

    def _fit(self, rows: np.ndarray, targets: np.ndarray, query_of: np.ndarray) -> list[Any]:
        """The model leaving out each fold, then the model of all labelled queries; refuses too few labels."""
        fold_of = np.array([self.fold(q) for q in query_of], dtype=int)
        relevant = int((targets >= 1).sum())
        models = []
        for left_out in [*range(self.folds), None]:
            seen = fold_of != left_out
            have = int((targets[seen] >= 1).sum()), int((targets[seen] == 0).sum())
            if min(have) < MIN_PER_CLASS:
                raise JudgeError(
                    f"trained judge: too few labels to train: {len(targets)} training pairs over "
                    f"{len(set(query_of))} labelled queries, {relevant} relevant; each of the {self.folds} folds' "
                    f"models needs at least {MIN_PER_CLASS} relevant and {MIN_PER_CLASS} non-relevant pairs "
                    "from the other queries (label more queries, or lower folds=)"
                )
            models.append(_classifier().fit(rows[seen], targets[seen]))
        return models


def _classifier() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=REGULARISATION, max_iter=2000))


def _grade_probabilities(model: Any, rows: np.ndarray) -> np.ndarray:
    """Probabilities of grades 0-3 per row (a grade the model never saw has probability 0)."""
    probabilities = np.zeros((len(rows), len(LABELS)))
    probabilities[:, model.classes_] = model.predict_proba(rows)
    return probabilities


def _grades(labels: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(query_id, doc_id) -> grade clamped to 0-3, in a canonical order; a pair given twice must agree."""
    grades: dict[tuple[str, str], int] = {}
    for row, (q, d, r) in enumerate(zip(labels["query_id"], labels["doc_id"], labels["relevance"]), start=1):
        key = (str(q), str(d))
        try:
            grade = min(max(int(r), 0), 3)
        except (TypeError, ValueError, OverflowError):
            raise JudgeError(
                f"trained judge: labels row {row}: relevance {r!r} of ({key[0]!r}, {key[1]!r}) is not an integer"
            ) from None
        if grades.setdefault(key, grade) != grade:
            raise JudgeError(f"trained judge: labels row {row}: pair ({key[0]!r}, {key[1]!r}) given two grades")
    return dict(sorted(grades.items()))


def _digest_rows(rows: Iterable[Iterable[object]]) -> str:
    """A short SHA-256 of tab-separated rows: what the identity records of the labels, corpus and queries."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(("\t".join(map(str, row)) + "\n").encode())
    return "sha256:" + digest.hexdigest()[:16]
