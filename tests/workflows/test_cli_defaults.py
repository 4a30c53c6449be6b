"""The workflow commands' defaults are the functions' own (read with inspect.signature), never retyped."""

from __future__ import annotations

import inspect

import pytest

from rankscope.cli import build_parser
from rankscope.evaluation.metrics import DEFAULT_METRICS
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from rankscope.workflows.tune import tune

OPTIONS = {
    compare: ("dataset", "retrievers", "baseline", "depth", "test", "seed"),
    tune: ("dataset", "retriever", "k1", "b", "metric", "folds", "seed"),
    diagnose: ("dataset", "retriever", "depth", "sampled_negatives", "sampled_repeats", "seed"),
}


@pytest.mark.parametrize("function", OPTIONS, ids=lambda f: f.__name__)
def test_cli_defaults_are_the_function_defaults(function) -> None:
    args = vars(build_parser().parse_args([function.__name__]))
    signature = inspect.signature(function).parameters
    for name in OPTIONS[function]:
        default = signature[name].default
        assert args[name] == (list(default) if isinstance(default, tuple) else default), name


def test_the_values_people_see(capsys: pytest.CaptureFixture[str]) -> None:
    """What the defaults are today, written out, so a change to a function's default is a visible change."""
    compare_args = vars(build_parser().parse_args(["compare"]))
    assert (compare_args["depth"], compare_args["test"], compare_args["baseline"]) == (1000, "randomization", "bm25")
    assert vars(build_parser().parse_args(["diagnose"]))["depth"] == 100
    assert DEFAULT_METRICS == ("ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "precision@10")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--help"])
    assert "default: ndcg@10 recall@100 mrr@10 hit@10 map" in " ".join(capsys.readouterr().out.split())
