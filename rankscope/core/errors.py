"""Exceptions every rankscope package raises, so callers can catch one base class."""

from __future__ import annotations

from os import PathLike


def duplicate_message(what: str, key: object, first_line: int | None = None) -> str:
    """The one wording of a refused repeat, e.g. ``duplicate query, document 'q1', 'd1' (first at line 3)``.

    Every reader, writer and table check that refuses a repeated key words it so
    (``key`` a tuple for a compound key); callers put where it was found in front.
    """
    shown = ", ".join(map(repr, key)) if isinstance(key, tuple) else repr(key)
    return f"duplicate {what} {shown}" + ("" if first_line is None else f" (first at line {first_line})")


class RankscopeError(Exception):
    """Base class: a problem with the user's input or request, reported in one clear line."""


class FormatError(RankscopeError, ValueError):
    """A file does not follow its format. Names the file, the line and what was expected."""

    def __init__(self, path: str | PathLike[str] | None, line: int | None, problem: str) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.problem = problem
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {problem}")


class SchemaError(RankscopeError, ValueError):
    """A table lacks required columns or holds values of the wrong kind."""


class NotFittedError(RankscopeError, RuntimeError):
    """A retriever was asked to search or save before ``index()`` was called."""


class DatasetNotFoundError(RankscopeError, FileNotFoundError):
    """A named collection could not be found locally nor downloaded."""


class EnvironmentValueError(RankscopeError, ValueError):
    """An environment variable rankscope reads holds a value it cannot use (named in the message)."""


class ParameterError(RankscopeError, ValueError):
    """A parameter (of a retriever, a metric family or a public function) was given a name it does
    not have or a value it does not allow (``rankscope.core.params``); the message names both and
    what is allowed."""
