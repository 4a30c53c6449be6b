"""A judgment folder (``rankscope judge --out DIR``) read back to score with: which labels are the judge's.

The folder holds ``qrels.txt`` (the merged qrels: human labels where they exist, the judge's ``ok``
labels for the holes), ``labels.jsonl`` (one line per pooled pair and source: ``query_id, doc_id,
label, source`` human or judge, ``status`` ok, invalid or failed, ``judge_id, prompt_hash``) and,
when humans labelled a random sample of the queries, ``human_sample.txt`` (their labels of those
queries, TREC qrels). Workflows score with the merged qrels, say per system how much of its top 10
only the judge labelled and how many replies there were invalid, and, with a sample, put
prediction-powered intervals (:mod:`rankscope.evaluation.ppi`) beside the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankscope.core.errors import FormatError, RankscopeError, duplicate_message

QRELS = "qrels.txt"
LABELS = "labels.jsonl"
HUMAN_SAMPLE = "human_sample.txt"
SOURCES = ("human", "judge")
STATUSES = ("ok", "invalid", "failed")
LABEL_COLUMNS = ["query_id", "doc_id", "label", "source", "status", "judge_id", "prompt_hash"]
SHARE_DEPTH = 10


@dataclass(frozen=True)
class Judgments:
    """The merged qrels, every pooled label with its source and status, and the human sample's qrels (or None)."""

    folder: Path
    qrels: pd.DataFrame
    labels: pd.DataFrame
    human_sample: pd.DataFrame | None

    def ppi_qrels(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(human qrels of the sample, the judging process's qrels of every query)`` for
        :func:`rankscope.evaluation.ppi.ppi_evaluate`.

        On the sampled queries the judge's own ``ok`` labels replace whatever the merged qrels hold
        there (the humans' labels would make the correction 0): the judge must have labelled those
        queries' pools too. The intervals are valid when the humans labelled only the sample (a
        collection without judgments, or ``judge --blind``).
        """
        if self.human_sample is None:
            raise RankscopeError(f"{self.folder}: no {HUMAN_SAMPLE}, so no human sample to correct the judge with")
        sample = set(self.human_sample["query_id"])
        labels = self.labels
        judged = labels[(labels["source"] == "judge") & (labels["status"] == "ok") & labels["query_id"].isin(sample)]
        missing = sorted(sample - set(judged["query_id"]))
        if missing:
            raise RankscopeError(
                f"{self.folder / LABELS}: the judge labelled no pooled pair of sampled query {missing[0]!r} "
                f"({len(missing)} of {len(sample)} sampled queries); the sample's pools must be judged too"
            )
        rows = judged.assign(relevance=judged["label"].astype("int64"))[["query_id", "doc_id", "relevance"]]
        rest = self.qrels[~self.qrels["query_id"].isin(sample)]
        return self.human_sample, pd.concat([rest, rows], ignore_index=True)


def read_judgments(folder: str | Path) -> Judgments:
    """Read a judgment folder; a missing file or a bad line is one error naming the file and line."""
    from rankscope.corpora.trec import read_trec_qrels

    path = Path(folder)
    if not path.is_dir():
        raise RankscopeError(f"--judgments {path}: not a folder (rankscope judge --out writes one)")
    for name in (QRELS, LABELS):
        if not (path / name).is_file():
            raise RankscopeError(f"--judgments {path}: no {name} (rankscope judge --out writes it)")
    sample = path / HUMAN_SAMPLE
    return Judgments(
        folder=path,
        qrels=read_trec_qrels(path / QRELS),
        labels=read_labels(path / LABELS),
        human_sample=read_trec_qrels(sample) if sample.is_file() else None,
    )


def read_labels(path: Path) -> pd.DataFrame:
    """``labels.jsonl`` as a frame of :data:`LABEL_COLUMNS` (label ``Int64``, missing where the reply gave none)."""
    from rankscope.corpora.jsonl import read_jsonl, string_field

    rows = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, record in read_jsonl(path):
        fields = ("query_id", "doc_id", "source", "status")
        query_id, doc_id, source, status = (string_field(path, number, record, c) for c in fields)
        label = record.get("label")
        if source not in SOURCES:
            raise FormatError(path, number, f"source must be one of {list(SOURCES)}, got {source!r}")
        if status not in STATUSES:
            raise FormatError(path, number, f"status must be one of {list(STATUSES)}, got {status!r}")
        if (label is None) != (status != "ok") or not (label is None or type(label) is int):
            raise FormatError(path, number, f"label must be an integer when status is ok, else null; got {label!r}")
        key = (query_id, doc_id, source)
        if key in seen:
            raise FormatError(path, number, duplicate_message("query, document, source", key, seen[key]))
        seen[key] = number
        extra = (string_field(path, number, record, c, required=False) for c in LABEL_COLUMNS[5:])
        rows.append((query_id, doc_id, label, source, status, *extra))
    return pd.DataFrame(rows, columns=LABEL_COLUMNS).astype({"label": "Int64"})


def system_shares(runs: Mapping[str, pd.DataFrame], labels: pd.DataFrame, k: int = SHARE_DEPTH) -> pd.DataFrame:
    """Per system (index), shares of its top ``k`` rows labelled by humans and by the judge alone, and
    the judge's invalid and failed replies there (counts): how far its numbers rest on the judge."""
    human = labels.loc[labels["source"] == "human", ["query_id", "doc_id"]].assign(human=True)
    by_judge = labels.loc[labels["source"] == "judge", ["query_id", "doc_id", "status"]]
    rows = {}
    for name, run in runs.items():
        top = run.loc[run["rank"] <= k, ["query_id", "doc_id"]]
        top = top.merge(human, how="left", on=["query_id", "doc_id"]).merge(
            by_judge, how="left", on=["query_id", "doc_id"]
        )
        is_human = top["human"].fillna(False).astype(bool)
        n = max(len(top), 1)
        rows[name] = {
            f"human_share@{k}": float(is_human.sum() / n),
            f"judge_share@{k}": float(((top["status"] == "ok") & ~is_human).sum() / n),
            f"invalid@{k}": int((top["status"] == "invalid").sum()),
            f"failed@{k}": int((top["status"] == "failed").sum()),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("system")
