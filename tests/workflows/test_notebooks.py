"""The notebooks run top to bottom on Cranfield with the current interpreter, so they never rot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

# what each notebook must show: text of its printed result and an inline report with plots
EXPECTED = {
    "compare.ipynb": ["bm25 (baseline)", "Holm-corrected"],
    "tune.ipynb": ["in-sample gain", "cross-validated gain"],
    "diagnose.ipynb": ["bm25 vs tfidf"],
}


@pytest.fixture()
def current_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> str:
    """A kernelspec that starts this very interpreter, found through JUPYTER_PATH."""
    spec = tmp_path / "kernels" / "rankscope-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "rankscope test", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    return "rankscope-test"


def outputs(cell: dict, kind: str) -> str:
    texts = []
    for out in cell.get("outputs", []):
        if kind == "text" and out.get("output_type") == "stream":
            texts.append(out["text"])
        texts.append(str(out.get("data", {}).get(kind, "")))
    return "".join(texts)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs(name: str, current_kernel: str) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        notebook, kernel_name=current_kernel, timeout=300, resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    printed = "".join(outputs(c, "text") + outputs(c, "text/plain") for c in code)
    for expected in EXPECTED[name]:
        assert expected in printed
    html = outputs(code[-1], "text/html")
    assert html.count("<svg") >= 1
