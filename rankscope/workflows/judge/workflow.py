"""``rankscope judge``: pool the systems' top documents, judge the holes the humans left, merge the labels.

Every system (a spec, a Retriever, a run; :mod:`rankscope.workflows.common.systems`, as in ``compare``)
gives its top ``depth`` per query; their union is the pool. The judge is asked only about pooled
pairs without a human judgment (``rejudge=True``: about the judged ones too, to measure the
judge's agreement), through the cache (:mod:`rankscope.judging.cache`), so the judge calls are
the distinct unjudged pooled pairs the cache does not already hold: on a fresh cache exactly
their number, on a second run 0. The output folder holds ``qrels.txt`` (the human qrels plus the
judge's labels for the holes, TREC format: human labels win, invalid and failed replies stay
holes), ``labels.jsonl`` (one line per pooled pair and source), ``systems.csv`` and
``summary.json`` (the counts, and per system the share of its top 10 that only the judge
labelled), with ``provenance.json`` and the report (:func:`rankscope.reporting.finish.finish`).
What the result shows, and how: :mod:`.result`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.scheduler import using
from rankscope.evaluation.ppi import PPIResult
from rankscope.judging.audit import DESCRIBED, ProbeResult
from rankscope.judging.audit import audit as audit_judge
from rankscope.judging.base import OK, Judge, JudgeIdentity, Pair
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.injection import flagged_documents, injection_warning
from rankscope.judging.pairs import Outcome, judge_pairs
from rankscope.judging.spec import make_judge, parse_judge_spec
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.workflows.common.fanout import produce_runs
from rankscope.workflows.common.judgments import (
    LABEL_COLUMNS,
    SHARE_DEPTH,
    Judgments,
    judge_only_qrels,
    system_shares,
)
from rankscope.workflows.common.runs import DatasetSource, check_depth, resolve_dataset
from rankscope.workflows.common.systems import System, SystemLike, descriptions, resolve_systems
from rankscope.workflows.judge.outside import DEPTH as OUTSIDE_DEPTH
from rankscope.workflows.judge.outside import outside_pool
from rankscope.workflows.judge.pool import Pool, make_pool, pairs_to_judge
from rankscope.workflows.judge.result import JudgeResult
from rankscope.workflows.options import Execution, Output

if TYPE_CHECKING:
    from rankscope.corpora.dataset import Dataset


@dataclass(frozen=True)
class Study:
    """What ``rankscope judge`` measures beyond the labels.

    ``rejudge`` asks the judge about the pairs humans judged too (their agreement is reported);
    ``audit`` probes it for position, length, keyword-stuffing and prompt-injection bias on ``audit_pairs`` pooled
    pairs (:mod:`rankscope.judging.audit`); ``human_sample`` draws that many judged queries as the
    human sample and gives naive, PPI and PPI++ intervals of each system's mean ``metric`` under the
    humans' labels over the judged queries (:meth:`~rankscope.workflows.common.judgments.Judgments.ppi_qrels`:
    the judge then labels every pooled pair, since the correction compares its labels with the
    humans' where both exist); ``blind`` is the calibration study: the dataset's judgments hidden
    but the sample's, and each interval checked against the mean under the full judgments;
    ``outside_pool`` draws that many unjudged documents per query outside everything judged for the
    judge to label, and estimates R and each system's Recall@100 with intervals
    (:mod:`rankscope.workflows.judge.outside`).
    """

    rejudge: bool = False
    audit: bool = False
    audit_pairs: int = 200
    human_sample: int | None = None
    blind: bool = False
    metric: str = "ndcg@10"
    outside_pool: int | None = None


def judge(
    dataset: DatasetSource = "cranfield",
    systems: Sequence[SystemLike] | Mapping[str, SystemLike] = ("bm25",),
    judge: str | Judge | None = None,
    out: str | Path | Output | None = None,
    *,
    depth: int = 10,
    judgments: str | Path | None = None,
    study: Study = Study(),
    execution: Execution = Execution(),
) -> JudgeResult:
    """Pool the top ``depth`` of every system, judge the unjudged pooled pairs, merge; write to ``out``.

    ``judge`` is a spec (``openai:model=M,base_url=U``, ``qrels:PATH,flip=F,seed=S``) or a
    :class:`~rankscope.judging.base.Judge`; ``judgments`` the cache folder (default: the user cache);
    ``study`` says what else to measure (:class:`Study`); ``execution`` gives the seed drawing the
    audit's pairs and the human sample, and a scheduler for the systems' runs and the judge's calls
    (:func:`rankscope.judging.pairs.judge_pairs`: tasks sharing the one cache).
    """
    human_sample, blind = study.human_sample, study.blind
    seed, scheduler = execution.seed, execution.scheduler
    check_arguments(judge, depth, study)
    resolved = resolve_systems(systems)
    judge_obj = given_judge(judge)
    out_path, figures = Output.of(out).checked()
    data = resolve_dataset(dataset)
    if judge_obj is None:
        judge_obj = make_judge(str(judge), data.qrels)  # qrels without a path: the dataset's own
    sample = draw_sample(data.qrels, human_sample, seed) if human_sample is not None else []
    visible = data.qrels[data.qrels["query_id"].isin(sample)] if blind else data.qrels
    # PPI needs the judge's label where the humans' is known
    every_pair = study.rejudge or blind or human_sample is not None
    try:
        with using(scheduler) as client, JudgmentCache(judgments) as cache:  # one cluster: the runs, then the calls
            deep = max(depth, OUTSIDE_DEPTH) if study.outside_pool is not None else depth  # the strata's ranks
            runs = {name: produced.run for name, produced in produce_runs(resolved, data, deep, client)}
            deep_runs, runs = runs, {name: run[run["rank"] <= depth] for name, run in runs.items()}
            pool = make_pool(runs, data, depth, visible)
            asked = pool.pairs if every_pair else pool.unjudged
            to_ask = pairs_to_judge(asked, data)
            flagged, injection = _injection(judge_obj, to_ask)  # before judging: what the labels may follow
            outcome = judge_pairs(judge_obj, to_ask, cache, client)
            failure = outcome.failure_warning()  # every call failed: JudgeFailedError, before the audit asks more
            labels = pooled_labels(pool, asked, outcome, judge_obj.identity)
            merged = merged_qrels(visible, labels)
            outside = (
                outside_pool(data, deep_runs, merged, judge_obj, cache, study.outside_pool, seed)
                if study.outside_pool is not None
                else None
            )
            probes = (
                audit_judge(judge_obj, pairs_to_judge(pool.pairs, data), cache, n=study.audit_pairs, seed=seed)
                if study.audit
                else []
            )
    finally:
        if isinstance(judge, str):  # a judge made here is closed here; one given is the caller's
            judge_obj.close()
    intervals, sample_qrels, population = _human_sample(data.qrels, sample, merged, labels, runs, study)
    agreement = judge_agreement(data.qrels, judge_only_qrels(labels), runs, study.metric) if every_pair else None
    result = JudgeResult(
        dataset=data.name,
        judge=judge_obj.identity,
        depth=depth,
        rejudge=study.rejudge,
        counts=_counts(pool, outcome, flagged),
        systems=system_shares(runs, labels, min(SHARE_DEPTH, depth)),
        labels=labels,
        qrels=merged,
        warnings=_warnings(
            failure, injection, circular_warnings(resolved, judge_obj.identity, judge_obj.shares), probes, intervals
        ),
        audit=tuple(probes),
        ppi=intervals,
        agreement=agreement,
        human_sample=sample_qrels,
        population=population,
        outside=outside,
        provenance=_provenance(data, resolved, judge_obj.identity, depth, study, seed, sample),
        seconds=outcome.seconds,
    )
    return finish(result, out_path, figures)


def _human_sample(
    qrels: pd.DataFrame,
    sample: Sequence[str],
    merged: pd.DataFrame,
    labels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    study: Study,
) -> tuple[PPIResult | None, pd.DataFrame | None, tuple[str, ...] | None]:
    """With a human sample: the intervals of each system's mean ``study.metric``, the sample's judgments
    and the sampling frame (the judged queries); else nothing."""
    if study.human_sample is None:
        return None, None, None
    population = tuple(sorted(pd.unique(qrels["query_id"])))
    sample_qrels = qrels[qrels["query_id"].isin(sample)]
    judged_labels = Judgments(None, merged, labels, sample_qrels, population)
    truth = qrels if study.blind else None
    intervals = judged_labels.intervals(runs, study.metric, baseline=next(iter(runs)), truth_qrels=truth)
    return intervals, sample_qrels, population


def _counts(pool: Pool, outcome: Outcome, flagged: int) -> dict[str, int]:
    """The pool's pairs, the documents asked about holding text addressed to the judge (``flagged``) and
    what asking the judge cost (the result's ``counts``)."""
    return {
        "pairs": len(pool.pairs),
        "human_pairs": int(pool.pairs["human"].sum()),
        "unjudged_pairs": len(pool.unjudged),
        "not_shown": pool.missing_text,
        "distinct_asked": outcome.distinct,
        "calls": outcome.calls,
        "cache_hits": outcome.cache_hits,
        "invalid": outcome.invalid,
        "failed": outcome.failed,
        "injection_flagged": flagged,
        "estimated_tokens": outcome.estimated_tokens,
        "tokens": outcome.tokens,
    }


def _injection(judge: Judge, pairs: Sequence[Pair]) -> tuple[int, str | None]:
    """How many of the documents asked about hold text addressed to the judge, and the warning naming them
    (none for a judge answering from ids: it reads no text)."""
    if judge.reads_ids:
        return 0, None
    flagged = flagged_documents((pair.doc_id, pair.document) for pair in pairs)
    return len(flagged), injection_warning(flagged, len({pair.doc_id for pair in pairs}))


def _warnings(
    failure: str | None,
    injection: str | None,
    circular: tuple[str, ...],
    probes: Sequence[ProbeResult],
    intervals: PPIResult | None,
) -> tuple[str, ...]:
    """Calls that failed; documents addressed to the judge; a system judged by its own model; the audit's
    biases; the intervals' coverage."""
    return (
        tuple(filter(None, (failure, injection)))
        + circular
        + bias_warnings(probes)
        + (intervals.warnings if intervals is not None else ())
    )


def _provenance(
    data: Dataset,
    systems: Mapping[str, System],
    identity: JudgeIdentity,
    depth: int,
    study: Study,
    seed: int,
    sample: Sequence[str],
) -> Provenance:
    """What was judged, by which judge and prompt, to what depth, and what else was measured."""
    return provenance.record(
        "judge",
        data,
        descriptions(systems),
        judge=str(identity),
        judge_id=identity.key,
        prompt_hash=identity.prompt_hash,
        depth=depth,
        rejudge=study.rejudge,
        audit=study.audit,
        seed=seed,
        human_sample=study.human_sample,
        blind=study.blind,
        metric=study.metric,
        sample=" ".join(sample),
        outside_pool=study.outside_pool,
    )


def check_arguments(judge: str | Judge | None, depth: int, study: Study) -> None:
    """What :func:`judge` refuses first, in one line: no judge, a mistyped spec, a bad option."""
    check_depth(depth)
    if judge is None:
        raise RankscopeError("no judge given: pass a spec (openai:model=M,base_url=U or qrels:PATH) or a Judge")
    if study.audit and study.audit_pairs < 2:
        raise RankscopeError(f"--audit-pairs must be at least 2, got {study.audit_pairs}")
    if study.blind and study.human_sample is None:
        raise RankscopeError("--blind needs --human-sample N: the queries whose judgments stay visible")
    if study.outside_pool is not None and study.outside_pool < 1:
        raise RankscopeError(f"--outside-pool must be at least 1, got {study.outside_pool}")
    if study.human_sample is not None and study.human_sample < 2:
        raise RankscopeError(f"--human-sample must be at least 2, got {study.human_sample}")
    if study.human_sample is not None:
        from rankscope.evaluation.metrics import parse_metric

        parse_metric(study.metric)
    if isinstance(judge, str):
        parse_judge_spec(judge)


def given_judge(judge: str | Judge | None) -> Judge | None:
    """The judge a spec describes (refused before the dataset loads: a missing qrels file or key), the
    Judge given, or None for ``qrels`` without a path (the dataset's own judgments, made once it is loaded)."""
    if not isinstance(judge, str):
        return judge
    kind, options = parse_judge_spec(judge)
    return make_judge(judge) if kind != "qrels" or options["path"] else None


def pooled_labels(pool: Pool, asked: pd.DataFrame, outcome: Outcome, identity: JudgeIdentity) -> pd.DataFrame:
    """One row per pooled pair and source: the human label where there is one, the judge's where it was asked."""
    human = pool.pairs[pool.pairs["human"]]
    rows = pd.DataFrame(
        {
            "query_id": human["query_id"],
            "doc_id": human["doc_id"],
            "label": human["relevance"],
            "source": "human",
            "status": OK,
            "judge_id": "",
            "prompt_hash": "",
        }
    )
    judged = pd.DataFrame(
        {
            "query_id": asked["query_id"].to_numpy(),
            "doc_id": asked["doc_id"].to_numpy(),
            "label": pd.array([j.label for j in outcome.judgments], dtype="Int64"),
            "source": "judge",
            "status": [j.status for j in outcome.judgments],
            "judge_id": identity.key,
            "prompt_hash": identity.prompt_hash,
        }
    )
    both = pd.concat([rows.astype({"label": "Int64"}), judged], ignore_index=True)
    return both.sort_values(["query_id", "doc_id", "source"], kind="stable").reset_index(drop=True)[LABEL_COLUMNS]


def draw_sample(qrels: pd.DataFrame, size: int, seed: int) -> list[str]:
    """``size`` of the judged queries, drawn without replacement with ``seed``, in query-id order."""
    queries = sorted(pd.unique(qrels["query_id"]))
    if size > len(queries):
        raise RankscopeError(f"--human-sample {size} is more than the {len(queries)} judged queries")
    chosen = np.random.default_rng(seed).choice(len(queries), size=size, replace=False)
    return sorted(queries[i] for i in chosen)


def judge_agreement(
    human: pd.DataFrame, judged: pd.DataFrame, runs: Mapping[str, pd.DataFrame], metric: str
) -> dict[str, Any] | None:
    """Where both labelled: the confusion matrix and kappas (:func:`rankscope.evaluation.agreement.label_agreement`),
    and the systems' rankings by mean ``metric`` under each set of labels over the humans' queries
    (:func:`~rankscope.evaluation.agreement.ranking_agreement`; two systems at least)."""
    from rankscope.evaluation import evaluate
    from rankscope.evaluation.agreement import label_agreement, ranking_agreement

    if judged.merge(human, on=["query_id", "doc_id"]).empty:
        return None
    rankings: list[dict[str, Any]] = []
    if len(runs) > 1:
        population = pd.unique(human["query_id"])
        judged = judged[judged["query_id"].isin(population)]
        means = {
            side: {
                name: evaluate(qrels, run, [metric]).per_query["value"].sum() / len(population)
                for name, run in runs.items()
            }
            for side, qrels in (("human", human), ("judge", judged))
        }
        rankings = ranking_agreement(means["human"], means["judge"]).to_dict("records")
    return {"labels": label_agreement(human, judged).to_dict(), "metric": metric, "rankings": rankings}


def merged_qrels(human: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The human qrels plus the judge's ``ok`` labels of pairs the humans did not judge."""
    judge_rows = labels[(labels["source"] == "judge") & (labels["status"] == OK)]
    known = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]])
    new = judge_rows[~pd.MultiIndex.from_frame(judge_rows[["query_id", "doc_id"]]).isin(known)]
    added = pd.DataFrame(
        {"query_id": new["query_id"], "doc_id": new["doc_id"], "relevance": new["label"].astype("int64")}
    )
    merged = pd.concat([human[["query_id", "doc_id", "relevance"]], added], ignore_index=True)
    return merged.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)


def circular_warnings(
    systems: Mapping[str, Any], identity: JudgeIdentity, shares: Sequence[str] = ()
) -> tuple[str, ...]:
    """A warning for each system whose name or description names the judge's model, or a retriever whose
    scores the judge reads (``shares``, :attr:`~rankscope.judging.base.Judge.shares`): circular evaluation."""
    model = identity.model.strip().lower()
    named = identity.kind not in ("qrels", "callable") and len(model) >= 3
    warnings = []
    for name, system in systems.items():
        text = f"{name} {system.description}".lower()
        if named and model in text:
            warnings.append(
                f"system {name!r} names the judge's model {identity.model!r}: a model judging its own output "
                "favours it (circular evaluation)"
            )
        shared = [kind for kind in shares if re.search(rf"\b{re.escape(kind.lower())}\b", text)]
        if shared:
            warnings.append(
                f"system {name!r} uses {', '.join(shared)}, whose scores the judge reads as features: "
                "the judge favours it (circular evaluation)"
            )
    return tuple(warnings)


def bias_warnings(probes: Sequence[ProbeResult]) -> tuple[str, ...]:
    """A warning for each flagged audit probe."""
    return tuple(
        f"the judge {DESCRIBED[r.probe]}: grades move by {r.mean_shift:+.2f} on average over "
        f"{r.pairs} perturbed pairs (sign test p = {r.p_value:.2g})"
        for r in probes
        if r.flagged
    )
