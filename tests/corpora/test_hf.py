"""``hf:OWNER/NAME`` (corpora/hf.py): a BEIR-layout dataset repository, its files written by ``datasets`` in a
temporary folder (as a clone of the Hub repository holds them), loads equal to the BEIR folder of the same
collection; offline (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import DatasetNotFoundError
from rankscope.corpora.beir import write_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.load import load_dataset, load_folder
from tests.needs import needs

pytestmark = needs("datasets")

CARD = """---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: corpus.jsonl
- config_name: queries
  data_files:
  - split: queries
    path: queries.jsonl
{qrels}---
"""
QRELS_CONFIG = """- config_name: default
  data_files:
  - split: test
    path: qrels/test.jsonl
  - split: train
    path: qrels/train.jsonl
"""


def _made(frame: pd.DataFrame) -> object:
    """A ``datasets.Dataset`` of the frame's columns (as lists: pandas' own string dtype stays out of it)."""
    import datasets

    return datasets.Dataset.from_dict({column: frame[column].tolist() for column in frame.columns})


def _write_repository(dataset: Dataset, folder: Path, companion: bool) -> None:
    """The collection as a Hub repository of BEIR's layout, each file written by ``datasets``; the
    judgments in a config ``default`` (MTEB's copies) or in ``<folder>-qrels`` (BEIR's own)."""
    corpus = dataset.corpus.rename(columns={"doc_id": "_id"})
    queries = dataset.queries.rename(columns={"query_id": "_id"})
    qrels = dataset.qrels.rename(columns={"query_id": "query-id", "doc_id": "corpus-id", "relevance": "score"})
    test, train = qrels.iloc[: len(qrels) // 2 * 2], qrels.iloc[:2]  # a second split, as the Hub's have
    judged_folder = folder.with_name(folder.name + "-qrels") if companion else folder
    (judged_folder / "qrels").mkdir(parents=True, exist_ok=True)
    _made(corpus).to_json(folder / "corpus.jsonl")
    _made(queries).to_json(folder / "queries.jsonl")
    for split, frame in (("test", test), ("train", train)):
        _made(frame).to_json(judged_folder / "qrels" / f"{split}.jsonl")
    (folder / "README.md").write_text(CARD.format(qrels="" if companion else QRELS_CONFIG), encoding="utf-8")
    if companion:
        (judged_folder / "README.md").write_text(f"---\nconfigs:\n{QRELS_CONFIG}---\n", encoding="utf-8")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> tuple[Path, Dataset]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.chdir(tmp_path)
    cisi = load_dataset(data_dir / "cisi")
    judged = cisi.queries[cisi.queries["query_id"].isin(cisi.qrels["query_id"])]
    cisi = dataclasses.replace(cisi, queries=judged.reset_index(drop=True), warnings=(), notes=())
    write_beir(cisi, tmp_path / "beir")
    return tmp_path, load_folder(tmp_path / "beir", name="cisi")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns[:2])).reset_index(drop=True)


@pytest.mark.parametrize("companion", [False, True], ids=["qrels-config", "qrels-repository"])
def test_a_hub_repository_in_a_folder_equals_its_beir_folder(hub: tuple[Path, Dataset], companion: bool) -> None:
    root, beir = hub
    (root / "owner" / "cisi").mkdir(parents=True)
    _write_repository(beir, root / "owner" / "cisi", companion)
    loaded = load_dataset("hf:owner/cisi")
    assert loaded.name == "hf:owner/cisi" and loaded.split == "test"
    assert (len(loaded.corpus), len(loaded.queries), len(loaded.qrels)) == (1460, 76, 3114)
    pd.testing.assert_frame_equal(loaded.corpus, beir.corpus)
    pd.testing.assert_frame_equal(loaded.queries, beir.queries)
    pd.testing.assert_frame_equal(_sorted(loaded.qrels), _sorted(beir.qrels))
    train = load_dataset("hf:owner/cisi", split="train")
    assert len(train.qrels) == 2 and len(train.queries) == train.qrels["query_id"].nunique()
    with pytest.raises(DatasetNotFoundError, match=r"have no split 'dev'; splits: test, train"):
        load_dataset("hf:owner/cisi", split="dev")


def test_a_repository_neither_local_nor_cached_is_one_line(hub: tuple[Path, Dataset]) -> None:
    with pytest.raises(DatasetNotFoundError) as excinfo:
        load_dataset("hf:nobody/nothing")
    assert str(excinfo.value).startswith("hf:nobody/nothing: not found as a local folder nor in the Hugging Face cache")
    assert "\n" not in str(excinfo.value)


def test_rankscope_offline_reads_the_local_folder_and_tries_no_connection(
    hub: tuple[Path, Dataset], monkeypatch: pytest.MonkeyPatch
) -> None:
    """RANKSCOPE_OFFLINE alone (no HF_HUB_OFFLINE when the libraries were imported): before, the Hub was
    asked five times with back-off ("Retrying in 8s [Retry 5/5]") and the line did not name the variable."""
    import socket

    from huggingface_hub import constants

    root, beir = hub
    (root / "owner" / "cisi").mkdir(parents=True)
    _write_repository(beir, root / "owner" / "cisi", companion=False)
    import datasets

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # as imported without HF_HUB_OFFLINE
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    tried: list[object] = []
    connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: tried.append(address) or connect(self, address))
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: tried.append(args) or [])
    assert len(load_dataset("hf:owner/cisi").corpus) == 1460  # a local folder: read
    with pytest.raises(DatasetNotFoundError) as excinfo:
        load_dataset("hf:nobody/nothing")
    message = str(excinfo.value)
    assert message.startswith(
        "hf:nobody/nothing: not found as a local folder nor in the Hugging Face cache, and downloads are off "
        "(RANKSCOPE_OFFLINE is set)"
    )
    assert tried == []  # no connection tried
    assert constants.HF_HUB_OFFLINE is False and datasets.config.HF_HUB_OFFLINE is False  # restored after
