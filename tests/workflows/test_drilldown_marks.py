"""The drill-down marks a snippet's matching words once for both formats, then each format escapes the
snippet in one call: the same HTML and Markdown as marking word by word with each format's escape
(:func:`rankscope.retrieval.snippets.highlight`), whatever markup or mark characters the text holds."""

from __future__ import annotations

import html
import random
import re

import pandas as pd

from rankscope.reporting.tables import md_escape
from rankscope.retrieval.snippets import highlight
from rankscope.workflows.diagnose.drilldown import MARKS, RESULT_COLUMNS, _by_query, _marked, _marks_put

PIECES = ["retrieval", "x_y", "_lead", "trail_", "__", "*", "<b>", "&amp;", "|", "[a](b)", "`", "~", "é", "42"]
GLUE = [" ", ", ", "", "\\", "_"]


def test_snippets_marked_once_equal_marking_each_format_word_by_word() -> None:
    rng = random.Random(7)
    snippets = [
        "".join(rng.choice(PIECES + [*MARKS] * (i % 7 == 0)) + rng.choice(GLUE) for _ in range(rng.randint(0, 14)))
        for i in range(500)
    ]
    matched = [" ".join(sorted({w for w in re.findall(r"\w+", s) if rng.random() < 0.5})) for s in snippets]
    top = pd.DataFrame(
        {
            "query_id": "q",
            "rank": range(1, len(snippets) + 1),
            "doc_id": [f"d{i}" for i in range(len(snippets))],
            "grade": 0,
            "title": "",
            "snippet": snippets,
            "matched": matched,
        }
    )
    rows = _by_query(_marks_put(top), ["query_id", *RESULT_COLUMNS])["q"]
    assert sum(any(m in s for m in MARKS) for s in snippets) > 20  # some texts hold the marks themselves
    for before, after, escape in (("<mark>", "</mark>", html.escape), ("**", "**", md_escape)):
        expected = [highlight(s, m.split(), before, after, escape) for s, m in zip(snippets, matched)]
        assert [row[-1] for row in _marked(rows, before, after, escape)] == expected
        assert [row[:-1] for row in _marked(rows, before, after, escape)] == [row[:-1] for row in rows]
