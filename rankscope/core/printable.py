"""Text from users' files made safe to print on a terminal: no escape sequence of a title can act.

A document title holding ``ESC ] 0 ; ... BEL`` renames the terminal window, ``ESC [ 2 J`` clears the
screen, a carriage return or backspaces overwrite what was printed before it, and the bidirectional
overrides (U+202E ...) show text in another order than it is stored. :func:`printable` removes whole
ANSI escape sequences (CSI, OSC and two-character ones) and shows every other control character as
U+FFFD, so the reader sees that something was there; tabs and line breaks become spaces (a cell or a
title is one line). Files keep the text as it is: only what goes to the terminal is changed.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clearing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks (ended by BEL or ST)
    r"|\x1b[ -/]*[0-~]"  # two-character escapes (ESC c resets the terminal)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SPACES = re.compile("[\t\n\r]")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences, its other control characters shown as U+FFFD."""
    if text.isprintable():  # the common case, in one pass of C
        return text
    return _CONTROLS.sub("\ufffd", _SPACES.sub(" ", _ESCAPES.sub("", text)))
