"""Systems are names, objects or runs: one resolution for compare, diagnose and tune.

Uses the five-document collection and the fixed retrievers of tests/workflows/handmade.py,
whose numbers are worked out by hand there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.corpora.trec import write_trec_run
from rankscope.workflows.common.systems import checked_run, resolve_systems
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from rankscope.workflows.diagnose.sampling import Sampled
from tests.workflows.handmade import DATA, Fixed


def run_of(system: str) -> pd.DataFrame:
    return Fixed(system=system).index(DATA.corpus).search(DATA.queries)


def test_every_kind_of_system_gives_the_same_numbers(tmp_path: Path) -> None:
    path = tmp_path / "b.trec"
    write_trec_run(run_of("B"), path)
    given = Fixed(system="A")
    systems = {"object": given, "frame": run_of("B"), "file": path}
    result = compare(DATA, systems, ["mrr@10", "RR@10", "Success@1"][::2], baseline="object", depth=5)
    assert list(result.summary.columns) == ["mrr@10", "hit@1"]  # canonical labels
    assert result.summary.loc["object", "mrr@10"] == pytest.approx((1 / 2 + 1 + 0 + 1 / 4) / 4)
    assert result.summary.loc["frame", "mrr@10"] == pytest.approx((1 + 1 / 3 + 1 + 1) / 4)
    assert result.summary.loc["file"].to_dict() == pytest.approx(result.summary.loc["frame"].to_dict())
    described = result.systems["description"].to_dict()
    assert described["object"] == "fixed:system=A"
    assert described["frame"] == "run DataFrame: 6 rows, 4 queries"
    assert described["file"] == f"run file {path} (sha256 {hashlib.sha256(path.read_bytes()).hexdigest()})"
    # judged share at ranks 1-10 of B: q1 d1 (judged), q2 d1 d2 d4 (1 of 3), q3 d5, q4 d5 -> (1 + 1/3 + 1 + 1) / 4
    assert result.systems.loc["frame", "judged 1-10"] == pytest.approx((1 + 1 / 3 + 1 + 1) / 4)
    assert not hasattr(given, "texts_")  # the object given was not indexed: a fresh copy was
    # precision-recall points: B's q2 finds d4 at rank 3 (of R = 2): iprec@0.5 = 1/3, iprec@1 = 0 (d3 missed)
    curve = result.precision_recall.query("retriever == 'frame'").set_index("recall")["precision"]
    assert list(curve.index) == [i / 10 for i in range(11)]
    assert curve[0.5] == pytest.approx((1 + 1 / 3 + 1 + 1) / 4) and curve[1.0] == pytest.approx(3 / 4)


def test_runs_are_checked_against_the_dataset() -> None:
    run = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q9", "q2"],
            "doc_id": ["d1", "zz", "d2", "d1", "d3"],
            "score": [3.0, 2.0, 1.0, 1.0, 1.0],
        }
    )
    cut, notes = checked_run("prod", run, DATA, depth=2)
    assert notes == (
        "1 of 3 run queries are not in the qrels (ignored; e.g. ['q9'])",
        "2 of 4 qrels queries are not in the run (they score 0; e.g. ['q3', 'q4'])",
        "1 of 5 rows name documents the corpus lacks (1 distinct; never relevant)",
        "1 rows below rank 2 were cut (depth 2)",
    )
    assert cut[cut["query_id"] == "q1"]["doc_id"].tolist() == ["d1", "zz"]
    with pytest.raises(RankscopeError, match="run 'x' on 'tiny': the run's 1 queries share none with the qrels"):
        checked_run("x", run.assign(query_id="q9"), DATA, depth=10)
    with pytest.raises(RankscopeError, match="names no document of the corpus"):
        checked_run("x", run.assign(doc_id=["a", "b", "c", "d", "e"]), DATA, depth=10)


def test_names_are_checked_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(RankscopeError, match="needs a name"):
        resolve_systems([run_of("A")])
    with pytest.raises(FileNotFoundError, match="no such run file"):
        resolve_systems({"x": tmp_path / "missing.trec"})
    with pytest.raises(RankscopeError, match="no systems"):
        resolve_systems({})
    with pytest.raises(RankscopeError, match="would share output file names"):
        resolve_systems({"a b": run_of("A"), "a_b": run_of("B")})


def test_diagnose_a_run_and_a_retriever_side_by_side() -> None:
    result = diagnose(
        DATA,
        {"prod": run_of("A"), "new": Fixed(system="B")},
        depth=5,
        sampled=Sampled(negatives=2, repeats=2),
    )
    prod, new = result.diagnoses
    assert (prod.retriever, new.retriever) == ("prod", "new")
    assert prod.first_ranks.to_dict() == pytest.approx({"q1": 2, "q2": 1, "q3": float("nan"), "q4": 4}, nan_ok=True)
    assert prod.sampled.empty and not new.sampled.empty  # a run has no scorer for sampled candidates
    assert result.notes[0] == "prod is run DataFrame: 8 rows, 4 queries"
