"""Every command's --help is plain text for a terminal: no reStructuredText markup (the module
docstrings that double as descriptions once showed ````rankscope collection ACTION DIR````) and no dated
changelog phrases ("since 26 Nov 2026"), which belong in CHANGELOG.md."""

from __future__ import annotations

import argparse
import re

import pytest

from rankscope.cli import COMMANDS, build_parser

DATE = re.compile(r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b|\b\d{4}-\d{2}-\d{2}\b")


def helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The help of ``parser`` and of each (nested) sub-command below it, by program name."""
    pages = {parser.prog: parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                pages.update(helps(sub))
    return pages


def command_helps(command: str) -> dict[str, str]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return helps(sub.choices[command])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_has_no_rst_markup_nor_dates(command: str) -> None:
    pages = command_helps(command)
    assert pages  # the command and its sub-commands
    for prog, text in pages.items():
        assert "``" not in text, f"{prog} --help shows RST markup: {text}"
        assert ":func:" not in text and ":class:" not in text, prog
        assert not DATE.search(text), f"{prog} --help holds a date: {DATE.search(text)}"


def test_top_level_help_is_plain() -> None:
    text = build_parser([]).format_help()
    assert "compare" in text and "``" not in text and not DATE.search(text)


def test_the_check_sees_descriptions() -> None:
    """The pages checked hold the descriptions (where the RST came from), not only the usage lines."""
    pages = command_helps("collection")
    assert any("build a test collection from a folder" in page for page in pages.values())
    assert any("--figure-format" in page for page in command_helps("compare").values())
