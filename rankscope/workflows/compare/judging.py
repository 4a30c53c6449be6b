"""Compare with judgments: a :class:`~rankscope.workflows.options.Judging` checked before anything runs,
the pool judged by the judge workflow, what provenance records of them, and with a human sample the
naive, PPI and PPI++ intervals of every metric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.workflows.common.judgments import Judgments
from rankscope.workflows.options import Execution, Judging

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset


def check_judging(judging: Judging) -> None:
    """A :class:`Judging`'s judge and options refused in one line before anything runs, as ``rankscope judge``
    refuses them."""
    from rankscope.workflows.judge import Study, check_arguments, given_judge

    check_arguments(judging.judge, judging.depth, Study(human_sample=judging.human_sample))
    made = given_judge(judging.judge)
    if isinstance(judging.judge, str) and made is not None:
        made.close()  # made only to check it; the judge workflow makes its own


def judged_pool(data: Dataset, runs: Mapping[str, pd.DataFrame], judging: Judging, execution: Execution) -> Judgments:
    """The runs' pool judged by the judge workflow (:func:`rankscope.workflows.judge.judge`, so the labels,
    the merged qrels and the human sample are the ones ``rankscope judge --out`` writes)."""
    from rankscope.workflows.judge import Study, judge

    study = Study(human_sample=judging.human_sample)
    every = Execution(seed=execution.seed, scheduler=execution.scheduler)
    return judge(
        data, runs, judging.judge, depth=judging.depth, judgments=judging.cache, study=study, execution=every
    ).judgments()


def judged_settings(judgments: str | Path | Judging | None) -> dict[str, object]:
    """What provenance records of the judgments scored with: the folder, or the judge and its options."""
    if judgments is None:
        return {}
    if not isinstance(judgments, Judging):
        return {"judgments": str(judgments)}
    judge = judgments.judge if isinstance(judgments.judge, str) else str(judgments.judge.identity)
    return {"judge": judge, "human_sample": judgments.human_sample, "pool_depth": judgments.depth}


def judge_intervals(
    judged: Judgments, runs: Mapping[str, pd.DataFrame], metrics: Sequence[str], baseline: str
) -> pd.DataFrame:
    """Per metric, each system's and each difference with ``baseline``'s naive, PPI and PPI++ intervals
    (the columns of :class:`~rankscope.evaluation.ppi.PPIResult`, ``baseline`` empty for a system's
    own mean), or an empty frame without a human sample."""
    if judged.human_sample is None:
        return pd.DataFrame()
    frames = []
    for metric in metrics:
        found = judged.intervals(runs, metric, baseline=baseline)
        means = found.means.assign(baseline="")
        for table in (means, found.differences):
            frames.append(table.assign(metric=metric, confidence=found.confidence))
    table = pd.concat(frames, ignore_index=True)
    first = ["metric", "system", "baseline"]
    return table[first + [c for c in table.columns if c not in first]]
