"""The parts of the repository people read or run by hand: benchmarks say what to install, docs name no machine."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def load_extras():
    spec = importlib.util.spec_from_file_location("bench_extras", REPO / "benchmarks" / "extras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_competitor_names_the_install_command(monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_evaluate.py"])
    with pytest.raises(SystemExit) as stop:
        load_extras().require(["numpy", "no_such_module_xyz"])
    assert str(stop.value) == (
        'bench_evaluate.py: needs no_such_module_xyz; install them with: pip install -e ".[bench]"'
    )
    load_extras().require(["numpy"])  # present: nothing happens


MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|root|home|tmp|opt)/[\w.-]+")


def test_docs_name_no_path_of_a_particular_machine() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert found == []
