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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.scheduler import using
from rankscope.evaluation.ppi import METHODS, PPIResult
from rankscope.judging.audit import ProbeResult
from rankscope.judging.audit import audit as audit_judge
from rankscope.judging.base import OK, Judge, JudgeIdentity
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.pairs import Outcome, judge_pairs
from rankscope.judging.spec import make_judge, parse_judge_spec
from rankscope.reporting import provenance
from rankscope.reporting.finish import finish
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, write_csv, write_text
from rankscope.reporting.tables import text_table
from rankscope.workflows.common.fanout import produce_runs
from rankscope.workflows.common.judgments import (
    HUMAN_SAMPLE,
    LABEL_COLUMNS,
    LABELS,
    POPULATION,
    QRELS,
    SHARE_DEPTH,
    Judgments,
    judge_only_qrels,
    system_shares,
)
from rankscope.workflows.common.runs import DatasetSource, check_depth, resolve_dataset
from rankscope.workflows.common.systems import SystemLike, descriptions, resolve_systems
from rankscope.workflows.judge.outside import CAPTION as OUTSIDE_CAPTION
from rankscope.workflows.judge.outside import DEPTH as OUTSIDE_DEPTH
from rankscope.workflows.judge.outside import Outside, outside_pool
from rankscope.workflows.judge.pool import Pool, make_pool, pairs_to_judge
from rankscope.workflows.options import Execution, Output

SYSTEMS_CAPTION = (
    "Per system, shares of its top 10 rows: labelled by humans, labelled by the judge alone (the pool's "
    "holes it filled), and its invalid and failed replies there (holes left open)"
)
AUDIT_CAPTION = (
    "Grade shift (second version minus first) on perturbed pairs a fair assessor grades alike; flagged when "
    "a sign test gives p < 0.01 and the mean moves at least 0.1 grade (docs/judges.md)"
)

INTERVALS_CAPTION = (
    "each system's mean under the judge's labels alone (naive) and corrected by the human sample (PPI, PPI++), "
    "with 95% intervals (Student's t, finite-population corrected: docs/intervals.md); truth = the mean under "
    "the full human judgments (blind study) and whether each covered it"
)


@dataclass(frozen=True)
class JudgeResult:
    """What judging the pool did: counts, per-system shares, every pooled label and the merged qrels."""

    dataset: str
    judge: JudgeIdentity
    depth: int
    rejudge: bool
    counts: dict[str, int]
    systems: pd.DataFrame  # index system: judge_share@10, invalid@10, failed@10, human_share@10
    labels: pd.DataFrame = field(repr=False)  # LABEL_COLUMNS
    qrels: pd.DataFrame = field(repr=False)  # merged, query_id doc_id relevance
    provenance: Provenance
    warnings: tuple[str, ...] = ()
    audit: tuple[ProbeResult, ...] = ()
    ppi: PPIResult | None = None
    agreement: dict[str, Any] | None = None
    human_sample: pd.DataFrame | None = field(default=None, repr=False)  # the sample's human qrels
    population: tuple[str, ...] | None = None  # the queries the sample was drawn from
    files: tuple[Path, ...] = ()
    outside: Outside | None = None  # --outside-pool: R and recall beyond everything judged
    seconds: float = field(default=0.0, compare=False)  # the calls' wall time: not a count, it varies run to run

    @property
    def calls_per_second(self) -> float:
        return self.counts["calls"] / self.seconds if self.seconds > 0 else 0.0

    def judgments(self) -> Judgments:
        """The labels as ``compare`` scores with them: what :func:`~rankscope.workflows.common.judgments.read_judgments`
        reads back from the folder this result writes."""
        return Judgments(None, self.qrels, self.labels, self.human_sample, self.population, self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "judge": {"id": self.judge.key, **self.judge.to_dict()},
            "depth": self.depth,
            "rejudge": self.rejudge,
            **self.counts,
            "calls_per_second": round(self.calls_per_second, 2),
            "systems": self.systems.to_dict("index"),
            "warnings": list(self.warnings),
            "audit": {r.probe: r.to_dict() for r in self.audit},
            "ppi": None if self.ppi is None else self.ppi.to_dict(),
            "agreement": self.agreement,
            "outside": None if self.outside is None else self.outside.to_dict(),
            "provenance": self.provenance.to_dict(),
        }

    def interval_table(self) -> pd.DataFrame:
        """Per system: the truth (a blind study's), and each method's estimate and interval (and coverage)."""
        return interval_table(self.ppi.means) if self.ppi is not None else pd.DataFrame()

    def audit_table(self) -> pd.DataFrame:
        return pd.DataFrame({r.probe: r.to_dict() for r in self.audit}).T.rename_axis("audit probe")

    def report(self) -> Report:
        """The counts, the systems' shares and the audit as a :class:`~rankscope.reporting.report.Report`."""
        report = Report(f"rankscope judge: {self.dataset}")
        report.paragraph(self.to_text().split("\n\n")[0].replace("\n", "; "))
        report.heading("Systems").table(self.systems, caption=SYSTEMS_CAPTION)
        if self.ppi is not None:
            report.heading(f"Intervals of mean {self.ppi.metric}").table(
                self.interval_table(), caption=INTERVALS_CAPTION
            )
        if self.audit:
            report.heading("Audit").table(self.audit_table(), caption=AUDIT_CAPTION)
        if self.outside is not None:
            report.heading("Recall beyond the pool").table(self.outside.table(), caption=OUTSIDE_CAPTION)
        if self.warnings:
            report.heading("Warnings").bullets(list(self.warnings))
        return provenance.add_section(report, self.provenance)

    def write_tables(self, out: Path) -> list[Path]:
        """qrels.txt (merged, TREC), labels.jsonl (one line per pooled pair and source), systems.csv."""
        from rankscope.corpora.trec import write_trec_qrels

        write_trec_qrels(self.qrels, out / QRELS)
        written = [out / QRELS]
        if self.human_sample is not None:  # what compare --judgments corrects the judge with, and over which queries
            write_trec_qrels(self.human_sample, out / HUMAN_SAMPLE)
            written += [
                out / HUMAN_SAMPLE,
                write_text(out / POPULATION, "".join(f"{q}\n" for q in self.population or ())),
            ]
        lines = [
            json.dumps({**row, "label": None if pd.isna(row["label"]) else int(row["label"])}, ensure_ascii=False)
            for row in self.labels.astype(object).to_dict("records")
        ]
        if self.outside is not None:
            written.append(write_csv(self.outside.sample, out / "outside_sample.csv", index=False))
            written.append(write_csv(self.outside.estimate.queries, out / "outside_queries.csv", index=False))
            written.append(write_csv(self.outside.estimate.per_query, out / "outside_recall.csv", index=False))
        return [
            *written,
            write_text(out / LABELS, "".join(line + "\n" for line in lines)),
            write_csv(self.systems, out / "systems.csv"),
        ]

    def to_text(self) -> str:
        c = self.counts
        lines = [
            f"judge {self.judge} (prompt {self.judge.prompt_hash or '-'}) on {self.dataset}, pool depth {self.depth}",
            f"pooled pairs {c['pairs']}: {c['human_pairs']} judged by humans, {c['unjudged_pairs']} not "
            f"({c['distinct_asked']} distinct texts asked{' with rejudging' if self.rejudge else ''})",
            f"judge calls {c['calls']} ({self.calls_per_second:.1f} a second), cache hits {c['cache_hits']}, "
            f"invalid replies {c['invalid']}, failed {c['failed']}, "
            + (f"{c['tokens']:,} tokens" if c["tokens"] else f"~{c['estimated_tokens']:,} tokens"),
            "",
            text_table(self.systems),
        ]
        if self.audit:
            lines += ["", text_table(self.audit_table())]
        if self.outside is not None:
            lines += ["", self.outside.to_text()]
        if self.ppi is not None:
            lines += ["", f"{self.ppi.metric}: {INTERVALS_CAPTION}", text_table(self.interval_table())]
        if self.agreement is not None:
            labels = self.agreement["labels"]
            lines += [
                "",
                f"agreement on the {labels['n_pairs']} pairs both labelled: Cohen's kappa {labels['kappa']:.3f}, "
                f"quadratic {labels['kappa_quadratic']:.3f}",
            ]
            if self.agreement["rankings"]:
                lines.append(text_table(pd.DataFrame(self.agreement["rankings"]), index=False))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"JudgeResult({self.dataset!r}: {self.counts['pairs']} pooled pairs, {self.counts['calls']} calls)"


@dataclass(frozen=True)
class Study:
    """What ``rankscope judge`` measures beyond the labels.

    ``rejudge`` asks the judge about the pairs humans judged too (their agreement is reported);
    ``audit`` probes it for position, length and keyword-stuffing bias on ``audit_pairs`` pooled
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
    rejudge, audit, audit_pairs = study.rejudge, study.audit, study.audit_pairs
    human_sample, blind, metric = study.human_sample, study.blind, study.metric
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
    every_pair = rejudge or blind or human_sample is not None  # PPI needs the judge's label where humans' is known
    try:
        with using(scheduler) as client, JudgmentCache(judgments) as cache:  # one cluster: the runs, then the calls
            deep = max(depth, OUTSIDE_DEPTH) if study.outside_pool is not None else depth  # the strata's ranks
            runs = {name: produced.run for name, produced in produce_runs(resolved, data, deep, client)}
            deep_runs, runs = runs, {name: run[run["rank"] <= depth] for name, run in runs.items()}
            pool = make_pool(runs, data, depth, visible)
            asked = pool.pairs if every_pair else pool.unjudged
            outcome = judge_pairs(judge_obj, pairs_to_judge(asked, data), cache, client)
            failure = outcome.failure_warning()  # every call failed: JudgeFailedError, before the audit asks more
            labels = pooled_labels(pool, asked, outcome, judge_obj.identity)
            merged = merged_qrels(visible, labels)
            outside = (
                outside_pool(data, deep_runs, merged, judge_obj, cache, study.outside_pool, seed)
                if study.outside_pool is not None
                else None
            )
            probes = (
                audit_judge(judge_obj, pairs_to_judge(pool.pairs, data), cache, n=audit_pairs, seed=seed)
                if audit
                else []
            )
    finally:
        if isinstance(judge, str):  # a judge made here is closed here; one given is the caller's
            judge_obj.close()
    intervals, sample_qrels, population = None, None, None
    if human_sample is not None:  # the sampling frame: the judged queries
        population = tuple(sorted(pd.unique(data.qrels["query_id"])))
        sample_qrels = data.qrels[data.qrels["query_id"].isin(sample)]
        judged_labels = Judgments(None, merged, labels, sample_qrels, population)
        intervals = judged_labels.intervals(
            runs, metric, baseline=next(iter(runs)), truth_qrels=data.qrels if blind else None
        )
    agreement = judge_agreement(data.qrels, judge_only_qrels(labels), runs, metric) if every_pair else None
    result = JudgeResult(
        dataset=data.name,
        judge=judge_obj.identity,
        depth=depth,
        rejudge=rejudge,
        counts={
            "pairs": len(pool.pairs),
            "human_pairs": int(pool.pairs["human"].sum()),
            "unjudged_pairs": len(pool.unjudged),
            "not_shown": pool.missing_text,
            "distinct_asked": outcome.distinct,
            "calls": outcome.calls,
            "cache_hits": outcome.cache_hits,
            "invalid": outcome.invalid,
            "failed": outcome.failed,
            "estimated_tokens": outcome.estimated_tokens,
            "tokens": outcome.tokens,
        },
        systems=system_shares(runs, labels, min(SHARE_DEPTH, depth)),
        labels=labels,
        qrels=merged,
        warnings=((failure,) if failure else ())
        + circular_warnings(resolved, judge_obj.identity)
        + bias_warnings(probes)
        + (intervals.warnings if intervals is not None else ()),
        audit=tuple(probes),
        ppi=intervals,
        agreement=agreement,
        human_sample=sample_qrels,
        population=population,
        outside=outside,
        provenance=provenance.record(
            "judge",
            data,
            descriptions(resolved),
            judge=str(judge_obj.identity),
            judge_id=judge_obj.identity.key,
            prompt_hash=judge_obj.identity.prompt_hash,
            depth=depth,
            rejudge=rejudge,
            audit=audit,
            seed=seed,
            human_sample=human_sample,
            blind=blind,
            metric=metric,
            sample=" ".join(sample),
            outside_pool=study.outside_pool,
        ),
        seconds=outcome.seconds,
    )
    return finish(result, out_path, figures)


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


def interval_table(means: pd.DataFrame) -> pd.DataFrame:
    """One row per system: truth (if known), then per method the estimate, the interval and its coverage."""
    table = pd.DataFrame(index=pd.Index(means["system"], name="system"))
    if "truth" in means:
        table["truth"] = means["truth"].to_numpy()
    for method in METHODS:
        table[f"{method}"] = means[f"{method}_estimate"].to_numpy()
        table[f"{method} 95% CI"] = [
            f"[{low:.4f}, {high:.4f}]" for low, high in zip(means[f"{method}_low"], means[f"{method}_high"])
        ]
        if f"{method}_covered" in means:
            table[f"{method} covered"] = means[f"{method}_covered"].to_numpy()
    return table


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


def circular_warnings(systems: Mapping[str, Any], identity: JudgeIdentity) -> tuple[str, ...]:
    """A warning for each system whose name or description names the judge's model (circular evaluation)."""
    model = identity.model.strip().lower()
    if identity.kind in ("qrels", "callable") or len(model) < 3:
        return ()
    return tuple(
        f"system {name!r} names the judge's model {identity.model!r}: a model judging its own output "
        "favours it (circular evaluation)"
        for name, system in systems.items()
        if model in f"{name} {system.description}".lower()
    )


def bias_warnings(probes: Sequence[ProbeResult]) -> tuple[str, ...]:
    """A warning for each flagged audit probe."""
    return tuple(
        f"the judge shows {r.probe.replace('_', ' ')} bias: grades move by {r.mean_shift:+.2f} on average over "
        f"{r.pairs} perturbed pairs (sign test p = {r.p_value:.2g})"
        for r in probes
        if r.flagged
    )
