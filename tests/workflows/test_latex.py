"""``compare --format latex`` gives a table that LaTeX compiles (pdflatex when installed, else a parser)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rankscope.cli import main

DOCS = {
    "d1": "boundary layer flow over a flat plate",
    "d2": "heat transfer in hypersonic flow",
    "d3": "wing flutter at transonic speed",
    "d4": "boundary layer transition and heat transfer",
    "d5": "panel flutter of a cylindrical shell",
    "d6": "laminar flow and the boundary layer",
}
QUERIES = {"q1": "boundary layer", "q2": "heat transfer", "q3": "flutter"}
QRELS = {"q1": ["d1", "d6"], "q2": ["d2", "d4"], "q3": ["d3", "d5"]}


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in DOCS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, ds in QRELS.items() for d in ds)
    )
    return folder


def test_compare_latex_compiles(beir: Path, tmp_path: Path, capsys) -> None:
    args = ["compare", "--dataset", str(beir), "--retrievers", "tfidf", "bm25:k1=0.9,b=0.4", "--baseline", "tfidf"]
    assert main([*args, "--metrics", "ndcg@10", "map", "--format", "latex", "--quiet"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("\\begin{table}") and "\\toprule" in table and "\\bottomrule" in table
    assert "tfidf (baseline)" in table and "\\textbf{" in table
    document = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + table + "\\end{document}\n"
    if shutil.which("pdflatex"):
        (tmp_path / "t.tex").write_text(document)
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]
        assert (tmp_path / "t.pdf").stat().st_size > 0
    else:
        walker = pytest.importorskip("pylatexenc.latexwalker")
        nodes, _, _ = walker.LatexWalker(document, tolerant_parsing=False).get_latex_nodes()
        environments = [n.environmentname for n in nodes if n.isNodeType(walker.LatexEnvironmentNode)]
        assert environments == ["document"]
