"""``tune``: retriever parameters chosen by cross-validation over queries, with an error bar.

Two doors: :mod:`.workflow` computes, :mod:`.result` presents (the result's text, plain data, tables and
report). The workflow's parts: grids (:mod:`.grid`), folds (:mod:`.crossval`), model-based search
(:mod:`.model_search`), the gain's test (:mod:`.gain`) and a framework retriever's parameters
(:mod:`.framework_params`). Only the names below are public.
"""

from rankscope.workflows.tune.result import TuneResult
from rankscope.workflows.tune.workflow import tune

__all__ = ["TuneResult", "tune"]
