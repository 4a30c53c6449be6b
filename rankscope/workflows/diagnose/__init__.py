"""``diagnose``: where each relevant document went (found, ranking loss, recall loss) and why.

Two doors: :mod:`.workflow` computes, :mod:`.result` presents (the result's text, plain data, tables and
report). The workflow's parts: first ranks and cutoffs (:mod:`.misses`), headroom of a perfect reranker
(:mod:`.headroom`), why recall failed (:mod:`.recall_failures`), the sampled protocol (:mod:`.sampling`),
findings (:mod:`.findings`) and the drill-down with snippets (:mod:`.drilldown`). Only the names below
are public.
"""

from rankscope.workflows.diagnose.result import DiagnoseResult
from rankscope.workflows.diagnose.workflow import diagnose, diagnose_runs

__all__ = ["DiagnoseResult", "diagnose", "diagnose_runs"]
