"""The workflow commands' defaults are the functions' own (read with inspect.signature), never retyped."""

from __future__ import annotations

import inspect

import pytest

from rankscope.cli import build_parser
from rankscope.evaluation.metrics import DEFAULT_METRICS
from rankscope.workflows.cli import default_specs
from rankscope.workflows.compare import compare
from rankscope.workflows.diagnose import diagnose
from rankscope.workflows.tune import tune

OPTIONS = {
    compare: ("dataset", "baseline", "depth", "test", "seed"),
    tune: ("dataset", "retriever", "k1", "b", "metric", "folds", "seed", "search", "trials"),
    diagnose: ("dataset", "depth", "sampled_negatives", "sampled_repeats", "seed"),
}
SYSTEMS = {compare: ("retrievers", "retrievers"), diagnose: ("retriever", "retriever")}
"""Options whose default applies only without --run: (CLI option, function parameter)."""


@pytest.mark.parametrize("function", OPTIONS, ids=lambda f: f.__name__)
def test_cli_defaults_are_the_function_defaults(function) -> None:
    args = vars(build_parser().parse_args([function.__name__]))
    signature = inspect.signature(function).parameters
    for name in OPTIONS[function]:
        default = signature[name].default
        assert args[name] == (list(default) if isinstance(default, tuple) else default), name


@pytest.mark.parametrize("function", SYSTEMS, ids=lambda f: f.__name__)
def test_default_systems_are_the_function_defaults_unless_runs_are_given(function) -> None:
    option, parameter = SYSTEMS[function]
    default = inspect.signature(function).parameters[parameter].default
    expected = [default] if isinstance(default, str) else list(default)
    given = vars(build_parser().parse_args([function.__name__]))[option]
    assert default_specs(given, [], default) == expected
    runs = vars(build_parser().parse_args([function.__name__, "--run", "prod=prod.trec"]))
    assert default_specs(runs[option], runs["run"], default) == []


def test_the_values_people_see(capsys: pytest.CaptureFixture[str]) -> None:
    """What the defaults are today, written out, so a change to a function's default is a visible change."""
    compare_args = vars(build_parser().parse_args(["compare"]))
    assert (compare_args["depth"], compare_args["test"], compare_args["baseline"]) == (1000, "randomization", None)
    assert vars(build_parser().parse_args(["diagnose"]))["depth"] == 100
    assert DEFAULT_METRICS == ("ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "precision@10")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "default: ndcg@10 recall@100 mrr@10 hit@10 map" in shown
    assert "(default: tfidf bm25 w2v unless --run is given)" in shown
    assert "(default: bm25 if compared, else the first)" in shown
