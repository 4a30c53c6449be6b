"""workflows.runs: the checks every workflow makes on its retriever specs before reading the collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.reporting.report import file_stem
from rankscope.workflows.common.runs import check_specs


def test_file_stems() -> None:
    assert file_stem("bm25:k1=0.9,b=0.4") == "bm25_k1=0.9_b=0.4"
    assert file_stem("hybrid:retrievers=[bm25:k1=0.9,b=0.4]+w2v") == "hybrid_retrievers=_bm25_k1=0.9_b=0.4_+w2v"


def test_specs_whose_run_files_would_collide_are_refused() -> None:
    """Two spellings of one retriever would write the same run.<stem>.trec: the second would overwrite the first."""
    with pytest.raises(RankscopeError) as caught:
        check_specs(["bm25:k1=0.9", "bm25: k1=0.9"])
    assert str(caught.value) == (
        "retrievers ['bm25:k1=0.9', 'bm25: k1=0.9'] would share output file names ['bm25_k1=0.9', 'bm25_k1=0.9']"
    )
    with pytest.raises(RankscopeError, match=r"^retriever 'bm25' is listed twice$"):
        check_specs(["bm25", "tfidf", "bm25"])
    with pytest.raises(RankscopeError, match="^no retrievers given$"):
        check_specs([])
    check_specs(["bm25:k1=0.9", "bm25:k1=0.8"])  # distinct stems pass


def test_compare_refuses_the_collision_before_reading_the_collection(tmp_path: Path, capsys) -> None:
    argv = ["compare", "--dataset", str(tmp_path / "absent"), "--retrievers", "bm25:k1=0.9", "bm25: k1=0.9"]
    assert main([*argv, "--baseline", "bm25:k1=0.9"]) == 2
    assert "would share output file names" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "retrievers", "said"),
    [
        ("rag", ["bm25", "bm25"], "retriever 'bm25' is listed twice"),  # was accepted: the dict kept one
        ("rag", ["bm25", "tfidf", "bm25"], "retriever 'bm25' is listed twice"),
        ("compare", ["bm25", "bm25"], "system 'bm25' is listed twice"),
        ("poolbias", ["tfidf", "tfidf"], "system 'tfidf' is listed twice"),
    ],
)
def test_a_retriever_listed_twice_is_refused_before_reading_the_collection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, retrievers: list[str], said: str
) -> None:
    argv = [command, "--dataset", str(tmp_path / "absent"), "--retrievers", *retrievers]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"rankscope {command}: error: {said}\n"


def test_rag_in_python_refuses_a_spec_listed_twice(tmp_path: Path) -> None:
    from rankscope.workflows.rag import rag

    with pytest.raises(RankscopeError, match=r"^retriever 'bm25' is listed twice$"):
        rag(str(tmp_path / "absent"), retrievers=["bm25", "bm25"])


@pytest.mark.parametrize(("option", "value"), [("--pool-bias", "0"), ("--pool-depth", "-3")])
def test_a_depth_of_another_name_is_refused_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """One check for every depth (check_depth), naming the option given: --pool-bias 0 was refused as --depth."""
    argv = ["compare", "--dataset", str(tmp_path / "absent"), "--retrievers", "bm25", "tfidf", option, value]
    assert main([*argv, "--judge", "qrels"] if option == "--pool-depth" else argv) == 2
    assert capsys.readouterr().err == f"rankscope compare: error: {option} must be at least 1, got {value}\n"
