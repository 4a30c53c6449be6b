"""``rag``: which chunking and which retriever put the evidence into a language model's context.

Two doors: :mod:`.workflow` computes, :mod:`.result` presents (the result's text, plain data, tables and
report). The workflow's parts: one chunking x retriever scored against the token budgets
(:mod:`.scoring`) and the findings (:mod:`.findings`). Only the names below are public; ``rag`` the
function is ``rankscope.workflows.rag.rag`` (and ``rs.rag``).
"""

from rankscope.workflows.rag.result import RagResult
from rankscope.workflows.rag.workflow import Answers, Budgets, rag

__all__ = ["Answers", "Budgets", "RagResult", "rag"]
