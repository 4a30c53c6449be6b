"""Optional libraries, each installed by an extra of ``pyproject.toml``: imported when a feature needs
one, else one line naming the extra that installs it (``pip install "rankscope[EXTRA]"``).

Every such import of rankscope goes through :func:`require_extra`, so a missing library is always a
:class:`MissingExtraError`: a :class:`RankscopeError` (the CLI prints its one line and exits 2) and an
``ImportError`` (code catching that keeps working).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rankscope.core.errors import RankscopeError

NOTES = {"st": " (install the CPU build of torch first: see the README)"}
"""What an extra's install needs besides the ``pip install`` line."""


class MissingExtraError(RankscopeError, ImportError):
    """An optional library is not installed; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """``pip install "rankscope[EXTRA]"``, and what else that extra's install needs."""
    return f'pip install "rankscope[{extra}]"{NOTES.get(extra, "")}'


def missing_extra(what: str, package: str, extra: str) -> MissingExtraError:
    """The one line for ``what`` lacking ``package``: ``WHAT needs PACKAGE: pip install "rankscope[EXTRA]"``."""
    return MissingExtraError(f"{what} needs {package}: {install_hint(extra)}")


def require_extra(module: str, extra: str, what: str) -> ModuleType:
    """``module`` imported, or a :class:`MissingExtraError` naming the library missing (``module``, or
    the library it needs that is not there) and ``extra``; ``what`` is the feature that needs it."""
    try:
        importlib.import_module(module.partition(".")[0])  # its package first, as `from package import part` does
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name if isinstance(exc, ModuleNotFoundError) and exc.name else module
        raise missing_extra(what, missing.partition(".")[0], extra) from exc
