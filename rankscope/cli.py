"""The ``rankscope`` command: one entry point, sub-commands contributed by each package.

Each module in :data:`COMMANDS` defines ``register(subparsers)``, which
adds its sub-command and sets ``func`` (taking the parsed args, returning an
exit code). User errors (:class:`RankscopeError`, missing files) print one line
on stderr and exit 2 (or the error's own ``exit_code``: 3 when every call to a judge
failed, :class:`rankscope.judging.base.JudgeFailedError`), as do other operating-system
errors (a file that cannot be read or written); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn

from rankscope.core.errors import RankscopeError
from rankscope.core.invocation import command_line
from rankscope.core.lazy import LateParser
from rankscope.core.notices import set_verbose
from rankscope.core.progress import set_quiet
from rankscope.core.version import __version__

COMMANDS: dict[str, str] = {
    "datasets": "rankscope.corpora.cli",
    "evaluate": "rankscope.workflows.cli.evaluate",
    "search": "rankscope.retrieval.cli",
    "index": "rankscope.retrieval.cli",
    "retrievers": "rankscope.retrieval.cli",
    "engines": "rankscope.retrieval.engines.cli",
    "compare": "rankscope.workflows.cli.compare",
    "poolbias": "rankscope.workflows.cli.poolbias",
    "gate": "rankscope.workflows.cli.gate",
    "tune": "rankscope.workflows.cli.tune",
    "diagnose": "rankscope.workflows.cli.diagnose",
    "rag": "rankscope.workflows.cli.rag",
    "judge": "rankscope.workflows.cli.judge",
    "collection": "rankscope.workflows.cli.collection",
    "label": "rankscope.workflows.cli.label",
    "judges": "rankscope.judging.cli",
}
"""Each sub-command and the module that registers it: a command line naming one imports only that
module, so a one-line error (a bad spec, a missing file) comes back without loading the rest."""


VERBOSE_HELP = "print notes too (a known collection's handled quirks)"


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: only its sub-command's module when it names one, else all of them (help).
    Each sub-command's parser is a :class:`LateParser`: a workflow command imports its workflow once the
    line has parsed (or for its help), not here."""
    parser = LateParser(
        prog="rankscope",
        description="Compare retrievers, tune BM25 and diagnose recall vs ranking gaps.",
    )
    parser.add_argument("--version", action="version", version=f"rankscope {__version__}")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    words = sys.argv[1:] if argv is None else list(argv)
    named = [word for word in words if word in COMMANDS][:1]
    if named:
        modules = [COMMANDS[named[0]]]
    elif "--version" in words:
        modules = []  # the version needs no command module
    else:
        modules = list(dict.fromkeys(COMMANDS.values()))  # `rankscope --help` lists them all
    for module in modules:
        importlib.import_module(module).register(subparsers)
    _accept_hub_flags_after(parser)
    return parser


def _accept_hub_flags_after(parser: argparse.ArgumentParser) -> None:
    """Give every (nested) sub-command ``--quiet`` and ``--verbose``, so ``rankscope evaluate --quiet ...``
    works as ``rankscope --quiet evaluate ...`` does; SUPPRESS keeps the hub's value when they are absent."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                command.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars")
                command.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP)
                _accept_hub_flags_after(command)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(argv).parse_args(argv)
    if args.quiet:
        set_quiet(True)
    set_verbose(bool(getattr(args, "verbose", False)))
    try:
        with warnings.catch_warnings(), command_line(sys.argv[1:] if argv is None else argv):
            warnings.showwarning = _one_line(args.command)
            return int(args.func(args) or 0)
    except (RankscopeError, FileNotFoundError) as exc:
        print(f"rankscope {args.command}: error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush is quiet
        return 141
    except OSError as exc:  # unreadable, a directory where a file belongs, disk full: the user's to fix
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"rankscope {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def run() -> NoReturn:
    """The ``rankscope`` program (console script and ``python -m rankscope.cli``): :func:`main`, then
    :func:`leave`."""
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with ``code`` without tearing the interpreter down: with pandas and scipy loaded,
    Python's own finalization (freeing every module and object one by one) took 0.25-0.4 s of every
    command's wall time (docs/speed.md). Exit handlers run and the output is flushed first, so nothing a
    normal exit does is skipped but the freeing; while a thread a library started still runs, the exit is
    the normal one, which waits for it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away after the last write: as main() ends on a closed pipe
        code = 141
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a pipe gone, or closed: nothing more can be said to it
            pass
    os._exit(code)


def _one_line(command: str) -> Callable[..., None]:
    """Warnings as one line each, like errors (Python's default adds the file and source line of
    the warn() call, which tell a user nothing)."""

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(f"rankscope {command}: warning: {message}", file=sys.stderr)

    return show


if __name__ == "__main__":
    run()
