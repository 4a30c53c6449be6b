"""The questions rankscope answers, one room each: compare, tune, diagnose, rag, judge.

Each room is private but for the names below and the facade's ``rs.compare``, ``rs.tune``,
``rs.diagnose``, ``rs.rag`` and ``rs.judge``. ``rag`` the function stays ``rankscope.workflows.rag.rag`` (and
``rs.rag``): binding it here would shadow the module that docs/rag.md imports as
``import rankscope.workflows.rag as rag``. What all of them do first lives in :mod:`.common`; what their
output is made of, in the layer below (:mod:`rankscope.reporting`).

Imported eagerly, unlike the lower packages: the functions share their rooms' names, so a lazy
export would lose to the submodule Python binds on the package when ``rankscope.workflows.compare``
is imported first; and every workflow command needs these modules anyway.
"""

from rankscope.workflows.compare import CompareResult, compare
from rankscope.workflows.diagnose import DiagnoseResult, diagnose, diagnose_runs
from rankscope.workflows.judge import JudgeResult, judge
from rankscope.workflows.options import Execution, Output, Search
from rankscope.workflows.pool_bias import PoolBiasResult, poolbias
from rankscope.workflows.rag import RagResult
from rankscope.workflows.tune import TuneResult, tune

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
