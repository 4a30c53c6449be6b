"""The questions rankscope answers, one room each: compare, tune, diagnose, rag, judge.

Each room is private but for the names below and the facade's ``rs.compare``, ``rs.tune``,
``rs.diagnose``, ``rs.rag`` and ``rs.judge``. ``rag`` the function stays ``rankscope.workflows.rag.rag`` (and
``rs.rag``): binding it here would shadow the module that docs/rag.md imports as
``import rankscope.workflows.rag as rag``. What all of them do first lives in :mod:`.common`; what their
output is made of, in the layer below (:mod:`rankscope.reporting`).

Each name is imported on first use, so a command imports its own room only (``rankscope diagnose``
never loads judge, tune or rag). The functions share their rooms' names (``compare`` is a function
in the module ``compare``): Python binds a submodule on its package when it is imported, which would
hide a lazily exported function behind its module, so this package's class answers those names
itself (:class:`_Workflows`), always with the function.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.workflows.compare import CompareResult, compare
    from rankscope.workflows.diagnose import DiagnoseResult, diagnose, diagnose_runs
    from rankscope.workflows.judge import JudgeResult, judge
    from rankscope.workflows.options import Execution, Output, Search
    from rankscope.workflows.pool_bias import PoolBiasResult, poolbias
    from rankscope.workflows.rag import RagResult
    from rankscope.workflows.tune import TuneResult, tune

_EXPORTS: dict[str, str] = {
    "CompareResult": "rankscope.workflows.compare",
    "compare": "rankscope.workflows.compare",
    "DiagnoseResult": "rankscope.workflows.diagnose",
    "diagnose": "rankscope.workflows.diagnose",
    "diagnose_runs": "rankscope.workflows.diagnose",
    "JudgeResult": "rankscope.workflows.judge",
    "judge": "rankscope.workflows.judge",
    "Execution": "rankscope.workflows.options",
    "Output": "rankscope.workflows.options",
    "Search": "rankscope.workflows.options",
    "PoolBiasResult": "rankscope.workflows.pool_bias",
    "poolbias": "rankscope.workflows.pool_bias",
    "RagResult": "rankscope.workflows.rag",
    "TuneResult": "rankscope.workflows.tune",
    "tune": "rankscope.workflows.tune",
}
"""Each public name and the module that defines it (imported when the name is first used)."""

__all__ = [
    "CompareResult",
    "DiagnoseResult",
    "JudgeResult",
    "PoolBiasResult",
    "Execution",
    "Output",
    "RagResult",
    "Search",
    "TuneResult",
    "compare",
    "diagnose",
    "diagnose_runs",
    "judge",
    "poolbias",
    "tune",
]


class _Workflows(types.ModuleType):
    """This package: an exported name is looked up in its module, before any submodule bound here."""

    def __getattribute__(self, name: str) -> Any:
        if name in _EXPORTS:
            return getattr(importlib.import_module(_EXPORTS[name]), name)
        return super().__getattribute__(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_EXPORTS})


sys.modules[__name__].__class__ = _Workflows
