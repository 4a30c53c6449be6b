"""A workflow command, declared once: its options, how the parsed arguments become the workflow's
call, and an example; registering it adds it to the ``rankscope`` hub.

Each command module (one file per command in this folder) defines ``COMMAND`` and
``register = COMMAND.register``; :data:`rankscope.cli.COMMANDS` names the module. An option that
stands for a workflow parameter names it (:attr:`Option.parameter`) and shows that parameter's
default, read from the function's signature, never retyped. The CLI contract tests
(``tests/test_cli_contract.py``) loop over the command table and check every command that has a
``COMMAND``: defaults, ``--strict`` and the dataset's warnings, ``--quiet``, ``--out`` checks and
one-line errors, so a new command is checked without being added to any list.

A command prints its result before writing its folder: the folder is checked first (a mistyped
``--out`` fails before any computing), the workflow runs without it, the result is shown, and
:func:`rankscope.reporting.finish.finish` writes the files.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from rankscope.core import forked
from rankscope.core.outputs import check_output_folder
from rankscope.core.phases import phase
from rankscope.corpora.cli import load_reported
from rankscope.reporting.finish import Finished, finish
from rankscope.reporting.plots import FIGURE_MODULES
from rankscope.reporting.tables import to_json
from rankscope.workflows.options import flat_defaults

OUT_HINT = "add --out DIR for report.html (figures, every table) and the tables as CSV files"
"""The last line a command prints without ``--out``: where the rest of its output is."""


def defaults(function: Callable[..., object]) -> dict[str, Any]:
    """A function's parameter defaults by name, options objects' fields included (``seed`` of
    ``execution=Execution()``): the CLI's defaults are read here, never retyped."""
    return flat_defaults(function)


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
    """

    flags: tuple[str, ...]
    help: str | Callable[[Mapping[str, Any]], str]
    parameter: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    applies: bool = True

    def add(self, parser: argparse.ArgumentParser, given: Mapping[str, Any]) -> None:
        settings = dict(self.settings)
        help = self.help(given) if callable(self.help) else self.help
        if self.parameter is not None:
            default = given[self.parameter]
            listed = isinstance(default, (tuple, list))
            help = help.replace("{default}", " ".join(map(str, default)) if listed else str(default))
            if self.applies:
                settings["default"] = list(default) if listed else default
        parser.add_argument(*self.flags, help=help, **settings)


@dataclass(frozen=True)
class Added:
    """Options a lower package declares with an ``add_*(parser)`` function (``--strict``, ``--fields``, ...)."""

    add_to: Callable[[argparse.ArgumentParser], None]

    def add(self, parser: argparse.ArgumentParser, given: Mapping[str, Any]) -> None:
        self.add_to(parser)


Call = Callable[[argparse.Namespace, Callable[..., Finished]], Finished]
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

    def function(self) -> Callable[..., Any]:
        module, _, name = self.workflow.partition(":")
        return getattr(importlib.import_module(module), name)

    def register(self, subparsers: argparse._SubParsersAction) -> None:
        """Add the command to the ``rankscope`` hub's sub-commands."""
        from rankscope.workflows.cli.options import common

        function = self.function()
        given = defaults(function)
        parser = subparsers.add_parser(
            self.name,
            help=self.help,
            description=self.help,
            epilog=f"example: rankscope {self.name} --dataset DATASET {' '.join(self.example)}".rstrip(),
        )
        for option in (*common(self.formats), *self.options):
            option.add(parser, given)
        parser.set_defaults(func=partial(self.run, function))

    def run(self, function: Callable[..., Any], args: argparse.Namespace) -> int:
        """Check ``--out``, run the workflow, print its result, then write its folder."""
        out = None if args.out is None else check_output_folder(args.out)  # before any computing
        if out is None:
            return present(self.call(args, function), args, out)
        forked.warm(FIGURE_MODULES)  # the figures' imports on the second core while the workflow computes
        try:
            return present(self.call(args, function), args, out)
        finally:
            forked.cool()  # a child given no work (the workflow failed) goes


@phase("report")
def present(result: Finished, args: argparse.Namespace, out: Path | None) -> int:
    """Print ``result`` in ``args.format``, then write its folder to ``out`` (checked before computing)."""
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
