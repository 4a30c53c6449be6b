"""``collection export``: the collection's labels as qrels every workflow reads, and what they are made of.

Written into DIR (each file atomically):

- ``qrels/test.tsv`` (BEIR) and ``qrels.txt`` (TREC): the merged qrels, so ``compare --dataset DIR``
  and ``evaluate DIR/qrels.txt RUN`` work; a pair people labelled has their grade, else a judge's;
- ``qrels/human.tsv`` and ``qrels/judge.tsv``: people's and judges' labels alone, as BEIR splits
  (``--split human``), each written when it has labels;
- ``judgments.tsv``: every merged pair with its ``source`` (``human:alice``, ``human:alice+bob``,
  ``openai:MODEL``), how many people labelled it, and its ``inclusion_probability`` in the sample
  (empty for a pair outside it), so Horvitz-Thompson estimates can be made from the file alone;
- ``collection.json``: provenance: the documents' files and hashes, the chunking, how the questions
  were made, the pool's systems and depth, the sample's budget, seed and strata, the labels by
  source, the annotators with their first and last label times, and agreement (Cohen's kappa)
  between each two annotators and between people and judges on the pairs both labelled.

When several people labelled a pair its human grade is the low median of their grades (of an even
number, the lower of the two middle ones: two people, the lower grade); when several judges did, the first judge by name gives it.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from rankscope.core.errors import RankscopeError
from rankscope.core.version import __version__
from rankscope.corpora.beir import write_beir_qrels
from rankscope.corpora.jsonl import read_jsonl
from rankscope.corpora.trec import write_trec_qrels
from rankscope.reporting.report import to_markdown, write_text
from rankscope.workflows.collection.labels import all_labels, is_human
from rankscope.workflows.collection.layout import (
    COLLECTION,
    INGEST,
    POOL_STATE,
    QUERIES,
    REPORT,
    SAMPLE_STATE,
    CollectionError,
    read_state,
    require_collection,
    write_state,
    write_tsv,
)
from rankscope.workflows.collection.makeup import (
    NOT_MEASURED,
    judge_agreement,
    left_out,
    pairs_in,
    report,
    sample_estimates,
)
from rankscope.workflows.collection.pooling import read_pool
from rankscope.workflows.collection.sample import read_sample, stratify

JUDGMENT_COLUMNS = ("query_id", "doc_id", "relevance", "source", "people", "inclusion_probability")


@dataclass(frozen=True)
class ExportResult:
    """The merged judgments and the provenance written."""

    folder: Path
    judgments: pd.DataFrame
    provenance: dict[str, Any]

    def to_text(self) -> str:
        counts, p = self.provenance["labels"], self.provenance
        total = sum(counts.values())
        lines = [
            f"{self.folder}: {len(self.judgments)} judged pairs over {self.judgments['query_id'].nunique()} of "
            f"{p['queries']['count']} questions; labels: "
            + ", ".join(f"{n} {source} ({n / total:.0%})" for source, n in counts.items()),
            f"  qrels: {self.folder / 'qrels' / 'test.tsv'} and {self.folder / 'qrels.txt'}; report: "
            f"{self.folder / REPORT}; now: rankscope compare --dataset {self.folder}",
        ]
        for row in p["agreement"]:
            lines.append(f"  agreement {row['between']}: kappa {_kappa(row['kappa'])} on {row['pairs']} pairs")
            lines += [
                f"    best rank {band['band']}: kappa {_kappa(band['kappa'])} on {band['pairs']} pairs"
                for band in row.get("bands", [])
            ]
        lines.append(f"  questions left out: {len(p['left_out'])}")
        lines += [f"    {query_id}: {why}" for query_id, why in p["left_out"].items()]
        for row in p["estimates"]:
            estimate = (
                f"; the sample's estimate {row['sample_estimate']:.4f} [{row['low']:.4f}, {row['high']:.4f}]"
                if row["sample_estimate"] is not None
                else ""
            )
            lines.append(f"  {row['system']}: {row['metric']} {row['mean']:.4f} under the merged labels{estimate}")
        lines += [f"warning: {warning}" for warning in p["warnings"]]
        return "\n".join(lines)


def _kappa(value: float | None) -> str:
    return "undefined (one grade only)" if value is None else f"{value:.3f}"


def export_collection(folder: str | Path) -> ExportResult:
    """Write the collection's qrels, judgments table and provenance (see the module doc)."""
    folder = require_collection(Path(folder))
    labels = all_labels(folder)
    if labels.empty:
        raise CollectionError(f"{folder}: no labels yet; label the sample: rankscope label {folder}")
    human, judge = labels[is_human(labels["source"])], labels[~is_human(labels["source"])]
    people = _people_grades(human)
    judged = judge.sort_values(["source", "query_id", "doc_id"]).drop_duplicates(["query_id", "doc_id"])
    judged = judged.assign(people=0)[["query_id", "doc_id", "relevance", "source", "people"]]
    merged = pd.concat([people, judged[~pairs_in(judged, people)]], ignore_index=True)
    merged = merged.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    merged["inclusion_probability"] = _probabilities(folder, merged)
    qrels = merged[["query_id", "doc_id", "relevance"]]
    (folder / "qrels").mkdir(exist_ok=True)
    write_beir_qrels(qrels, folder / "qrels" / "test.tsv")
    write_trec_qrels(qrels, folder / "qrels.txt")
    for split, part in (("human", people), ("judge", judged)):
        if len(part):
            write_beir_qrels(part, folder / "qrels" / f"{split}.tsv")
    write_tsv(merged[list(JUDGMENT_COLUMNS)], folder / "judgments.tsv")
    provenance = _provenance(folder, labels, human, judged, merged)
    write_state(folder / COLLECTION, provenance)
    write_text(folder / REPORT, to_markdown(report(str(folder), provenance)))
    return ExportResult(folder, merged, provenance)


def _people_grades(human: pd.DataFrame) -> pd.DataFrame:
    """One row per pair people labelled: the low median of their grades, ``human:a+b`` as the source."""
    rows = []
    for (query_id, doc_id), group in human.groupby(["query_id", "doc_id"], sort=True):
        grades = group["relevance"].tolist()
        names = "+".join(sorted(source.split(":", 1)[1] for source in group["source"]))
        rows.append((query_id, doc_id, int(statistics.median_low(grades)), f"human:{names}", len(grades)))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "source", "people"]).astype(
        {"relevance": "int64"}
    )


def _probabilities(folder: Path, merged: pd.DataFrame) -> list[float | None]:
    """Each pair's inclusion probability in the sample, None outside it (or without a sample)."""
    if not (folder / SAMPLE_STATE).is_file():
        return [None] * len(merged)
    sample, _ = read_sample(folder)
    probability = dict(zip(zip(sample["query_id"], sample["doc_id"]), sample["inclusion_probability"]))
    return [probability.get(pair) for pair in zip(merged["query_id"], merged["doc_id"])]


def _provenance(
    folder: Path, labels: pd.DataFrame, human: pd.DataFrame, judged: pd.DataFrame, merged: pd.DataFrame
) -> dict[str, Any]:
    ingest = read_state(folder / INGEST)
    ranks, pool = read_pool(folder) if (folder / POOL_STATE).is_file() else (None, None)
    sample = read_sample(folder)[0] if (folder / SAMPLE_STATE).is_file() else None
    people = _people_grades(human)
    bands = stratify(ranks, list(pool["systems"])) if ranks is not None and pool is not None else None
    with_judge = judge_agreement(people, judged, bands) if len(judged) else None
    warnings = [NOT_MEASURED] if len(judged) and with_judge is None else []
    estimates: list[dict[str, Any]] = []
    if ranks is not None and pool is not None:
        estimates, said = sample_estimates(ranks, pool["depth"], merged, people, judged, sample)
        warnings += said
    queries = [row for _, row in read_jsonl(folder / QUERIES)]
    made: dict[str, int] = {}
    for row in queries:
        origin = row.get("origin", {})
        how = f"{origin.get('made', 'given')}:{origin.get('file', '')}"
        made[how] = made.get(how, 0) + 1
    times: dict[str, list[str]] = {}
    for source, raw in zip(human["source"], human["raw"]):
        times.setdefault(source, []).append(json.loads(raw).get("at", ""))
    return {
        "made": datetime.now(UTC).isoformat(timespec="seconds"),
        "rankscope": __version__,
        "documents": {"files": {p: f["sha256"] for p, f in ingest["files"].items()}, "chunking": ingest["chunking"]},
        "queries": {"count": len(queries), "made": made},
        "pool": pool,
        "sample": read_state(folder / SAMPLE_STATE) if (folder / SAMPLE_STATE).is_file() else None,
        "labels": {str(k): int(v) for k, v in labels.groupby("source").size().items()},
        "annotators": {
            source: {"labels": len(at), "first": min(at), "last": max(at)} for source, at in sorted(times.items())
        },
        "agreement": [*_agreements(human), *([with_judge] if with_judge else [])],
        "left_out": left_out([row["_id"] for row in queries], merged, ranks),
        "estimates": estimates,
        "warnings": warnings,
    }


def _agreements(human: pd.DataFrame) -> Iterable[dict[str, Any]]:
    """Cohen's kappa between each two people where both labelled (people and judges: :func:`judge_agreement`)."""
    from rankscope.evaluation.agreement import label_agreement

    groups = {source: part[["query_id", "doc_id", "relevance"]] for source, part in human.groupby("source")}
    for first, second in combinations(sorted(groups), 2):
        try:
            agreement = label_agreement(groups[first], groups[second])
        except RankscopeError:  # no pair both labelled: nothing to report
            continue
        kappa = agreement.kappa
        yield {
            "between": f"{first} and {second}",
            "pairs": agreement.n_pairs,
            "kappa": None if math.isnan(kappa) else kappa,
        }
