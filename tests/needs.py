"""Skip a test module whose optional packages are missing, without importing them while tests are collected.

``pytest.importorskip`` at module level imports the package at collection: the frameworks, datasets and
pyterrier alone cost several seconds of CPU on every run, even of one unrelated test. ``find_spec`` only
looks for the package; the tests import it when they run."""

from __future__ import annotations

from importlib.util import find_spec

import pytest


def installed(module: str) -> bool:
    """Whether ``module`` (dotted names too) can be found, without importing it (its parents only)."""
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # a missing parent package of a dotted name
        return False


def needs(*modules: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for a module's ``pytestmark``: skipped when any of ``modules`` is not installed."""
    missing = [module for module in modules if not installed(module)]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")
