"""Rules of the test suite itself: a test module never imports from another test module (shared helpers live
in helper modules beside them, e.g. tests/workflows/handmade.py), so each test file runs alone."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported_test_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [name for name in names if name.split(".")[-1].startswith("test_")]


def test_no_test_module_imports_another() -> None:
    offenders = {
        str(path.relative_to(TESTS)): found
        for path in sorted(TESTS.rglob("*.py"))
        if (found := _imported_test_modules(path))
    }
    assert offenders == {}


def test_the_rule_sees_an_import_from_a_test_module(tmp_path: Path) -> None:
    module = tmp_path / "test_x.py"
    module.write_text("from tests.workflows.test_tune import small_dataset\nimport harness\n")
    assert _imported_test_modules(module) == ["tests.workflows.test_tune"]
