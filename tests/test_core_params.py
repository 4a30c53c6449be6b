"""rankscope.core.params.check_arguments: one Param checks a public function's arguments as it checks a
retriever's parameters (the value as given, what is allowed, one line)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from rankscope.core.errors import ParameterError, RankscopeError
from rankscope.core.params import Param, check_arguments
from rankscope.corpora.schema import validate
from rankscope.evaluation.significance import adjust_pvalues, bootstrap_ci, compare_systems, randomization_test


@check_arguments(k=Param(int, low=1), alpha=Param(float, low=0, high=1), mode=Param(str, choices=("a", "b")))
def _scaled(values: list[float], k: int = 10, *, alpha: float = 0.5, mode: str = "a") -> tuple[int, float, str]:
    return k, alpha, mode


def test_given_arguments_are_checked_and_passed_as_stored() -> None:
    assert _scaled([1.0]) == (10, 0.5, "a")
    k, alpha, mode = _scaled([1.0], np.int64(3), alpha=1, mode="b")
    assert (k, alpha, mode) == (3, 1.0, "b") and type(k) is int and type(alpha) is float
    for call, message in [
        (lambda: _scaled([], 0), "_scaled: k=0 is not allowed; k must be an int in [1, inf)"),
        (lambda: _scaled([], True), "_scaled: k=True is not allowed; k must be an int in [1, inf)"),
        (lambda: _scaled([], alpha=float("nan")), "_scaled: alpha=nan is not allowed; alpha must be a float in [0, 1]"),
        (lambda: _scaled([], mode="c"), "_scaled: mode='c' is not allowed; mode must be one of a, b"),
    ]:
        with pytest.raises(ParameterError) as caught:
            call()
        assert str(caught.value) == message
        assert isinstance(caught.value, ValueError) and isinstance(caught.value, RankscopeError)


def test_the_declaration_is_checked_when_the_function_is_decorated() -> None:
    with pytest.raises(TypeError, match="f has no argument 'n'"):

        @check_arguments(n=Param(int))
        def f(k: int) -> int:
            return k

    with pytest.raises(ParameterError, match="g: k=0 is not allowed"):  # a default its own Param refuses

        @check_arguments(k=Param(int, low=1))
        def g(k: int = 0) -> int:
            return k


def test_the_signature_and_the_table_stay_readable() -> None:
    assert (
        str(inspect.signature(_scaled))
        == "(values: 'list[float]', k: 'int' = 10, *, alpha: 'float' = 0.5, mode: 'str' = 'a') -> 'tuple[int, float, str]'"
    )
    assert [p.name for p in _scaled.parameters] == ["k", "alpha", "mode"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: randomization_test(np.ones(3), np.zeros(3), n_permutations=0), "randomization_test: n_permutations=0"),
        (lambda: bootstrap_ci(np.ones(3), np.zeros(3), confidence=1.0), "bootstrap_ci: confidence=1.0"),
        (lambda: bootstrap_ci(np.ones(3), np.zeros(3), n_resamples=0), "bootstrap_ci: n_resamples=0"),
        (lambda: adjust_pvalues([0.1], method="sidak"), "adjust_pvalues: method='sidak'"),
        (lambda: compare_systems({}, "a", test="z"), "compare_systems: test='z'"),
        (lambda: compare_systems({}, "a", alpha=0), "compare_systems: alpha=0"),
        (lambda: validate(None, "runs"), "validate: kind='runs'"),  # type: ignore[arg-type]
    ],
)
def test_public_functions_refuse_in_the_same_words(call, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value).startswith(message + " is not allowed; ")
