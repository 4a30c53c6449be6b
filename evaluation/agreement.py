"""How far a judge agrees with humans where both labelled: the labels themselves and the system rankings they give.

Labels: the confusion matrix (rows the human label, columns the judge's, over every grade from
the lowest to the highest seen) and Cohen's kappa, unweighted and with quadratic weights
``(i - j)**2`` on the grades' distance (the same numbers as scikit-learn's ``cohen_kappa_score``
given that scale as ``labels``; kappa is undefined, NaN, when both sides use one grade only).

Rankings: the systems ordered by their score under human labels and under the judge's. Kendall's
tau-b (as ``scipy.stats.kendalltau``) counts swapped pairs wherever they are; tau_AP (Yilmaz,
Aslam, Robertson 2008, "A new rank correlation coefficient for information retrieval", SIGIR)
weighs a swap near the top more, which is where a judge's errors change which system wins:

    tau_AP = 2 / (N - 1) * sum over i = 2..N of C(i) / (i - 1)  -  1

where the systems are in the judge's order and C(i) counts the systems above position i that the
humans also rank above (or level with) the system at i. The judge's order breaks ties by system
name (byte order), so the coefficient is deterministic; it is not symmetric: the humans are the
reference. Both are reported over all systems and over the better half (the ceil(N/2) best under
human labels), where published LLM-judge studies find agreement lower.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError, SchemaError, duplicate_message


@dataclass(frozen=True)
class LabelAgreement:
    """Agreement on the pairs both labelled: counts per (human, judge) grade and Cohen's kappas."""

    confusion: pd.DataFrame
    kappa: float
    kappa_quadratic: float

    @property
    def n_pairs(self) -> int:
        return int(self.confusion.to_numpy().sum())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the matrix as ``{human grade: {judge grade: count}}``."""
        matrix = {str(h): {str(j): int(c) for j, c in row.items()} for h, row in self.confusion.iterrows()}
        return {
            "n_pairs": self.n_pairs,
            "kappa": self.kappa,
            "kappa_quadratic": self.kappa_quadratic,
            "confusion": matrix,
        }


def label_agreement(human_qrels: pd.DataFrame, judge_qrels: pd.DataFrame) -> LabelAgreement:
    """Confusion matrix and kappas of the (query, document) pairs present in both qrels."""
    from rankscope.corpora.schema import validate

    keys = ["query_id", "doc_id"]
    human = validate(human_qrels, "qrels", "human qrels")
    judge = validate(judge_qrels, "qrels", "judge qrels")
    for name, qrels in (("human qrels", human), ("judge qrels", judge)):
        repeated = qrels.duplicated(keys)
        if repeated.any():
            key = tuple(qrels.loc[repeated, keys].iloc[0])
            raise SchemaError(f"{name}: {duplicate_message('query, document', key)}")
    both = human.merge(judge, on=keys, suffixes=("_human", "_judge"))
    if both.empty:
        raise RankscopeError("no (query, document) pair was labelled by both the humans and the judge")
    confusion = confusion_matrix(both["relevance_human"].to_numpy(), both["relevance_judge"].to_numpy())
    counts = confusion.to_numpy()
    return LabelAgreement(confusion, cohen_kappa(counts), cohen_kappa(counts, quadratic=True))


def confusion_matrix(human: np.ndarray, judge: np.ndarray) -> pd.DataFrame:
    """Counts of each (human, judge) grade pair, every grade from the lowest to the highest seen."""
    human, judge = np.asarray(human, dtype=np.int64), np.asarray(judge, dtype=np.int64)
    if human.shape != judge.shape or human.ndim != 1 or len(human) == 0:
        raise ValueError(f"need two non-empty 1-d label arrays of one length, got shapes {human.shape}, {judge.shape}")
    lowest = int(min(human.min(), judge.min()))
    grades = np.arange(lowest, int(max(human.max(), judge.max())) + 1)
    counts = np.zeros((len(grades), len(grades)), dtype=np.int64)
    np.add.at(counts, (human - lowest, judge - lowest), 1)
    return pd.DataFrame(counts, index=pd.Index(grades, name="human"), columns=pd.Index(grades, name="judge"))


def cohen_kappa(confusion: np.ndarray, *, quadratic: bool = False) -> float:
    """``1 - sum(w * observed) / sum(w * expected)`` with ``w`` 1 off the diagonal, or ``(i - j)**2``."""
    observed = np.asarray(confusion, dtype=np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices(observed.shape)
    weights = (i - j) ** 2.0 if quadratic else (i != j).astype(np.float64)
    chance = float((weights * expected).sum())
    if chance == 0:
        return float("nan")  # one grade on both sides: agreement by chance is certain, kappa undefined
    return 1.0 - float((weights * observed).sum()) / chance


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors over the same items (NaN when either is constant)."""
    if np.shape(x) != np.shape(y) or np.ndim(x) != 1:
        raise ValueError(f"need two 1-d score arrays of one length, got shapes {np.shape(x)}, {np.shape(y)}")
    sx, sy = _pair_signs(x), _pair_signs(y)
    denominator = np.sqrt(float(np.abs(sx).sum()) * float(np.abs(sy).sum()))
    return float((sx * sy).sum() / denominator) if denominator else float("nan")


def tau_ap(reference: pd.Series, estimated: pd.Series) -> float:
    """tau_AP of the ranking by ``estimated`` against the one by ``reference`` (both indexed by system).

    Higher scores rank first; ``estimated``'s ties are broken by system name.
    """
    names = _same_systems(reference, estimated)
    if len(names) < 2:
        return float("nan")
    order = sorted(names, key=lambda s: (-float(estimated[s]), s))
    truth = np.array([float(reference[s]) for s in order])
    # agrees[i, j]: the reference does not rank the system at position j below the one at i; C(i) counts j < i
    agrees = truth[None, :] >= truth[:, None]
    below_diagonal = np.tril(np.ones((len(order), len(order)), dtype=bool), k=-1)
    correct = (agrees & below_diagonal).sum(axis=1)[1:]
    return float(2.0 / (len(order) - 1) * np.sum(correct / np.arange(1, len(order))) - 1.0)


def ranking_agreement(human: Mapping[str, float] | pd.Series, judge: Mapping[str, float] | pd.Series) -> pd.DataFrame:
    """Kendall's tau-b and tau_AP of the system rankings under judge and human labels, over all
    systems and over the better half under human labels. Columns: ``systems, n_systems, kendall_tau_b, tau_ap``."""
    human, judge = pd.Series(human, dtype=np.float64), pd.Series(judge, dtype=np.float64)
    names = _same_systems(human, judge)
    best = sorted(names, key=lambda s: (-float(human[s]), s))[: (len(names) + 1) // 2]
    rows = []
    for label, subset in (("all", names), ("better half", best)):
        h, j = human[subset], judge[subset]
        rows.append(
            {
                "systems": label,
                "n_systems": len(subset),
                "kendall_tau_b": kendall_tau_b(h.to_numpy(), j.to_numpy()) if len(subset) > 1 else float("nan"),
                "tau_ap": tau_ap(h, j),
            }
        )
    return pd.DataFrame(rows)


def _pair_signs(values: np.ndarray) -> np.ndarray:
    """sign(v_i - v_j) of every pair i < j."""
    v = np.asarray(values, dtype=np.float64)
    upper = np.triu_indices(len(v), k=1)
    return np.sign(v[:, None] - v[None, :])[upper]


def _same_systems(first: pd.Series, second: pd.Series) -> list[str]:
    """The systems of both score series, which must name the same ones, each once."""
    for name, scores in (("human", first), ("judge", second)):
        if scores.index.has_duplicates:
            raise SchemaError(f"{name} scores: system {scores.index[scores.index.duplicated()][0]!r} appears twice")
        if scores.isna().any():
            raise SchemaError(f"{name} scores: system {scores.index[scores.isna()][0]!r} has no score")
    only = first.index.symmetric_difference(second.index)
    if len(only):
        raise SchemaError(f"system {only[0]!r} has a score under one set of labels only")
    return [str(s) for s in first.index]
