"""rankscope.core.extras: an optional library missing is one line naming the extra that installs it,
the same class (MissingExtraError: a RankscopeError and an ImportError) at every site, in the CLI and
the Python API alike; and no module of rankscope catches an ImportError of its own any more."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.core.errors import RankscopeError
from rankscope.core.extras import MissingExtraError, require_extra
from rankscope.corpora import load_dataset
from rankscope.retrieval.word_vectors import package_folder

REPO = Path(__file__).resolve().parents[1]

CATCHING = {  # the modules that may catch an ImportError, and why
    "rankscope/core/extras.py": "the one helper",
    "corpora/formats.py": "pandas' Parquet engines, neither installed: missing_extra's line",
    "retrieval/topk.py": "the compiled kernel, required, not an extra",
    "retrieval/index_swap.py": "fcntl: no advisory locks on this platform",
    "retrieval/registry.py": "a built-in retriever whose extra is missing is not listed",
    "retrieval/checks.py": "passes a MissingExtraError through unchanged",
}


def hidden(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """``modules`` made unimportable, as if not installed (None in sys.modules: import raises ModuleNotFoundError)."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_a_missing_module_is_one_line_naming_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    hidden(monkeypatch, "regex")
    with pytest.raises(MissingExtraError) as excinfo:
        require_extra("regex", "rag", "answer matching")
    assert str(excinfo.value) == 'answer matching needs regex: pip install "rankscope[rag]"'
    assert isinstance(excinfo.value, RankscopeError) and isinstance(excinfo.value, ImportError)
    assert require_extra("json", "rag", "never shown").dumps([1]) == "[1]"  # present: the module itself


def test_a_library_missing_its_own_dependency_names_that_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rankscope_test_wrapper.py").write_text("import rankscope_test_absent_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError, match=r"^w needs rankscope_test_absent_dependency: pip install"):
        require_extra("rankscope_test_wrapper", "dense", "w")


def test_the_cli_prints_the_line_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden(monkeypatch, "ir_datasets")
    argv = ["search", "--dataset", "irds:some/set", "--retriever", "bm25", "--out", str(tmp_path / "run.trec")]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        'rankscope search: error: irds:some/set needs ir_datasets: pip install "rankscope[irds]"\n'
    )
    hidden(monkeypatch, "distributed")
    assert main(["search", "--dataset", "cisi", *argv[3:], "--scheduler", "local:1"]) == 2
    assert capsys.readouterr().err == (
        'rankscope search: error: --scheduler local:1 needs distributed: pip install "rankscope[distributed]"\n'
    )


@pytest.mark.parametrize(
    ("modules", "call", "line"),
    [
        (("datasets",), lambda: load_dataset("hf:owner/name"), 'hf:owner/name needs datasets: pip install "rankscope'),
        (
            ("faiss",),
            lambda: __import__("rankscope.retrieval.dense_index").retrieval.dense_index.import_faiss(),
            "faiss",
        ),
        ((), lambda: package_folder("rankscope_test_no_model", "st"), 'rankscope[st]" (install the CPU build of torch'),
    ],
    ids=["hf", "faiss", "packaged-model"],
)
def test_python_sites_raise_the_one_class(
    monkeypatch: pytest.MonkeyPatch, modules: tuple[str, ...], call, line: str
) -> None:
    hidden(monkeypatch, *modules)
    with pytest.raises(MissingExtraError) as excinfo:
        call()
    assert line in str(excinfo.value) and "\n" not in str(excinfo.value)


def test_no_module_catches_an_import_error_but_the_helper_and_the_listed_ones() -> None:
    catching = set()
    for folder in ("rankscope", "corpora", "evaluation", "retrieval"):
        for path in (REPO / folder).rglob("*.py"):
            if re.search(r"except \(?[\w, ]*\b(ImportError|ModuleNotFoundError)\b", path.read_text(encoding="utf-8")):
                catching.add(path.relative_to(REPO).as_posix())
    assert catching == set(CATCHING), "an optional import goes through rankscope.core.extras.require_extra"
