"""The notebooks in notebooks/ show the README's workflows at full size, with their outputs committed.

Two checks keep them honest, both fast enough for CI:

- **They still execute.** Each notebook runs top to bottom with the current interpreter, its
  cell tagged ``parameters`` replaced by smaller values (two retrievers instead of three, a
  2 x 2 grid instead of the default 19 x 21), as papermill would; the printed result and an
  inline SVG report must appear.
- **The committed outputs are current.** Re-running at full size (Word2Vec training, the
  399-point grid) takes minutes, so the numbers of the committed tables (cells tagged
  ``check-<name>``; their HTML output is read) are compared with numbers recomputed cheaply
  here: compare's BM25 and TF-IDF means (every metric; the Word2Vec row is only checked to be
  there), tune's five best grid points (each re-scored at its k1 and b), diagnose's Hit@K,
  Recall@K and MRR@K of BM25 on CISI. Timings, progress output, dates and plots are not
  compared. A committed table that disagrees fails the test: re-execute the notebook
  (``jupyter nbconvert --execute --inplace notebooks/NAME.ipynb``) and commit it.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
DISPLAYED = 5e-7  # pandas shows 6 decimals

# the small parameters CI runs each notebook with, and what its outputs must then show
SMALL = {
    "compare.ipynb": ('DATASET = "cranfield"\nRETRIEVERS = ["tfidf", "bm25"]', ["bm25 (baseline)", "Holm-corrected"]),
    "tune.ipynb": ('K1 = "1.0:1.2:0.2"\nB = "0.7:0.8:0.1"', ["in-sample gain", "cross-validated gain"]),
    "diagnose.ipynb": ('DATASET = "cisi"\nRETRIEVER, VS = "bm25", "tfidf"', ["bm25 vs tfidf"]),
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


def read(name: str):
    import nbformat

    return nbformat.read(NOTEBOOKS / name, as_version=4)


def outputs(cell: dict, kind: str) -> str:
    texts = []
    for out in cell.get("outputs", []):
        if kind == "text" and out.get("output_type") == "stream":
            texts.append(out["text"])
        texts.append(str(out.get("data", {}).get(kind, "")))
    return "".join(texts)


def tagged(notebook, tag: str) -> dict:
    (cell,) = [c for c in notebook.cells if tag in c.get("metadata", {}).get("tags", [])]
    return cell


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_notebook_runs(name: str, current_kernel: str) -> None:
    from nbclient import NotebookClient

    notebook = read(name)
    small, expected = SMALL[name]
    tagged(notebook, "parameters")["source"] = small
    NotebookClient(
        notebook, kernel_name=current_kernel, timeout=300, resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    printed = "".join(outputs(c, "text") + outputs(c, "text/plain") for c in code)
    for text in expected:
        assert text in printed
    assert outputs(code[-1], "text/html").count("<svg") >= 1
    assert len(outputs(code[-1], "text/plain")) < 200  # the report's text repr is one line, not the tables


def html_table(cell: dict) -> pd.DataFrame:
    """The DataFrame a cell displayed, read back from its HTML output (index as the first column)."""
    text = outputs(cell, "text/html")
    assert text, "the committed notebook has no output for this cell: execute it and commit"
    head, body = text.split("<tbody>")
    columns = [html.unescape(c) for c in re.findall(r"<th>(.*?)</th>", head.split("</tr>")[0])][1:]  # after the index
    rows = [[html.unescape(c) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)] for row in body.split("</tr>")[:-1]]
    return pd.DataFrame([r[1:] for r in rows], index=[r[0] for r in rows], columns=columns).replace("NaN", np.nan)


def test_committed_notebooks_show_their_outputs() -> None:
    for name in SMALL:
        code = [c for c in read(name).cells if c.cell_type == "code"]
        shown = [c for c in code if "parameters" not in c.metadata.get("tags", [])]  # assignments show nothing
        assert all(c.get("outputs") and c.get("execution_count") for c in shown), f"{name}: a cell not executed"
        assert outputs(code[-1], "text/html").count("<svg") >= 1, f"{name}: no inline report"
        assert all("Traceback" not in outputs(c, "text") for c in code)


def test_committed_compare_table_is_current(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    table = html_table(tagged(read("compare.ipynb"), "check-summary")).astype(float)
    assert list(table.index) == ["tfidf", "bm25", "w2v"]  # the full-size run: Word2Vec too
    data = load_dataset("cranfield")
    for spec in ("tfidf", "bm25"):  # Word2Vec training takes minutes: its row is not recomputed
        run = make_retriever(spec).index(data.corpus).search(data.queries, k=1000)
        means = evaluate(data.qrels, run, list(table.columns)).mean
        np.testing.assert_allclose(table.loc[spec].to_numpy(), list(means.values()), atol=DISPLAYED)
    assert table.loc["w2v"].between(0, 1).all()


def check_tune_grid(notebook) -> None:
    """The committed five best grid points, each re-scored at its k1 and b."""
    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    assert 'K1 = "0.2:2.0:0.1"' in tagged(notebook, "parameters")["source"]  # committed at the default grid
    top = html_table(tagged(notebook, "check-grid")).astype(float)
    assert list(top.columns) == ["k1", "b", "mean"] and len(top) == 5
    assert top["mean"].is_monotonic_decreasing
    data = load_dataset("cranfield")
    bm25 = make_retriever("bm25").index(data.corpus)
    for k1, b, mean in top.itertuples(index=False):
        run = bm25.set_params(k1=k1, b=b).search(data.queries, k=1000)
        assert evaluate(data.qrels, run, ["ndcg@10"]).mean["ndcg@10"] == pytest.approx(mean, abs=DISPLAYED)


def test_committed_tune_grid_is_current(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    check_tune_grid(read("tune.ipynb"))


def test_a_stale_committed_output_fails_the_check(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: one grid mean moved by 1e-4 in the committed HTML is caught."""
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    notebook = read("tune.ipynb")
    cell = tagged(notebook, "check-grid")
    data = cell["outputs"][0]["data"]
    value = html_table(cell)["mean"].iloc[2]
    data["text/html"] = data["text/html"].replace(f"<td>{value}</td>", f"<td>{float(value) + 1e-4:.6f}</td>")
    with pytest.raises(AssertionError):
        check_tune_grid(notebook)


def test_committed_diagnose_table_is_current(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    table = html_table(tagged(read("diagnose.ipynb"), "check-cutoffs"))
    data = load_dataset("cisi")
    run = make_retriever("bm25").index(data.corpus).search(data.queries, k=100)
    ks = [int(k) for k in table.index]
    metrics = [f"{m}@{k}" for k in ks for m in ("hit", "recall", "mrr")]
    # diagnose averages over the judged queries; evaluate counts queries without judgments as 0 when asked
    means = evaluate(data.qrels[data.qrels["relevance"] > 0], run, metrics).mean
    for k in ks:
        for column, measure in (("Hit@K", "hit"), ("Recall@K", "recall"), ("MRR@K", "mrr")):
            assert float(table.loc[str(k), column]) == pytest.approx(means[f"{measure}@{k}"], abs=DISPLAYED)
