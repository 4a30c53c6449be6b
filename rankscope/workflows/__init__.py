"""The three questions rankscope answers: compare, tune, diagnose."""

from rankscope.workflows.compare import CompareResult, compare
from rankscope.workflows.diagnose import DiagnoseResult, diagnose
from rankscope.workflows.tune import TuneResult, tune

__all__ = ["CompareResult", "DiagnoseResult", "TuneResult", "compare", "diagnose", "tune"]
