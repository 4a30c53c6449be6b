"""``rankscope judge``: relevance labels for the pooled holes of a dataset's judgments (docs/judges.md)."""

from rankscope.workflows.judge.result import JudgeResult
from rankscope.workflows.judge.workflow import Study, check_arguments, given_judge, judge

__all__ = ["JudgeResult", "Study", "check_arguments", "given_judge", "judge"]
