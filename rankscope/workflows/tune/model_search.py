"""Sequential model-based search of a tuning space (optuna's TPE), kept honest under cross-validation.

A grid scores every point; a space too large for that (four parameters of twenty
values each) is searched by optuna's tree-structured Parzen estimator, which
proposes each next point from the scores so far. The search must never see the
held-out queries, or the cross-validated gain would flatter it: each fold runs its
own study on its training queries and its best point is then scored on the held-out
fold; one more study on all queries gives the in-sample best. The points are the
grid's (a numeric parameter is searched as an ordered index into its grid values,
a text one as a category), so a grid and a search of the same space can be compared
point for point; each point is scored on all queries once and cached, so a point
several studies propose costs one evaluation. Every study uses the same seed
(``TPESampler(seed=seed)``), and the folds are the grid's (:func:`assign_folds`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core.extras import require_extra

if TYPE_CHECKING:
    from optuna.trial import Trial

Point = tuple[int, ...]
"""A point as the position of each parameter's value in its grid values (grid order = tuple order)."""


@dataclass(frozen=True)
class SearchOutcome:
    """``values``: every point any study scored (in grid order) with its per-query values;
    ``chosen[i][fold]``: the best point of the study on that fold's training queries under the i-th
    fold assignment."""

    values: dict[Point, pd.Series]
    chosen: list[dict[int, Point]]


def optuna_search(
    space: Mapping[str, Sequence[object]],
    score: Callable[[Point], pd.Series],
    folds: Sequence[pd.Series],
    trials: int,
    seed: int,
    tick: Callable[[], object] = lambda: None,
) -> SearchOutcome:
    """Run one TPE study of ``trials`` trials per fold of each assignment in ``folds`` (one per fold
    seed; on its training queries) and one on all queries (whose points join those the in-sample best
    is chosen from). Points are scored once, whichever studies propose them.

    ``score(point)`` gives a point's per-query values (index query_id, the index of each of ``folds``);
    ``tick`` is called after every trial (a progress bar).
    """
    optuna = _import_optuna()
    cache: dict[Point, pd.Series] = {}

    def values(point: Point) -> pd.Series:
        if point not in cache:
            cache[point] = score(point)
        return cache[point]

    names = list(space)
    sizes = [len(space[n]) for n in names]
    numeric = [all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in space[n]) for n in names]

    def study_best(query_ids: pd.Index) -> Point:
        tried: list[Point] = []

        def objective(trial: Trial) -> float:
            point = tuple(
                0
                if size == 1
                else trial.suggest_int(name, 0, size - 1)
                if is_number
                else trial.suggest_categorical(name, list(range(size)))
                for name, size, is_number in zip(names, sizes, numeric)
            )
            tried.append(point)
            tick()
            return float(values(point).loc[query_ids].mean())

        study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
        study.optimize(objective, n_trials=trials)
        # the best mean on these queries; ties go to the first in grid order, as on a grid
        means = {p: float(values(p).loc[query_ids].mean()) for p in set(tried)}
        return min(means, key=lambda p: (-means[p], p))

    with _quiet(optuna):
        chosen = [
            {int(fold): study_best(fold_of.index[fold_of.to_numpy() != fold]) for fold in sorted(set(fold_of))}
            for fold_of in folds
        ]
        study_best(folds[0].index)  # the in-sample search: its points join those the best is chosen from
    return SearchOutcome(values={p: cache[p] for p in sorted(cache)}, chosen=chosen)


def _import_optuna() -> ModuleType:
    return require_extra("optuna", "tune", "--search optuna")


@contextlib.contextmanager
def _quiet(optuna: ModuleType) -> Iterator[None]:
    """optuna logs every trial at INFO; silence it for the search, then restore the user's level."""
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield
    finally:
        optuna.logging.set_verbosity(level)


def point_values(space: Mapping[str, Sequence[object]], point: Point) -> dict[str, object]:
    """A point's parameter values from its grid positions."""
    return {name: space[name][i] for name, i in zip(space, point)}
