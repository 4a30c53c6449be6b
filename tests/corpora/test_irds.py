"""``irds:NAME`` (corpora/irds.py): a dataset registered in ir_datasets over local files, by its own extension
mechanism (``ir_datasets.registry.register`` with its BEIR reader classes), loads equal to the BEIR folder
it reads."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import DatasetNotFoundError, SchemaError
from rankscope.corpora.beir import write_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.irds import iter_irds_documents
from rankscope.corpora.load import load_dataset
from tests.corpora.http_files import Served, serving
from tests.corpora.irds_local import cisi_in_irds as registered
from tests.corpora.irds_local import judged, register
from tests.needs import needs

pytestmark = needs("ir_datasets")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns[:2])).reset_index(drop=True)


@pytest.fixture
def cisi_in_irds(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Dataset]:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))  # its document store goes there
    return registered(data_dir, tmp_path)


def test_a_registered_ir_datasets_collection_equals_its_beir_folder(cisi_in_irds: tuple[str, Dataset]) -> None:
    name, beir = cisi_in_irds
    loaded = load_dataset(f"irds:{name}")
    assert loaded.name == f"irds:{name}"
    assert (len(loaded.corpus), len(loaded.queries), len(loaded.qrels)) == (1460, 76, 3114)
    pd.testing.assert_frame_equal(loaded.corpus, beir.corpus)
    pd.testing.assert_frame_equal(loaded.queries, beir.queries)
    pd.testing.assert_frame_equal(_sorted(loaded.qrels), _sorted(beir.qrels))
    assert (loaded.corpus["title"] != "").sum() > 1000  # titles kept apart from the text, as BEIR's reader does


def test_fields_are_chosen_by_name_and_a_wrong_one_is_one_line(cisi_in_irds: tuple[str, Dataset]) -> None:
    name, beir = cisi_in_irds
    swapped = load_dataset(f"irds:{name}", columns={"corpus": {"text": "title", "title": "text"}})
    assert swapped.corpus["text"].tolist() == beir.corpus["title"].tolist()
    with pytest.raises(SchemaError) as excinfo:
        load_dataset(f"irds:{name}", columns={"corpus": {"text": "body"}})
    assert str(excinfo.value) == (
        f"irds:{name}: its documents (BeirTitleDoc) have no field 'body'; they have doc_id, text, title"
    )


def test_unknown_names_and_splits_are_one_line_errors() -> None:
    with pytest.raises(DatasetNotFoundError, match=r"^irds:no-such/set: ir_datasets knows no dataset 'no-such/set'"):
        load_dataset("irds:no-such/set")
    with pytest.raises(DatasetNotFoundError, match="names its splits in the dataset name"):
        load_dataset("irds:beir/scifact", split="test")


@pytest.fixture
def downloaded(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Served]]:
    """CISI in ir_datasets with its corpus downloaded by ir_datasets from a real server on 127.0.0.1 (the
    test sets each path's behaviour), an empty ir_datasets cache, downloads allowed."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")
    monkeypatch.delenv("RANKSCOPE_OFFLINE", raising=False)
    write_beir(judged(load_dataset(data_dir / "cisi")), tmp_path / "beir")
    with serving({}) as served:
        name = f"rankscope-test/dl-{tmp_path.name}"
        register(name, tmp_path / "beir", corpus_url=served.url("/corpus.jsonl"))
        served.files["/corpus.jsonl"] = ("whole", (tmp_path / "beir" / "corpus.jsonl").read_bytes())
        yield name, served


def test_offline_an_irds_download_is_refused_at_once_and_the_cache_still_read(
    downloaded: tuple[str, Served], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: ir_datasets downloaded whatever RANKSCOPE_OFFLINE said (with no network: its warnings and a
    RuntimeError traceback)."""
    name, served = downloaded
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    refused = (
        f"irds:{name}: ir_datasets would download its files (not in its cache, {tmp_path / 'home'}), and "
        "downloads are off (RANKSCOPE_OFFLINE is set)"
    )
    with pytest.raises(DatasetNotFoundError) as excinfo:
        load_dataset(f"irds:{name}")
    assert str(excinfo.value) == refused
    with pytest.raises(DatasetNotFoundError) as excinfo:
        list(iter_irds_documents(name))  # what `rankscope index --dataset irds:NAME` streams
    assert str(excinfo.value) == refused
    assert sum(served.asked.values()) == 0  # no connection tried
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "0")
    assert len(load_dataset(f"irds:{name}").corpus) == 1460
    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    assert len(load_dataset(f"irds:{name}").corpus) == 1460  # in its cache now: read offline
    assert served.asked["/corpus.jsonl"] == 1


@pytest.mark.parametrize("behaviour", ["cut", "closed port", "500"])
def test_a_failed_irds_download_is_one_line_naming_the_reason(
    downloaded: tuple[str, Served], behaviour: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ir_datasets' "[WARNING] Download failed" lines, then its exception as a traceback (for the
    500, whose page ir_datasets stores as the file, a JSONDecodeError traceback)."""
    name, served = downloaded
    if behaviour == "closed port":
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        name += "-closed"
        register(name, tmp_path / "beir", corpus_url=f"http://127.0.0.1:{port}/corpus.jsonl")
    else:
        served.files["/corpus.jsonl"] = (behaviour, served.files["/corpus.jsonl"][1])
    with pytest.raises(DatasetNotFoundError) as excinfo:
        load_dataset(f"irds:{name}")
    message = str(excinfo.value)
    assert "\n" not in message and message.endswith(f"; its cache: {tmp_path / 'home'}")
    expected, reason = {
        "cut": ("could not download its files (", "IncompleteRead("),
        "closed port": ("could not download its files (", "[Errno 111] Connection refused"),
        "500": ("failed reading its files (", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
    }[behaviour]
    assert message.startswith(f"irds:{name}: ir_datasets {expected}") and reason in message
    assert "Download failed" not in capsys.readouterr().err


@pytest.mark.parametrize("text", ["irds:", "irds: ", "irds:/", "irds:a\nb", "hf:", "hf://", "hf:\t"])
def test_a_catalogue_prefix_naming_nothing_is_one_line(text: str) -> None:
    """Before: ``hf:`` and ``hf:/`` were an IndexError inside datasets."""
    with pytest.raises(DatasetNotFoundError) as excinfo:
        load_dataset(text)
    assert str(excinfo.value).startswith(f"{text!r} names no dataset: write {text.partition(':')[0]}:")


def test_two_document_streams_closed_in_either_order_leave_ir_datasets_as_it_was(
    cisi_in_irds: tuple[str, Dataset], monkeypatch: pytest.MonkeyPatch
) -> None:
    """rankscope swaps ir_datasets' getters of requests and tqdm while it reads (downloads refused offline, its
    bars where rankscope's show): before, a second stream opened inside the first restored the first's swap
    when it closed last, leaving ir_datasets swapped for good."""
    from ir_datasets import lazy_libs

    monkeypatch.setenv("RANKSCOPE_OFFLINE", "1")
    before = lazy_libs.requests, lazy_libs.tqdm
    name, beir = cisi_in_irds
    first, second = iter_irds_documents(name), iter_irds_documents(name)
    assert next(first)[0] == next(second)[0] == beir.corpus["doc_id"].iat[0]
    assert lazy_libs.requests is not before[0]  # swapped while they read
    assert len(list(first)) == len(list(second)) == len(beir.corpus) - 1
    assert (lazy_libs.requests, lazy_libs.tqdm) == before
