"""A judge that is a Python function ``f(query, document)``: a stub in tests, a custom model, a rule.

The function returns a label (an int 0-3) or a reply text, which is read by the same strict
parser as an LLM's (:func:`rankscope.judging.prompt.parse_label`). An exception it raises is a
``failed`` judgment carrying the exception's text, not a crash of the whole run. Its identity is
the name and version given (by default the function's qualified name): change the version when
the function changes, or the cache will answer with the old function's labels.
"""

from __future__ import annotations

from collections.abc import Callable

from rankscope.judging.base import FAILED, INVALID, LABELS, OK, Judge, JudgeIdentity, Judgment, Pair
from rankscope.judging.prompt import parse_label


class CallableJudge(Judge):
    """Calls ``function(query, document)`` once per pair, in order."""

    def __init__(self, function: Callable[[str, str], int | str], *, name: str | None = None, version: str = "1"):
        self.function = function
        model = name or f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"
        self.identity = JudgeIdentity(kind="callable", model=model, prompt_version=version)

    def ask(self, pair: Pair) -> Judgment:
        try:
            answer = self.function(pair.query, pair.document)
        except Exception as exc:  # the judge's failure is recorded per pair, as a server's would be
            return Judgment(None, FAILED, f"{type(exc).__name__}: {exc}")
        if isinstance(answer, str):
            label = parse_label(answer)
            return Judgment(None, INVALID, answer) if label is None else Judgment(label, OK, answer)
        if isinstance(answer, int) and not isinstance(answer, bool) and answer in LABELS:
            return Judgment(int(answer), OK, str(answer))
        return Judgment(None, INVALID, repr(answer))
