"""docs/frameworks.md's examples, run in order as one script on CISI: what the page shows is what works."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import rankscope as rs
from tests.needs import needs

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "frameworks.md"

pytestmark = needs("langchain_core", "langchain_community", "llama_index.core", "haystack", "pyterrier", "ir_datasets")


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.slow
def test_every_example_of_the_frameworks_page_runs(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path))  # the page sets its own; restored after the test
    monkeypatch.setenv("RANKSCOPE_QUIET", "1")
    namespace: dict[str, object] = {"__name__": "frameworks_page"}
    blocks = examples()
    assert len(blocks) == 10
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 - the page's own examples
    printed = capsys.readouterr().out
    assert "system 'lc-bm25': query '1', result 1 has no 'id'" in printed
    assert "by maxp" in printed  # LlamaIndex's chunks merged per document
    assert "document_store.bm25_parameters.k1=1.8" in printed and "as given" in printed
    assert namespace["haystack_store"].bm25_parameters == {}  # put back
    assert "own chunks / llamaindex" in printed and "own chunks / llamaindex: its own chunks:" in printed
    data, mine, table = namespace["data"], namespace["mine"], namespace["table"]
    assert (len(mine.corpus), len(mine.queries), len(mine.qrels)) == (
        len(data.corpus),
        len(data.queries),
        len(data.qrels),
    )
    in_memory = rs.make_retriever("bm25").index(mine.corpus).search(mine.queries, k=10)  # irds: streamed = in memory
    pd.testing.assert_frame_equal(namespace["streamed"].search(mine.queries, k=10), in_memory)
    assert table.set_index("name").loc["bm25", "map"] == pytest.approx(0.2233434, abs=1e-7)
    measured, through_rankscope = namespace["measured"], namespace["through_rankscope"]  # the ir_measures provider
    expected = rs.evaluate(data.qrels, namespace["run"], ["map", "ndcg@10", "precision@5", "infap"]).mean
    assert list(measured.values()) == pytest.approx(list(expected.values()), abs=1e-12)
    assert through_rankscope.set_index("name").loc["bm25", "AP"] == pytest.approx(0.2233432, abs=1e-7)
