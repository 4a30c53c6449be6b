"""A workflow command, declared once: its options, how the parsed arguments become the workflow's
call, and an example; registering it adds it to the ``rankscope`` hub.

Each command module (one file per command in this folder) defines ``COMMAND`` and
``register = COMMAND.register``; :data:`rankscope.cli.COMMANDS` names the module. An option that
stands for a workflow parameter names it (:attr:`Option.parameter`) and shows that parameter's
default, read from the function's signature, never retyped. The CLI contract tests
(``tests/test_cli_contract.py``) loop over the command table and check every command that has a
``COMMAND``: defaults, ``--strict`` and the dataset's warnings, ``--quiet``, ``--out`` checks and
one-line errors, so a new command is checked without being added to any list.

Building the parser imports no workflow: the defaults shown and applied, and settings held by heavy
modules (:class:`~rankscope.core.lazy.Late`), are read once the command line has parsed
(:class:`~rankscope.core.lazy.LateParser`), so a mistyped option is refused at once
(``tests/test_layers.py``).

A command prints its result before writing its folder: the folder is checked first (a mistyped
``--out`` fails before any computing), the workflow runs without it, the result is shown, and
:func:`rankscope.reporting.finish.finish` writes the files.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rankscope.core import forked
from rankscope.core.lazy import Late, LateParser, imported
from rankscope.core.outputs import check_output_folder
from rankscope.core.phases import phase
from rankscope.corpora.cli import load_reported

if TYPE_CHECKING:
    from rankscope.reporting.finish import Finished

OUT_HINT = "add --out DIR for report.html (figures, every table) and the tables as CSV files"
"""The last line a command prints without ``--out``: where the rest of its output is."""


def defaults(function: Callable[..., object]) -> dict[str, Any]:
    """A function's parameter defaults by name, options objects' fields included (``seed`` of
    ``execution=Execution()``): the CLI's defaults are read here, never retyped."""
    from rankscope.workflows.options import flat_defaults

    return flat_defaults(function)


class Defaults(Mapping[str, Any]):
    """A workflow's :func:`defaults`, read on the first look-up: importing the workflow loads pandas."""

    def __init__(self, function: Callable[[], Callable[..., object]]) -> None:
        self._function = function

    @cached_property
    def _values(self) -> dict[str, Any]:
        return defaults(self._function())

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class Adds(Protocol):
    """Something that adds its option(s) to a command's parser, given the workflow's defaults."""

    def add(self, parser: argparse.ArgumentParser, given: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class Option:
    """One option: flags, help, the workflow parameter whose default it takes (None: argparse's own
    ``default`` in ``settings``, if any) and argparse's other settings (type, nargs, choices, ...).

    ``{default}`` in the help is the parameter's default as typed on a command line; a help that
    depends on other defaults is a function of them all. An option whose
    default applies only in some cases (the systems, unless ``--run`` gives them) sets
    ``applies=False``: the help shows the default, the parsed value stays None and the call decides.
    A setting a heavy module holds is a :class:`~rankscope.core.lazy.Late`; it and the defaults are
    set when a :class:`~rankscope.core.lazy.LateParser` settles.
    """

    flags: tuple[str, ...]
    help: str | Callable[[Mapping[str, Any]], str]
    parameter: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    applies: bool = True

    def add(self, parser: argparse.ArgumentParser, given: Mapping[str, Any]) -> None:
        action = parser.add_argument(
            *self.flags, **{key: value for key, value in self.settings.items() if not isinstance(value, Late)}
        )

        def settle() -> None:
            for key, value in self.settings.items():
                if isinstance(value, Late):
                    setattr(action, key, value.value())
            help = self.help(given) if callable(self.help) else self.help
            if self.parameter is not None:
                default = given[self.parameter]
                listed = isinstance(default, (tuple, list))
                help = help.replace("{default}", " ".join(map(str, default)) if listed else str(default))
                if self.applies:
                    action.default = list(default) if listed else default
            action.help = help

        if isinstance(parser, LateParser):
            parser.later(settle)
        else:
            settle()


@dataclass(frozen=True)
class Added:
    """Options a lower package declares with an ``add_*(parser)`` function (``--strict``, ``--fields``, ...)."""

    add_to: Callable[[argparse.ArgumentParser], None]

    def add(self, parser: argparse.ArgumentParser, given: Mapping[str, Any]) -> None:
        self.add_to(parser)


Call = Callable[[argparse.Namespace, Callable[..., "Finished"]], "Finished"]
"""Calls the workflow (the second argument) with the parsed arguments, without ``out``."""


@dataclass(frozen=True)
class Command:
    """A workflow command: ``workflow`` is ``module:function`` (imported when the command is named),
    ``example`` the arguments of a quick run on a small collection (shown in ``--help``)."""

    name: str
    help: str
    workflow: str
    options: tuple[Adds, ...]
    call: Call
    example: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("table", "json")
    details: str = ""
    """More of the command's ``--help`` after its one-line help (gate's exit statuses)."""
    after: Callable[[argparse.Namespace, Any], int] | None = None
    """What the command does once its result is shown and its folder written (gate's CI files); its
    exit status (None: 0)."""

    def function(self) -> Callable[..., Any]:
        return imported(self.workflow)

    def register(self, subparsers: argparse._SubParsersAction) -> None:
        """Add the command to the ``rankscope`` hub's sub-commands (the workflow imported when the parser
        settles: the line parsed, or the help asked for)."""
        from rankscope.workflows.cli.options import common

        given = Defaults(self.function)
        parser = subparsers.add_parser(
            self.name,
            help=self.help,
            description=f"{self.help}. {self.details}" if self.details else self.help,
            epilog=f"example: rankscope {self.name} --dataset DATASET {' '.join(self.example)}".rstrip(),
        )
        for option in (*common(self.formats), *self.options):
            option.add(parser, given)
        parser.set_defaults(func=self.run)

    def run(self, args: argparse.Namespace) -> int:
        """Check ``--out``, run the workflow, print its result, then write its folder."""
        out = None if args.out is None else check_output_folder(args.out)  # before any computing
        function = self.function()
        if out is None:
            return self.ended(args, function, out)
        from rankscope.reporting.rendering import FIGURE_MODULES

        forked.warm(FIGURE_MODULES)  # the figures' imports on the second core while the workflow computes
        try:
            return self.ended(args, function, out)
        finally:
            forked.cool()  # a child given no work (the workflow failed) goes

    def ended(self, args: argparse.Namespace, function: Callable[..., Finished], out: Path | None) -> int:
        """The workflow's result presented, then :attr:`after`'s exit status."""
        result = self.call(args, function)
        status = present(result, args, out)
        return status if self.after is None else self.after(args, result)


@phase("report")
def present(result: Finished, args: argparse.Namespace, out: Path | None) -> int:
    """Print ``result`` in ``args.format``, then write its folder to ``out`` (checked before computing)."""
    from rankscope.reporting.finish import finish
    from rankscope.reporting.tables import to_json

    if args.format == "json":
        print(to_json(result.to_dict()), end="")
    elif args.format == "latex":
        print(result.to_latex(), end="")  # type: ignore[attr-defined]
    else:
        print(result.to_text(), flush=True)
    if out is not None:
        result = finish(result, out, args.figure_format)
        if args.format == "table":
            print(f"\nwrote {len(result.files)} files to {args.out} (open report.html)")
    elif args.format == "table":
        print(f"\n{OUT_HINT}")
    return 0


def loader(args: argparse.Namespace) -> partial:
    """Loads the dataset when the workflow has checked its other arguments, printing the dataset's
    warnings (``--strict``: dangling judgments are an error)."""
    return partial(load_reported, args.dataset, args.command, args.strict, args.fields, args.split)
