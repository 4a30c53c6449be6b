"""``diagnose``: where each relevant document went (found, ranking loss, recall loss) and why.

The room holds the workflow (:mod:`.workflow`) and its parts: first ranks and cutoffs (:mod:`.misses`),
headroom of a perfect reranker (:mod:`.headroom`), why recall failed (:mod:`.recall_failures`), the
sampled protocol (:mod:`.sampling`), findings (:mod:`.findings`) and the drill-down with snippets
(:mod:`.drilldown`, :mod:`.snippets`). Only the names below are public.
"""

from rankscope.workflows.diagnose.workflow import DiagnoseResult, diagnose, diagnose_runs

__all__ = ["DiagnoseResult", "diagnose", "diagnose_runs"]
