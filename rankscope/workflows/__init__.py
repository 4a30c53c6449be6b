"""The three questions rankscope answers: compare, tune, diagnose.

Imported eagerly, unlike the lower packages: the functions share their modules' names, so a lazy
export would lose to the submodule Python binds on the package when ``rankscope.workflows.compare``
is imported first; and every workflow command needs these modules anyway.
"""

from rankscope.workflows.compare import CompareResult, compare
from rankscope.workflows.diagnose import DiagnoseResult, diagnose
from rankscope.workflows.tune import TuneResult, tune

__all__ = ["CompareResult", "DiagnoseResult", "TuneResult", "compare", "diagnose", "tune"]
