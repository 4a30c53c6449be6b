"""Run files are scored as given (issue 29 item 8): compare prints the MAP evaluate prints for the
same file; only an explicit depth cuts them, and retrievers search to the default depth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.export import export_dataset
from rankscope.corpora.trec import read_trec_run, write_trec_run
from rankscope.evaluation import evaluate
from rankscope.workflows.compare import compare

N_DOCS = 1200


def deep_world(tmp_path: Path) -> tuple[Dataset, dict[str, Path]]:
    """1200 documents, 4 queries, two runs of all 1200 whose relevant documents sit beyond rank 1000
    for some queries: cutting at 1000 changes MAP."""
    rng = np.random.default_rng(0)
    docs = {f"d{i:04d}": f"plate word{i % 7} text{i}" for i in range(N_DOCS)}
    queries = {f"q{j}": f"plate word{j}" for j in range(4)}
    qrels = {f"q{j}": {f"d{i:04d}": 1 for i in rng.choice(N_DOCS, size=5, replace=False)} for j in range(4)}
    data = Dataset.from_dicts("deep", docs, queries, qrels)
    paths = {}
    for name in ("a", "b"):
        rows = []
        for query in queries:
            order = rng.permutation(N_DOCS)
            rows += [(query, f"d{i:04d}", float(N_DOCS - rank)) for rank, i in enumerate(order)]
        run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(run, paths[name])
    return data, paths


def test_compare_scores_run_files_as_given(tmp_path: Path) -> None:
    data, paths = deep_world(tmp_path)
    given = {name: evaluate(data.qrels, read_trec_run(path), ["map"]).mean["map"] for name, path in paths.items()}
    cut = {
        name: evaluate(data.qrels, read_trec_run(path).query("rank <= 1000"), ["map"]).mean["map"]
        for name, path in paths.items()
    }
    assert all(given[name] != pytest.approx(cut[name], abs=1e-6) for name in paths)  # the world tests something
    result = compare(data, paths, ["map"], baseline="a")
    assert result.summary["map"].to_dict() == pytest.approx(given, abs=1e-12)
    assert result.depth is None
    assert result.systems["notes"].tolist() == ["", ""]
    deep = compare(data, paths, ["map"], baseline="a", depth=1000)
    assert deep.summary["map"].to_dict() == pytest.approx(cut, abs=1e-12)
    assert deep.systems["notes"].tolist() == ["800 rows below rank 1000 were cut (depth 1000)"] * 2


def test_retrievers_still_search_to_the_default_depth(tmp_path: Path) -> None:
    data, paths = deep_world(tmp_path)
    result = compare(data, {"bm25": "bm25", "a": paths["a"]}, ["map"])
    assert result.runs["bm25"].groupby("query_id").size().max() == 1000
    assert len(result.runs["a"]) == 4 * N_DOCS


def map_line(text: str, name: str) -> str:
    """The MAP cell of ``name``'s row in a printed table whose only metric is map."""
    row = next(line for line in text.splitlines() if line.split() and line.split()[0] == name)
    return row.split()[-1].rstrip("*+-")


def test_evaluate_and_compare_print_the_same_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, paths = deep_world(tmp_path)
    export_dataset(data, tmp_path / "deep")
    assert main(["--quiet", "evaluate", str(tmp_path / "deep" / "qrels.txt"), str(paths["a"]), str(paths["b"]),
                 "-m", "map"]) == 0  # fmt: skip
    evaluated = capsys.readouterr().out
    assert main(["--quiet", "compare", "--dataset", str(tmp_path / "deep"), "--run", f"a={paths['a']}",
                 "--run", f"b={paths['b']}", "--metrics", "map", "--baseline", "a"]) == 0  # fmt: skip
    compared = capsys.readouterr().out
    for name in ("a", "b"):
        assert map_line(compared, name) == map_line(evaluated, str(paths[name]))
