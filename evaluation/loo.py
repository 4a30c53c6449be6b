"""Leave-one-out evaluation of recommenders on an interaction log.

Each user's latest interaction becomes the single relevant document of a
"query" (the user id); everything before it is training data. Rules:

- latest = largest timestamp; interactions sharing that timestamp are ordered
  by item id, and the largest item id (byte order) is the target, so the split
  does not depend on the order of the lines in the file;
- earlier interactions of the user with the target item are removed from
  training too (otherwise the answer leaks into the input);
- users with fewer than 2 distinct items cannot give both a training history
  and a target: they are left out and counted in ``n_excluded_users``;
- every interaction counts as positive whatever its rating (implicit feedback).

Full ranking ranks every item the user has not interacted with in training.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rankscope.core.errors import SchemaError
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.interactions import validate_interactions

Recommender = Callable[[str, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class LeaveOneOutSplit:
    """Training interactions, single-target qrels and the item universe."""

    train: pd.DataFrame
    qrels: pd.DataFrame
    items: np.ndarray
    n_excluded_users: int

    def seen(self) -> pd.DataFrame:
        """Training (query_id, doc_id) pairs, the documents to keep out of each user's candidates."""
        pairs = self.train[["user_id", "item_id"]].drop_duplicates()
        return pairs.rename(columns={"user_id": "query_id", "item_id": "doc_id"}).reset_index(drop=True)


def leave_one_out(interactions: pd.DataFrame, source: str = "<DataFrame>") -> LeaveOneOutSplit:
    """Split ``interactions`` (user_id, item_id, rating, timestamp) into training data and targets."""
    log = validate_interactions(interactions, source)
    items = np.array(sorted(log["item_id"].unique()), dtype=object)
    distinct = log.groupby("user_id")["item_id"].nunique()
    kept_users = distinct.index[distinct >= 2]
    log = log[log["user_id"].isin(kept_users)]
    latest = log.sort_values(["user_id", "timestamp", "item_id"], kind="stable").groupby("user_id", sort=True).tail(1)
    qrels = pd.DataFrame(
        {
            "query_id": latest["user_id"].to_numpy(),
            "doc_id": latest["item_id"].to_numpy(),
            "relevance": np.ones(len(latest), dtype=np.int64),
        }
    )
    target_of = dict(zip(qrels["query_id"], qrels["doc_id"]))
    is_target_item = log["item_id"].to_numpy() == log["user_id"].map(target_of).to_numpy()
    train = log.loc[~is_target_item].reset_index(drop=True)
    return LeaveOneOutSplit(train=train, qrels=qrels, items=items, n_excluded_users=int((distinct < 2).sum()))


@check_arguments(k=Param(int, low=1))
def full_ranking_run(
    recommender: Recommender,
    users: Sequence[str],
    items: Sequence[str],
    seen: pd.DataFrame,
    k: int = 100,
) -> pd.DataFrame:
    """The top ``k`` of every item each user has not seen, as a run (trec_eval tie rule).

    ``recommender(user_id, item_ids)`` returns one finite score per item;
    ``seen`` holds (query_id, doc_id) pairs removed from that user's ranking.
    """
    # Columns in doc_id-descending order, so a stable sort on score gives trec_eval's tie rule: a fast path
    # for a users x items matrix; the reference is corpora.schema.sort_run (tests/test_tie_rule.py).
    catalogue = np.array(sorted(map(str, items), reverse=True), dtype=object)
    users = [str(u) for u in users]
    scores = np.empty((len(users), len(catalogue)))
    for row, user in enumerate(users):
        scores[row] = checked_scores(recommender(user, catalogue), user, len(catalogue))
    user_pos = pd.Index(users).get_indexer(seen["query_id"].astype(str))
    item_pos = pd.Index(catalogue).get_indexer(seen["doc_id"].astype(str))
    known = (user_pos >= 0) & (item_pos >= 0)
    scores[user_pos[known], item_pos[known]] = -np.inf
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    top_scores = np.take_along_axis(scores, top, axis=1)
    keep = np.isfinite(top_scores)
    ranks = np.broadcast_to(np.arange(1, top.shape[1] + 1, dtype=np.int64), top.shape)
    return pd.DataFrame(
        {
            "query_id": np.repeat(np.array(users, dtype=object), top.shape[1])[keep.ravel()],
            "doc_id": catalogue[top][keep],
            "score": top_scores[keep],
            "rank": ranks[keep],
        }
    )


def checked_scores(scores: object, query_id: str, expected: int) -> np.ndarray:
    """The scorer's output as float64, refusing a wrong length or non-finite values (naming the query)."""
    values = np.asarray(scores, dtype=np.float64)
    if values.shape != (expected,):
        raise SchemaError(f"query {query_id!r}: the scorer returned shape {values.shape} for {expected} documents")
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise SchemaError(
            f"query {query_id!r}: the scorer returned a non-finite score ({values[bad[0]]}) "
            f"for document {bad[0]} of {expected}; scores must be finite numbers"
        )
    return values
