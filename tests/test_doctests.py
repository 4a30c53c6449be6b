"""The examples in docstrings run, as CI runs them: each module listed here, by doctest (the facade's
entry points: evaluate, make_retriever, load_dataset, compare, diagnose, tune; loading a collection reads RANKSCOPE_DATA)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = [
    "rankscope.evaluation.engine",
    "rankscope.evaluation.options",
    "rankscope.retrieval.registry",
    "rankscope.corpora.load",
]
WORKFLOWS = [  # whole collections: seconds of CPU each
    "rankscope.workflows.compare.workflow",
    "rankscope.workflows.diagnose.workflow",
    "rankscope.workflows.tune.workflow",
]


@pytest.mark.parametrize("name", [*MODULES, *(pytest.param(name, marks=pytest.mark.slow) for name in WORKFLOWS)])
def test_the_examples_of_a_module_run(name: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_DATA", str(data_dir))
    outcome = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert outcome.attempted > 0 and outcome.failed == 0
