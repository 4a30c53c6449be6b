"""``irds:NAME`` (corpora/irds.py): a dataset registered in ir_datasets over local files, by its own extension
mechanism (``ir_datasets.registry.register`` with its BEIR reader classes), loads equal to the BEIR folder
it reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import DatasetNotFoundError, SchemaError
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.load import load_dataset
from tests.corpora.irds_local import cisi_in_irds as registered
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
