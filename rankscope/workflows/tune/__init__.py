"""``tune``: retriever parameters chosen by cross-validation over queries, with an error bar.

The room holds the workflow (:mod:`.workflow`) and its parts: grids (:mod:`.grid`), folds
(:mod:`.crossval`), model-based search (:mod:`.model_search`) and the gain's test (:mod:`.gain`).
Only the names below are public.
"""

from rankscope.workflows.tune.workflow import TuneResult, tune

__all__ = ["TuneResult", "tune"]
