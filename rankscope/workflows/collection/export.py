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
from rankscope.workflows.collection.labels import all_labels, is_human
from rankscope.workflows.collection.layout import (
    COLLECTION,
    INGEST,
    POOL_STATE,
    QUERIES,
    SAMPLE_STATE,
    CollectionError,
    read_state,
    require_collection,
    write_state,
    write_tsv,
)

JUDGMENT_COLUMNS = ("query_id", "doc_id", "relevance", "source", "people", "inclusion_probability")


@dataclass(frozen=True)
class ExportResult:
    """The merged judgments and the provenance written."""

    folder: Path
    judgments: pd.DataFrame
    provenance: dict[str, Any]

    def to_text(self) -> str:
        counts = self.provenance["labels"]
        human = sum(n for source, n in counts.items() if source.startswith("human:"))
        lines = [
            f"{self.folder}: {len(self.judgments)} judged pairs over "
            f"{self.judgments['query_id'].nunique()} questions ({human} labels by people, "
            f"{sum(counts.values()) - human} by judges)",
            f"  qrels: {self.folder / 'qrels' / 'test.tsv'} and {self.folder / 'qrels.txt'}; "
            f"now: rankscope compare --dataset {self.folder}",
        ]
        lines += [
            f"  agreement {row['between']}: kappa {row['kappa']:.3f} on {row['pairs']} pairs"
            for row in self.provenance["agreement"]
        ]
        return "\n".join(lines)


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
    merged = pd.concat([people, judged[~_pairs_in(judged, people)]], ignore_index=True)
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
    provenance = _provenance(folder, labels, human, judged)
    write_state(folder / COLLECTION, provenance)
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


def _pairs_in(frame: pd.DataFrame, other: pd.DataFrame) -> pd.Series:
    keys = set(zip(other["query_id"], other["doc_id"]))
    return pd.Series([pair in keys for pair in zip(frame["query_id"], frame["doc_id"])], index=frame.index, dtype=bool)


def _probabilities(folder: Path, merged: pd.DataFrame) -> list[float | None]:
    """Each pair's inclusion probability in the sample, None outside it (or without a sample)."""
    if not (folder / SAMPLE_STATE).is_file():
        return [None] * len(merged)
    from rankscope.workflows.collection.sample import read_sample

    sample, _ = read_sample(folder)
    probability = dict(zip(zip(sample["query_id"], sample["doc_id"]), sample["inclusion_probability"]))
    return [probability.get(pair) for pair in zip(merged["query_id"], merged["doc_id"])]


def _provenance(folder: Path, labels: pd.DataFrame, human: pd.DataFrame, judged: pd.DataFrame) -> dict[str, Any]:
    ingest = read_state(folder / INGEST)
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
        "pool": read_state(folder / POOL_STATE) if (folder / POOL_STATE).is_file() else None,
        "sample": read_state(folder / SAMPLE_STATE) if (folder / SAMPLE_STATE).is_file() else None,
        "labels": {str(k): int(v) for k, v in labels.groupby("source").size().items()},
        "annotators": {
            source: {"labels": len(at), "first": min(at), "last": max(at)} for source, at in sorted(times.items())
        },
        "agreement": list(_agreements(human, judged)),
    }


def _agreements(human: pd.DataFrame, judged: pd.DataFrame) -> Iterable[dict[str, Any]]:
    """Cohen's kappa between each two people, and between people (merged) and the judges, where both labelled."""
    from rankscope.evaluation.agreement import label_agreement

    groups = {source: part[["query_id", "doc_id", "relevance"]] for source, part in human.groupby("source")}
    pairs = [(a, groups[a], b, groups[b]) for a, b in combinations(sorted(groups), 2)]
    if len(judged) and len(human):
        pairs.append(("people", _people_grades(human)[["query_id", "doc_id", "relevance"]], "judges", judged))
    for first, one, second, other in pairs:
        try:
            agreement = label_agreement(one, other[["query_id", "doc_id", "relevance"]])
        except RankscopeError:  # no pair both labelled: nothing to report
            continue
        kappa = agreement.kappa
        yield {
            "between": f"{first} and {second}",
            "pairs": int(agreement.confusion.to_numpy().sum()),
            "kappa": None if math.isnan(kappa) else kappa,
        }
