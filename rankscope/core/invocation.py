"""How rankscope was invoked: the command line the CLI hub ran, for the provenance of reports.

The hub (:func:`rankscope.cli.main`) runs each command inside :func:`command_line`; a
workflow called from Python sees ``None`` (its provenance then says so). A context
variable, not a global: nested or concurrent calls never see another call's command.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

_COMMAND: ContextVar[str | None] = ContextVar("rankscope_command_line", default=None)


@contextmanager
def command_line(argv: Sequence[str]) -> Iterator[None]:
    """Inside the block, :func:`current` is ``rankscope <argv>`` (shell-quoted, as typed)."""
    token = _COMMAND.set(shlex.join(["rankscope", *argv]))
    try:
        yield
    finally:
        _COMMAND.reset(token)


def current() -> str | None:
    """The command line being run, or None outside the CLI."""
    return _COMMAND.get()
