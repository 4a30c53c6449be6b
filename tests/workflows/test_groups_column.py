"""``--groups column:NAME`` on a real collection: CISI written as a BEIR folder whose queries.jsonl carries a
``metadata.topic`` the test chose. compare's and diagnose's groups.csv hold the means pandas computes by
hand over their per-query values, and the two commands test bm25 against tfidf in each group alike (one
test, one correction); a field no query has is one line naming the file, before any system runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora import load_dataset
from rankscope.corpora.beir import write_beir

METRICS = ["ndcg@10", "mrr@10", "recall@10"]


def topic(query_id: str) -> str:
    """A grouping rankscope cannot know: the query id's last digit, in three bands."""
    return ("low", "mid", "high")[min(int(query_id[-1]) // 4, 2)]


@pytest.fixture(scope="module")
def cisi_folder(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("cisi_topics")
    data = load_dataset(data_dir / "cisi")
    write_beir(data, folder)
    lines = [
        json.dumps({"_id": q, "text": t, "metadata": {"topic": topic(q)}})
        for q, t in zip(data.queries["query_id"], data.queries["text"])
    ]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def by_hand(per_query: pd.DataFrame) -> pd.Series:
    """Mean of each system's values per topic and metric: pandas groupby over the per-query table."""
    marked = per_query.assign(group=per_query["query_id"].astype(str).map(topic))
    return marked.groupby(["group", "metric", "retriever"])["value"].mean()


def written(groups_csv: Path) -> pd.Series:
    table = pd.read_csv(groups_csv).drop(columns="n_queries")
    return table.melt(["group", "metric"], var_name="retriever").set_index(["group", "metric", "retriever"])["value"]


@pytest.mark.slow
def test_compare_and_diagnose_group_by_a_column_of_the_queries_file(
    cisi_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--quiet", "--dataset", str(cisi_folder), "--metrics", *METRICS, "--groups", "column:metadata.topic"]
    compared, diagnosed = tmp_path / "compare", tmp_path / "diagnose"
    assert (
        main(["compare", *common, "--retrievers", "bm25", "tfidf", "--baseline", "tfidf", "--out", str(compared)]) == 0
    )
    assert main(["diagnose", *common, "--retriever", "bm25", "--vs", "tfidf", "--out", str(diagnosed)]) == 0
    out = capsys.readouterr().out
    assert "By query group (ndcg@10): bm25 wins against tfidf on " in out.replace("\n", " ")

    per_query = pd.read_csv(compared / "per_query.csv", dtype={"query_id": str})
    expected = by_hand(per_query)
    got = written(compared / "groups.csv")
    pd.testing.assert_series_equal(got.sort_index(), expected.reindex(got.index).sort_index(), check_names=False)
    assert set(got.index.get_level_values("group")) == {"low", "mid", "high"}

    headroom = pd.concat(
        pd.read_csv(diagnosed / f"headroom.{name}.csv", dtype={"query_id": str}).assign(retriever=name)
        for name in ("bm25", "tfidf")
    ).rename(columns={"actual": "value"})
    got = written(diagnosed / "groups.csv")
    pd.testing.assert_series_equal(
        got.sort_index(), by_hand(headroom).reindex(got.index).sort_index(), check_names=False
    )
    pd.testing.assert_series_equal(got.sort_index(), expected.reindex(got.index).sort_index(), check_names=False)

    keys = ["group", "metric", "system", "baseline"]
    tests = [pd.read_csv(folder / "group_tests.csv").set_index(keys).sort_index() for folder in (compared, diagnosed)]
    pd.testing.assert_frame_equal(
        tests[0][["p_value", "p_adjusted", "significant"]], tests[1][["p_value", "p_adjusted", "significant"]]
    )
    assert "group_means" in (diagnosed / "report.html").read_text(encoding="utf-8")  # the per-group plot


def test_a_field_no_query_has_is_one_line_before_any_system_runs(
    cisi_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankscope.workflows import compare
    from rankscope.workflows.diagnose import workflow

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a system ran before the groups were read")

    monkeypatch.setattr(sys.modules[compare.__module__], "produce_runs", never)
    monkeypatch.setattr(workflow, "produce_run", never)
    for command in ("compare", "diagnose"):
        argv = [command, "--quiet", "--dataset", str(cisi_folder), "--groups", "column:metadata.area"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1] == (
            f"rankscope {command}: error: {cisi_folder / 'queries.jsonl'}: no query has a field 'metadata.area'; "
            "fields found: _id, text, metadata, metadata.topic"
        )
