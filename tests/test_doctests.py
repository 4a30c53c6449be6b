"""The examples in docstrings run, as CI runs them: each module listed here, by doctest."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["rankscope.evaluation.engine", "rankscope.evaluation.options"]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_run(name: str) -> None:
    outcome = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert outcome.attempted > 0 and outcome.failed == 0
