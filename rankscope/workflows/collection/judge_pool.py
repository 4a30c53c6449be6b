"""``collection judge``: a judge labels the whole pool, every question and every pooled pair, before or after people.

The pairs are ``pool.tsv``'s, with the texts of the collection's corpus and questions, asked through
:func:`rankscope.judging.pairs.judge_pairs` into the collection's own ``judgments.sqlite`` (where people's
labels live too), so a re-run, a second process judging at once or a run after a ``kill -9`` asks only
what the file does not hold yet. ``collection export`` then merges: a pair people labelled has their
grade, any other the judge's. A question the judge could not label (no pooled pair, every call failed
or invalid) is named with the reason, as export's report names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankscope.judging.base import FAILED, INVALID, OK, Judge, JudgeIdentity
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.pairs import Outcome, judge_pairs
from rankscope.workflows.collection.layout import collection_dataset, require_collection
from rankscope.workflows.collection.pooling import read_pool
from rankscope.workflows.judge.pool import pairs_to_judge


@dataclass(frozen=True)
class PoolJudged:
    """What judging the pool did: the pairs asked, the calls, and each question left without a judge's label."""

    folder: Path
    judge: JudgeIdentity
    questions: int
    pairs: int
    not_shown: int
    outcome: Outcome
    unlabelled: dict[str, str]
    warnings: tuple[str, ...] = ()
    """How many calls failed and why (:meth:`~rankscope.judging.pairs.Outcome.failure_warning`); a re-run asks them."""

    def to_text(self) -> str:
        o = self.outcome
        lines = [
            f"{self.folder}: judge {self.judge} labelled the pool: {self.pairs} pairs of {self.questions} questions",
            f"  judge calls {o.calls}, cache hits {o.cache_hits}, invalid replies {o.invalid}, failed {o.failed}",
        ]
        if self.not_shown:
            lines.append(f"  {self.not_shown} pooled pairs name a document or question no longer in the collection")
        lines += [f"  question {q}: no label from the judge ({why})" for q, why in self.unlabelled.items()]
        lines.append(f"  now: rankscope collection sample {self.folder} --budget N, or export")
        return "\n".join(lines)


def judge_collection(folder: str | Path, judge: str | Judge) -> PoolJudged:
    """Have ``judge`` (a spec or a Judge) label every pooled pair of the collection in ``folder``."""
    from rankscope.judging.spec import make_judge, parse_judge_spec

    if isinstance(judge, str):  # a mistyped spec is refused before anything is read
        parse_judge_spec(judge)
    folder = require_collection(Path(folder))
    ranks, _ = read_pool(folder)
    data = collection_dataset(folder)
    pooled = ranks[["query_id", "doc_id"]].drop_duplicates().sort_values(["query_id", "doc_id"], kind="stable")
    shown = pooled["query_id"].isin(data.queries["query_id"]) & pooled["doc_id"].isin(data.corpus["doc_id"])
    asked = pooled[shown].reset_index(drop=True)
    judge_obj = make_judge(judge) if isinstance(judge, str) else judge
    try:
        with JudgmentCache(folder) as cache:
            outcome = judge_pairs(judge_obj, pairs_to_judge(asked, data), cache)
    finally:
        if isinstance(judge, str):  # a judge made here is closed here; one given is the caller's
            judge_obj.close()
    failure = outcome.failure_warning()  # every call failed: JudgeFailedError, one line
    statuses = asked.assign(status=[j.status for j in outcome.judgments])
    return PoolJudged(
        folder,
        judge_obj.identity,
        len(data.queries),
        len(asked),
        int((~shown).sum()),
        outcome,
        unlabelled_questions(list(data.queries["query_id"]), statuses),
        (failure,) if failure else (),
    )


def unlabelled_questions(questions: list[str], statuses: pd.DataFrame) -> dict[str, str]:
    """Each question without an ``ok`` label among ``statuses`` (query_id, status), with why, in question order."""
    counts = statuses.groupby(["query_id", "status"]).size()
    reasons = {}
    for query_id in questions:
        mine = counts[query_id].to_dict() if query_id in counts.index.get_level_values(0) else {}
        if not mine:
            reasons[query_id] = "no pooled document: no system retrieved anything for it"
        elif not mine.get(OK):
            failed, invalid = mine.get(FAILED, 0), mine.get(INVALID, 0)
            reasons[query_id] = (
                f"of its {failed + invalid} pooled pairs, {failed} calls failed and {invalid} replies gave no label"
            )
    return reasons
