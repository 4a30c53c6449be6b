"""docs/architecture.md (the map) and docs/packages/ (each package's notes) name only what exists: every
dotted name ``rankscope.x.y`` resolves to a module or an attribute of one, and every path with a folder
names a file or folder of the repository; the map stays short enough to read in ten minutes."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "docs" / "architecture.md", *sorted((REPO / "docs" / "packages").glob("*.md"))]
DOTTED = re.compile(r"`(rankscope(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"`((?:\.\./)?[\w.-]+/[\w./-]+)`")


def resolves(name: str) -> bool:
    """Whether ``name`` is a module or an attribute reached from the longest module prefix of it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_dotted_name_resolves(page: Path) -> None:
    names = sorted(set(DOTTED.findall(page.read_text(encoding="utf-8"))))
    assert [name for name in names if not resolves(name)] == []


def test_every_path_of_the_map_exists() -> None:
    paths = {path.rstrip("/") for path in PATH.findall(PAGES[0].read_text(encoding="utf-8"))}
    missing = [path for path in sorted(paths) if not path.startswith("../") and not (REPO / path).exists()]
    assert missing == []


def test_the_map_is_short() -> None:
    assert len((REPO / "docs" / "architecture.md").read_bytes()) < 12_000


def test_the_check_sees_a_name_that_does_not_resolve() -> None:
    assert resolves("rankscope.corpora.schema.sort_run") and resolves("rankscope.core.fileio")
    assert not resolves("rankscope.corpora.schema.no_such_function")
    assert not resolves("rankscope.no_such_module")
