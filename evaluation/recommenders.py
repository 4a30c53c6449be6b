"""Two simple recommenders, so the recommender protocols run end to end and can compare systems.

Both learn from training interactions (user_id, item_id, ...), treat every
interaction as a positive and are used as ``recommender.score(user_id, item_ids)``.
Items never seen in training score 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from rankscope.core.errors import NotFittedError, SchemaError
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.interactions import validate_interactions


class _Interactions:
    """Shared parts: the user and item vocabularies learned by ``fit``."""

    def _fit_vocabulary(self, train: pd.DataFrame) -> sparse.csr_matrix:
        """Binary user x item matrix of ``train``; sets ``users_`` and ``items_`` (id -> row / column)."""
        log = validate_interactions(train, "training interactions")
        users = sorted(log["user_id"].unique())
        items = sorted(log["item_id"].unique())
        self.users_ = {user: row for row, user in enumerate(users)}
        self.items_ = {item: col for col, item in enumerate(items)}
        rows = log["user_id"].map(self.users_).to_numpy()
        cols = log["item_id"].map(self.items_).to_numpy()
        matrix = sparse.csr_matrix((np.ones(len(log)), (rows, cols)), shape=(len(self.users_), len(self.items_)))
        matrix.data[:] = 1.0  # repeated (user, item) pairs count once
        return matrix

    def _item_positions(self, item_ids: Sequence[str]) -> np.ndarray:
        if not hasattr(self, "items_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(train) first")
        lookup = self.items_.get
        return np.fromiter((lookup(str(item), -1) for item in item_ids), dtype=np.int64, count=len(item_ids))


class MostPopular(_Interactions):
    """Score = how many training users interacted with the item (the same for every user)."""

    def fit(self, train: pd.DataFrame) -> MostPopular:
        self.popularity_ = np.asarray(self._fit_vocabulary(train).sum(axis=0)).ravel()
        return self

    def score(self, user_id: str, item_ids: Sequence[str]) -> np.ndarray:
        """Popularity of each item (0 for items unseen in training); ``user_id`` is not used."""
        positions = self._item_positions(item_ids)
        return np.where(positions >= 0, self.popularity_[positions], 0.0)


class ItemKNN(_Interactions):
    """Item-based nearest neighbours: score(u, i) = sum of cosine(i, j) over the items j that u saw.

    Cosine similarity between the items' binary user vectors; each item keeps its
    ``neighbours`` most similar items (all when ``None``; ties to the lower item
    position). ``popularity_penalty`` divides each score by popularity(i) ** penalty,
    a common debiasing that favours the long tail (0 = no penalty).
    """

    @check_arguments(neighbours=Param(int, low=1, optional=True), popularity_penalty=Param(float))
    def __init__(self, neighbours: int | None = 50, popularity_penalty: float = 0.0) -> None:
        self.neighbours = neighbours
        self.popularity_penalty = popularity_penalty

    def fit(self, train: pd.DataFrame) -> ItemKNN:
        matrix = self._fit_vocabulary(train)
        counts = np.asarray(matrix.sum(axis=0)).ravel()
        co_occurrence = (matrix.T @ matrix).toarray()
        norms = np.sqrt(counts)
        similarity = co_occurrence / np.outer(norms, norms)
        np.fill_diagonal(similarity, 0.0)
        if self.neighbours is not None and self.neighbours < similarity.shape[0]:
            weakest = np.argsort(-similarity, axis=0, kind="stable")[self.neighbours :]
            np.put_along_axis(similarity, weakest, 0.0, axis=0)
        scores = matrix @ similarity
        self.scores_ = scores / counts**self.popularity_penalty
        return self

    def score(self, user_id: str, item_ids: Sequence[str]) -> np.ndarray:
        """kNN scores of ``item_ids`` for a training user (an unknown user is an error)."""
        positions = self._item_positions(item_ids)
        row = self.users_.get(str(user_id))
        if row is None:
            raise SchemaError(f"user {user_id!r} has no training interactions; ItemKNN cannot score for them")
        return np.where(positions >= 0, self.scores_[row, positions], 0.0)
