"""What the terminal shows (issue 29 items 6 and 7): tables fit the width, brief specs (the files keep
the full ones), grouped findings, short lists with the rest in the report, the --out hint at the end,
known-collection quirks as --verbose notes."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.export import export_dataset
from rankscope.reporting.tables import text_table, wrap_cell
from rankscope.retrieval.registry import brief_spec, make_retriever
from rankscope.workflows.cli.command import OUT_HINT
from tests.workflows.tiny_collection import small_dataset

LONG_SPEC = make_retriever("bm25:k1=0.9").spec()


def test_a_wide_table_wraps_its_text_and_splits_its_numbers_to_fit() -> None:
    frame = pd.DataFrame(
        {"description": [LONG_SPEC, "tfidf"], **{f"metric{i}@1000tok": [0.5, 0.25] for i in range(9)}},
        index=pd.Index(["bm25", "tfidf"], name="system"),
    )
    text = text_table(frame, width=100)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert sum(line.startswith("system") for line in lines) >= 2  # column blocks, each with the row labels
    for i in range(9):
        assert sum(f"metric{i}@1000tok" in line for line in lines) == 1  # every column exactly once
    description = [
        line[len("system  ") :].split("  ")[0].strip() for line in lines if line.startswith(("bm25 ", "     "))
    ]
    assert "".join(description).replace(" ", "") == LONG_SPEC  # wrapped, nothing lost
    assert text_table(frame, width=100) != text_table(frame)  # without a terminal: no limit, one block
    assert "\n\n" not in text_table(frame)


def test_cells_break_between_parameters() -> None:
    assert wrap_cell("bm25:k1=0.9,b=0.4,delta=None", 14) == ["bm25:k1=0.9,", "b=0.4,", "delta=None"]
    assert wrap_cell("abcdefghij", 4) == ["abcd", "efgh", "ij"]


def test_brief_specs_keep_what_differs_from_the_defaults() -> None:
    assert brief_spec(LONG_SPEC) == "bm25:k1=0.9"
    assert brief_spec(make_retriever("w2v").spec()) == "w2v"
    fused = (make_retriever("bm25:k1=1.9") + make_retriever("tfidf")).spec()
    assert brief_spec(fused) == "hybrid:retrievers=[bm25:k1=1.9]+[tfidf]"
    assert brief_spec(make_retriever(brief_spec(fused)).spec()) == brief_spec(fused)  # the brief one rebuilds it


@pytest.fixture()
def small_folder(tmp_path: Path) -> Path:
    export_dataset(small_dataset(), tmp_path / "small")
    return tmp_path / "small"


def test_compare_fits_100_columns_and_ends_with_the_report_hint(
    small_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    args = ["--quiet", "compare", "--dataset", str(small_folder), "--retrievers", "bm25:k1=0.9", "tfidf", "w2v"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "bm25:k1=0.9 " in out and "variant=" not in out and "vector_size" not in out
    assert out.rstrip().splitlines()[-1] == OUT_HINT
    assert main([*args, "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert OUT_HINT not in out and out.index("retriever") < out.index("wrote")
    systems = pd.read_csv(tmp_path / "cmp" / "systems.csv", index_col=0)
    assert systems.loc["bm25:k1=0.9", "description"] == LONG_SPEC  # the file keeps every parameter


def test_rag_groups_its_per_system_findings(small_folder: Path) -> None:
    from rankscope.workflows.rag import rag

    result = rag(str(small_folder), ["words:5:2", "words:8:0"], ["bm25", "tfidf"], [20, 40])
    needs = [f for f in result.findings if "tokens of context" in f.lower()]
    assert len(needs) == 1 and len(result.summary) == 6
    median = result.chunks["median_tokens_to_first"]
    assert f"fewest {median.idxmin()} (median {median.min():,.0f}" in needs[0]
    assert sum("distinct documents" in f for f in result.findings) <= 1
    shown = result.shown_chunks()
    assert str(shown["median_tokens_to_first"].dtype) == "Int64"
    assert (shown["median_tokens_to_first"] == median.round().astype("Int64")).all()


def test_diagnose_worst_queries_leave_out_queries_that_lost_nothing() -> None:
    from rankscope.workflows.diagnose import diagnose

    result = diagnose(small_dataset(), "bm25", metrics=["mrr@10", "ndcg@10"])
    d = result.diagnoses[0]
    lost = d.headroom.lost(result.metrics[0])["lost"]
    assert (lost == 0).any()  # the collection has queries at their ideal
    worst = result.worst(d, n=None)
    assert set(worst["query_id"]) == set(lost[lost > 0].index)
    assert (worst["lost"] > 0).all()


def test_tune_prints_the_best_point_as_a_ready_spec(small_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope.workflows.tune import tune

    result = tune(small_dataset(), "bm25", params={"k1": "0.3:1.9:0.2", "b": "0.05:0.95:0.3"}, folds=2)
    best = result.best
    expected = "bm25:" + ",".join(
        f"{name}={best[name]:.12g}" for name, default in (("k1", 1.5), ("b", 0.75)) if best[name] != default
    )
    assert result.best_spec() == expected
    assert make_retriever(result.best_spec()).get_params()["k1"] == pytest.approx(best["k1"])
    assert re.search(rf"best as a spec {{2,}}{re.escape(expected)}", result.to_text())
    assert "0000000" not in result.to_text()  # grid values as typed, not 1.9000000000000001


def test_cranfield_quirks_are_notes_printed_with_verbose(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope.corpora import load_dataset

    cranfield = load_dataset("cranfield")
    assert not [w for w in cranfield.warnings if "repeats section" in w]
    assert len([n for n in cranfield.notes if "repeats section(s) W" in n]) == 2
    args = ["--quiet", "search", "--dataset", "cranfield", "--retriever", "bm25", "--query", "wing"]
    assert main(args) == 0
    assert "repeats section" not in capsys.readouterr().err
    assert main(["--verbose", *args]) == 0
    err = capsys.readouterr().err
    assert err.count("rankscope search: note: cran.all.1400: record 57") == 2 and "warning" not in err
