"""``diagnose``: where each relevant document went (found, ranking loss, recall loss) and why.

The room holds the workflow (:mod:`.workflow`) and its parts: first ranks and cutoffs (:mod:`.misses`),
headroom of a perfect reranker (:mod:`.headroom`), why recall failed (:mod:`.recall_failures`), the
sampled protocol (:mod:`.sampling`), findings (:mod:`.findings`) and the drill-down with snippets
(:mod:`.drilldown`, :mod:`.snippets`). Only the names below are public.
"""

import warnings

from rankscope.workflows.diagnose.workflow import DiagnoseResult, diagnose, diagnose_runs

__all__ = ["DiagnoseResult", "diagnose", "diagnose_runs"]


def __getattr__(name: str) -> object:
    """``System``, the run :func:`diagnose_runs` took before it took
    :class:`~rankscope.workflows.common.systems.SystemRun` (the same fields, in the same order)."""
    if name == "System":
        from rankscope.workflows.common.systems import SystemRun

        warnings.warn("rankscope.workflows.diagnose.System is deprecated; use SystemRun", DeprecationWarning, 2)
        return SystemRun
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
