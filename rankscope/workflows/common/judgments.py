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
from typing import TYPE_CHECKING

import pandas as pd

from rankscope.core.errors import FormatError, RankscopeError, duplicate_message
from rankscope.corpora.label_sources import LabelSources, count_kinds

if TYPE_CHECKING:
    from rankscope.evaluation.ppi import PPIResult

QRELS = "qrels.txt"
LABELS = "labels.jsonl"
HUMAN_SAMPLE = "human_sample.txt"
POPULATION = "population.txt"
SOURCES = ("human", "judge")
STATUSES = ("ok", "invalid", "failed")
LABEL_COLUMNS = ["query_id", "doc_id", "label", "source", "status", "judge_id", "prompt_hash"]
SHARE_DEPTH = 10


@dataclass(frozen=True)
class Judgments:
    """The merged qrels, every pooled label with its source and status, the human sample's qrels (or
    None) and the queries the sample was drawn from (None: every query labels.jsonl names).

    ``folder`` is where they were read from (None: handed over by the judge workflow in memory).
    """

    folder: Path | None
    qrels: pd.DataFrame
    labels: pd.DataFrame
    human_sample: pd.DataFrame | None
    population: tuple[str, ...] | None = None
    warnings: tuple[str, ...] = ()
    """What the judge workflow warned of while labelling (failed calls and why, a circular judge), for
    ``compare --judge`` to print beside its tables; none for a folder read back."""

    @property
    def where(self) -> str:
        """What error messages name: the labels file, or the judge's labels in memory."""
        return "the judge's labels" if self.folder is None else str(self.folder / LABELS)

    def sources(self) -> LabelSources:
        """Who made each merged judgment: the judge where its ok label filled a hole, people elsewhere (the
        judge workflow takes the dataset's own qrels as people's labels)."""
        labels = self.labels
        by_judge = labels[(labels["source"] == "judge") & (labels["status"] == "ok")]
        source_of = dict.fromkeys(zip(by_judge["query_id"], by_judge["doc_id"]), "judge")
        by_people = labels[labels["source"] == "human"]
        source_of.update(dict.fromkeys(zip(by_people["query_id"], by_people["doc_id"]), "human"))
        pairs = list(zip(self.qrels["query_id"], self.qrels["doc_id"]))
        source_of.update({pair: "human" for pair in pairs if pair not in source_of})
        origin = "the judge workflow's merged qrels" if self.folder is None else str(self.folder / QRELS)
        return LabelSources(origin, count_kinds(pairs, source_of), self.where)

    def queries(self) -> list[str]:
        """The population the intervals' mean is over: the sampling frame, or every labelled query and the sample's."""
        if self.population is not None:
            return list(self.population)
        sampled = [] if self.human_sample is None else list(self.human_sample["query_id"])
        return sorted(set(self.labels["query_id"]) | set(sampled))

    def ppi_qrels(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(human qrels of the sample, the judge's own ok labels of every pooled pair of the population)``
        for :func:`rankscope.evaluation.ppi.ppi_evaluate`.

        The estimand is the mean over the population's queries of the metric under the humans' labels
        (as the sample's human qrels give them). PPI corrects a judging process measured the same way
        on every query, the sampled ones included, so the process is the judge's labels alone, never
        mixed with human labels (which a non-blind dataset has outside the sample too, and which
        would make the correction 0 on the sample): the judge must have labelled every pooled pair,
        as ``rankscope judge --human-sample`` asks it to; a folder where it filled only the holes is
        refused.
        """
        if self.human_sample is None:
            raise RankscopeError(f"{self.folder}: no {HUMAN_SAMPLE}, so no human sample to correct the judge with")
        labels = self.labels
        by_judge = labels[labels["source"] == "judge"]
        asked = pd.MultiIndex.from_frame(by_judge[["query_id", "doc_id"]])
        unasked = labels[~pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]]).isin(asked)]
        if len(unasked):
            first = unasked.iloc[0]
            raise RankscopeError(
                f"{self.where}: the judge did not label pooled pair ({first['query_id']}, {first['doc_id']}) "
                f"({unasked[['query_id', 'doc_id']].drop_duplicates().shape[0]} such pairs): intervals need the "
                "judge's label on every pooled pair, human-judged ones too (rankscope judge --human-sample asks "
                "them all)"
            )
        judged = judge_only_qrels(labels)
        return self.human_sample, judged[judged["query_id"].isin(set(self.queries()))].reset_index(drop=True)

    def intervals(
        self,
        runs: Mapping[str, pd.DataFrame],
        metric: str,
        baseline: str | None = None,
        truth_qrels: pd.DataFrame | None = None,
    ) -> PPIResult:
        """Naive, PPI and PPI++ intervals of each run's mean ``metric`` over :meth:`queries` (and of its
        difference with ``baseline``), from :meth:`ppi_qrels`; ``truth_qrels`` adds each one's coverage."""
        from rankscope.evaluation.ppi import ppi_evaluate

        human, judged = self.ppi_qrels()
        return ppi_evaluate(
            human, judged, runs, metric, baseline=baseline, queries=self.queries(), truth_qrels=truth_qrels
        )


def judge_only_qrels(labels: pd.DataFrame) -> pd.DataFrame:
    """The judge's ``ok`` labels of every pair it was asked about, as qrels (the judging process alone)."""
    rows = labels[(labels["source"] == "judge") & (labels["status"] == "ok")]
    return pd.DataFrame(
        {"query_id": rows["query_id"], "doc_id": rows["doc_id"], "relevance": rows["label"].astype("int64")}
    ).reset_index(drop=True)


def read_judgments(folder: str | Path) -> Judgments:
    """Read a judgment folder; a missing file or a bad line is one error naming the file and line."""
    from rankscope.corpora.trec import read_trec_qrels

    path = Path(folder)
    if not path.is_dir():
        raise RankscopeError(f"--judgments {path}: not a folder (rankscope judge --out writes one)")
    for name in (QRELS, LABELS):
        if not (path / name).is_file():
            raise RankscopeError(f"--judgments {path}: no {name} (rankscope judge --out writes it)")
    sample, population = path / HUMAN_SAMPLE, path / POPULATION
    return Judgments(
        folder=path,
        qrels=read_trec_qrels(path / QRELS),
        labels=read_labels(path / LABELS),
        human_sample=read_trec_qrels(sample) if sample.is_file() else None,
        population=read_population(population) if population.is_file() else None,
    )


def read_population(path: Path) -> tuple[str, ...]:
    """``population.txt``: one query id per line, each once (a repeated or blank line is refused, naming it)."""
    from rankscope.core.fileio import read_lines

    seen: dict[str, int] = {}
    for number, line in enumerate(read_lines(path), 1):
        query_id = line.strip()
        if not query_id or len(query_id.split()) > 1:
            raise FormatError(path, number, f"expected one query id, got {line.rstrip()!r}")
        if query_id in seen:
            raise FormatError(path, number, duplicate_message("query", query_id, seen[query_id]))
        seen[query_id] = number
    return tuple(seen)


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
