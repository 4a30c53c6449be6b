"""evaluate with a scheduler: query partitions scored as tasks give one process's numbers bit for bit,
for any number of partitions, through the Python API and the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankscope.cli import main  # noqa: E402
from rankscope.core import scheduler  # noqa: E402
from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.corpora import load_dataset  # noqa: E402
from rankscope.corpora.trec import write_trec_qrels, write_trec_run  # noqa: E402
from rankscope.evaluation import evaluate, metrics  # noqa: E402
from rankscope.evaluation.engine import Columns, score_queries  # noqa: E402
from rankscope.evaluation.metrics import parse_metrics  # noqa: E402
from rankscope.evaluation.query_partitions import partitioned_scores  # noqa: E402
from rankscope.retrieval.registry import make_retriever  # noqa: E402
from tests.evaluation.trec_reference import EVERY_FAMILY, random_case  # noqa: E402
from tests.needs import needs

pytestmark = needs("distributed")


@pytest.fixture(scope="module")
def cranfield(data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cranfield's qrels (graded, 225 queries) and a BM25 run to depth 100 without every fifth query."""
    data = load_dataset(str(data_dir / "cranfield"))
    run = make_retriever("bm25").index(data.corpus).search(data.queries, k=100)
    dropped = set(data.queries["query_id"][::5])
    return data.qrels, run.loc[~run["query_id"].isin(dropped)].reset_index(drop=True)


def columns(qrels: pd.DataFrame, run: pd.DataFrame) -> Columns:
    return Columns(
        qrels["query_id"].to_numpy(dtype=object),
        qrels["doc_id"].to_numpy(dtype=object),
        qrels["relevance"].to_numpy(dtype=np.int64),
        run["query_id"].astype(str).to_numpy(dtype=object),
        run["doc_id"].astype(str).to_numpy(dtype=object),
        run["score"].to_numpy(dtype=np.float64),
    )


@pytest.mark.slow
@pytest.mark.parametrize("partitions", [1, 2, 3, 7, 500])
@pytest.mark.parametrize(("level", "judged_only"), [(1, False), (2, True)])
def test_every_partitioning_gives_the_same_rows(
    dask_client, cranfield, partitions: int, level: int, judged_only: bool
) -> None:
    """Every metric family; 500 partitions is more than there are queries (one query each)."""
    parsed = parse_metrics(EVERY_FAMILY)
    options = {"relevance_level": level, "judged_only": judged_only}
    single = score_queries(columns(*cranfield), parsed, **options)
    spread = partitioned_scores(columns(*cranfield), parsed, client=dask_client, partitions=partitions, **options)
    assert len(single[0]) == (180 if judged_only else 225)
    for one, many in zip(single, spread):
        np.testing.assert_array_equal(many, one)
        assert many.dtype == one.dtype and many.flags.c_contiguous == one.flags.c_contiguous


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "options",
    [{}, {"judged_only": True}, {"exclude_unjudged": True, "relevance_level": 2}, {"ignore_self": True}],
)
def test_the_python_api_with_a_client_equals_one_process(dask_client, seed: int, options: dict) -> None:
    """Random cases: ties, graded and negative labels, queries only in one input, an interleaved run."""
    qrels, run = random_case(seed, n_queries=60)
    selves = run.drop_duplicates("query_id").assign(doc_id=lambda rows: rows["query_id"], score=2.0)
    run = pd.concat([run, selves], ignore_index=True)  # rows ignore_self drops
    single = evaluate(qrels, run, EVERY_FAMILY, **options)
    spread = evaluate(qrels, run, EVERY_FAMILY, scheduler=dask_client, **options)
    pd.testing.assert_frame_equal(spread.per_query, single.per_query, check_exact=True)
    assert list(spread.mean.items()) == list(single.mean.items())  # the same floats, not approximately
    assert spread.n_unjudged == single.n_unjudged > 0


@pytest.mark.slow
def test_the_cli_prints_the_same_bytes(dask_client, cranfield, tmp_path: Path, capsys) -> None:
    """Two runs (significance), per query, in each format, through a scheduler's address."""
    qrels, run = cranfield
    write_trec_qrels(qrels, tmp_path / "qrels")
    write_trec_run(run, tmp_path / "a.trec")
    write_trec_run(run.assign(score=run["score"].round(0)), tmp_path / "b.trec")
    files = [str(tmp_path / name) for name in ("qrels", "a.trec", "b.trec")]
    address = dask_client.scheduler.address
    for fmt in ("table", "json", "csv"):
        args = ["evaluate", *files, "-m", "ndcg@10", "-m", "map", "-m", "bpref", "--per-query", "--format", fmt]
        assert main(args) == 0
        single = capsys.readouterr()
        assert main([*args, "--scheduler", address]) == 0
        spread = capsys.readouterr()
        assert spread.out.encode() == single.out.encode() and len(single.out) > 2000
        assert spread.err == single.err


def test_a_defined_metric_is_refused_in_one_line(dask_client, cranfield, monkeypatch) -> None:
    """The workers never saw the definition: refused before anything is sent."""
    monkeypatch.setattr(metrics, "FAMILIES", dict(metrics.FAMILIES))  # forgotten after the test
    monkeypatch.setattr(metrics, "ALIASES", dict(metrics.ALIASES))
    metrics.define("first_label", lambda judged, k: np.zeros(judged.n_queries))
    with pytest.raises(RankscopeError, match=r"^metric 'first_label' was defined in this process \(define\)"):
        evaluate(*cranfield, ["ndcg@10", "first_label"], scheduler=dask_client)
    assert evaluate(*cranfield, ["first_label"]).mean == {"first_label": 0.0}


def test_an_unreachable_scheduler_is_one_line(cranfield, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(scheduler, "CONNECT_TIMEOUT", 1)
    write_trec_qrels(cranfield[0], tmp_path / "qrels")
    write_trec_run(cranfield[1], tmp_path / "a.trec")
    assert (
        main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "a.trec"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    )
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "rankscope evaluate: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: "
    )
    assert captured.out == ""
