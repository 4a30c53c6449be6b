"""Judge spec strings, read strictly: ``openai:model=M,base_url=U`` and ``qrels[:PATH][,flip=F,seed=S]``.

A spec is ``kind:key=value,...`` as retriever specs are (``bm25:k1=0.9``); ``qrels`` takes the
file's path as its first item (a path with a comma cannot be given this way: use
:class:`~rankscope.judging.qrels_judge.QrelsJudge` from Python). Every mistake (an unknown kind or
option, an option given twice, a missing required one, a value of the wrong type or range) is a
one-line :class:`~rankscope.judging.base.JudgeError` naming the spec and saying what is allowed.
A Python function is a judge through :class:`~rankscope.judging.callable_judge.CallableJudge`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankscope.judging.base import Judge, JudgeError
from rankscope.judging.endpoint import checked_base_url

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Option:
    """One ``key=value`` a judge kind takes: its type, default (None: required), lowest and highest
    value, and a ``check`` raising ``ValueError`` (its message said) for a value no request could use."""

    name: str
    kind: type
    default: Any
    low: float | None = None
    high: float | None = None
    check: Callable[[str], object] | None = None

    def read(self, text: str, spec: str) -> Any:
        value: Any
        try:
            value = self.kind(text) if self.kind is not str else text
        except ValueError:
            value = None
        numeric = self.kind in (int, float) and value is not None
        if (
            value is None
            or (self.kind is str and not value)
            or (numeric and not math.isfinite(value))
            or (numeric and self.low is not None and value < self.low)
            or (numeric and self.high is not None and value > self.high)
        ):
            raise JudgeError(
                f"judge spec {spec!r}: {self.name}={text} is not allowed; {self.name} must be {self.allowed()}"
            )
        if self.check is not None:
            try:
                self.check(value)
            except ValueError as exc:
                raise JudgeError(f"judge spec {spec!r}: {exc}") from None
        return value

    def allowed(self) -> str:
        what = {int: "an integer", float: "a number", str: "a non-empty string"}[self.kind]
        if self.low is not None or self.high is not None:
            what += (
                f" in [{self.low if self.low is not None else '-inf'}, {self.high if self.high is not None else 'inf'}]"
            )
        return what


OPTIONS: dict[str, tuple[Option, ...]] = {
    "openai": (
        Option("model", str, None),
        Option("base_url", str, "https://api.openai.com/v1", check=checked_base_url),
        Option("key_env", str, ""),
        Option("temperature", float, 0.0, low=0.0, high=2.0),
        Option("seed", int, 0),
        Option("max_tokens", int, 64, low=1),
        Option("concurrency", int, 4, low=1, high=256),
        Option("timeout", float, 60.0, low=0.001),
        Option("retries", int, 5, low=0, high=100),
        Option("grammar", int, 0, low=0, high=1),
    ),
    "qrels": (
        Option("path", str, ""),
        Option("flip", float, 0.0, low=0.0, high=1.0),
        Option("seed", int, 0),
    ),
}
"""Each kind's options, in the order ``rankscope judge --help`` lists them; the first of ``qrels`` may come bare."""


def parse_judge_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The kind and the typed options (defaults filled in) of a judge spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise JudgeError(f"judge spec must be a non-empty string like 'openai:model=M,base_url=U', got {spec!r}")
    kind, _, rest = spec.strip().partition(":")
    if kind not in OPTIONS:
        raise JudgeError(f"judge spec {spec!r}: unknown judge {kind!r}; known: {', '.join(OPTIONS)}")
    table = {option.name: option for option in OPTIONS[kind]}
    given: dict[str, str] = {}
    for position, item in enumerate(rest.split(",") if rest.strip() else []):
        key, eq, value = item.partition("=")
        if not eq and position == 0 and kind == "qrels":
            key, value = "path", item
        elif not eq:
            raise JudgeError(f"judge spec {spec!r}: expected key=value, got {item!r}")
        key = key.strip()
        if key not in table:
            raise JudgeError(f"judge spec {spec!r}: {kind} has no option {key!r}; known: {', '.join(table)}")
        if key in given:
            raise JudgeError(f"judge spec {spec!r}: option {key!r} given twice")
        given[key] = value.strip()
    missing = [name for name, option in table.items() if option.default is None and name not in given]
    if missing:
        raise JudgeError(f"judge spec {spec!r}: {kind} needs {', '.join(f'{name}=...' for name in missing)}")
    return kind, {
        name: option.read(given[name], spec) if name in given else option.default for name, option in table.items()
    }


def make_judge(spec: str, dataset_qrels: pd.DataFrame | None = None) -> Judge:
    """The judge a spec describes, e.g. ``make_judge("qrels:cisi/qrels.txt,flip=0.2,seed=1")``; a ``qrels``
    spec without a path answers from ``dataset_qrels`` (the judge workflow passes the dataset's own)."""
    kind, options = parse_judge_spec(spec)
    if kind == "openai":
        from rankscope.judging.openai_judge import OpenAIJudge

        return OpenAIJudge(options.pop("model"), options.pop("base_url"), **options)
    from rankscope.judging.qrels_judge import QrelsJudge

    path = options.pop("path")
    if path:
        return QrelsJudge.from_file(path, **options)
    if dataset_qrels is None:
        raise JudgeError(
            f"judge spec {spec!r}: give the qrels file (qrels:PATH); only rankscope judge has a dataset's own"
        )
    return QrelsJudge(dataset_qrels, **options)
