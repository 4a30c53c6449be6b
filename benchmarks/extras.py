"""What a benchmark needs that rankscope itself does not: a clear line instead of ModuleNotFoundError."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path


def require(modules: Iterable[str], extra: str = "bench") -> None:
    """Exit with one line naming the missing modules and the ``pip install`` that brings them."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        script = Path(sys.argv[0]).name
        sys.exit(f'{script}: needs {", ".join(missing)}; install them with: pip install -e ".[{extra}]"')
