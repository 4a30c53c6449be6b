"""A collection registered in ir_datasets over local files, by its own extension mechanism
(``ir_datasets.registry.register`` with its BEIR reader classes): CISI's judged queries written as a BEIR
folder, for the tests of ``irds:`` (tests/corpora/test_irds.py, tests/retrieval/test_index_irds.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rankscope.corpora.beir import write_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.load import load_dataset, load_folder


def judged(dataset: Dataset) -> Dataset:
    """The collection with its judged queries only: a BEIR split holds those (read_beir's rule)."""
    kept = dataset.queries[dataset.queries["query_id"].isin(dataset.qrels["query_id"])]
    return dataclasses.replace(dataset, queries=kept.reset_index(drop=True), warnings=(), notes=())


def register(name: str, folder: Path, corpus_url: str | None = None) -> None:
    """The BEIR folder ``folder`` registered in ir_datasets as ``name``; ``corpus_url``: its corpus downloaded
    from there instead, by ir_datasets' own downloader, into its cache (``IR_DATASETS_HOME``)."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset as IrdsDataset
    from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc
    from ir_datasets.formats import GenericQuery
    from ir_datasets.util import Download, LocalDownload, RequestsDownload, home_path

    corpus = LocalDownload(folder / "corpus.jsonl")
    if corpus_url is not None:
        corpus = Download([RequestsDownload(corpus_url)], cache_path=str(home_path() / name / "corpus.jsonl"))
    ir_datasets.registry.register(
        name,
        IrdsDataset(
            BeirDocs(name, corpus, BeirTitleDoc),
            BeirQueries(name, LocalDownload(folder / "queries.jsonl"), GenericQuery),
            BeirQrels(LocalDownload(folder / "qrels" / "test.tsv"), {}),
        ),
    )


def cisi_in_irds(data_dir: Path, folder: Path) -> tuple[str, Dataset]:
    """CISI registered as ``rankscope-test/<folder's name>`` (its files under ``folder``), and its BEIR folder
    loaded by rankscope. Set ``IR_DATASETS_HOME`` under ``folder`` first: ir_datasets' document store goes there."""
    write_beir(judged(load_dataset(data_dir / "cisi")), folder / "beir")
    name = f"rankscope-test/{folder.name}"
    register(name, folder / "beir")
    return name, load_folder(folder / "beir", name="cisi")
