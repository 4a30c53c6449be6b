"""``compare``: which system is better, on which metric, and is it significant?

Two doors: :mod:`.workflow` computes, :mod:`.result` presents (the result's text, plain data, tables,
LaTeX and report). Compare with judgments (a judge's pool, a human sample's intervals): :mod:`.judging`.
Only the names below are public.
"""

from rankscope.workflows.compare.result import CompareResult
from rankscope.workflows.compare.workflow import compare

__all__ = ["CompareResult", "compare"]
