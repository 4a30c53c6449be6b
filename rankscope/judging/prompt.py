"""The graded 0-3 relevance prompt rankscope's LLM judges send, and the strict reader of their replies.

The prompt is rankscope's own wording, laid out after the published structure of UMBRELA's
(Upadhyay, Pradeep, Thakur, Craswell and Lin, "UMBRELA: UMbrela is the (Open-Source
Reproduction of the) Bing RELevance Assessor", arXiv:2406.06519, 2024): the four grades
defined, then the steps an assessor takes (the query's intent, how well the passage matches it,
how trustworthy it is), then one final-score line in a fixed form. It is versioned and hashed:
:data:`PROMPT_HASH` enters every LLM judge's identity, so editing a word keys new labels instead
of mixing them with the old ones in the cache.

:func:`parse_label` is strict on purpose: a reply that does not state one grade 0-3 is
``invalid`` (kept with its raw text and counted), never read as 0, which would bias every
estimate towards "not relevant" by however often the model rambles.
"""

from __future__ import annotations

import hashlib
import re

PROMPT_VERSION = "rankscope-graded-1"

SYSTEM = "You are a careful search quality rater. You grade how relevant a passage is to a search query."

TEMPLATE = """Grade the passage below for the query on this scale:
3 = the passage is about the query and holds the exact answer or the information sought;
2 = the passage holds some of the answer, but it is partial, unclear or buried in other material;
1 = the passage is on the query's topic but does not answer it;
0 = the passage has nothing to do with the query.

Query: {query}

Passage: {document}

Work through these steps silently:
1. What does the person searching most likely want (the query's intent)?
2. How well does the passage's content match that intent?
3. How trustworthy is the passage as a source for it?
4. Weigh the three and settle on one grade.

Reply with the grade alone on a last line in exactly this form, with no explanation:
Final score: <0, 1, 2 or 3>"""

FINAL_SCORE_GRAMMAR = 'root ::= "Final score: " [0-3]'
"""llama.cpp's GBNF for the reply the template asks for and nothing else (``openai:...,grammar=1``): a
small model that would answer in prose can then only state a grade, which :func:`parse_label` reads
like any reply (a reply cut short by ``max_tokens`` is still ``invalid``)."""

PROMPT_HASH = hashlib.sha256(f"{PROMPT_VERSION}\n{SYSTEM}\n{TEMPLATE}".encode()).hexdigest()[:16]
"""The first 16 hex digits of the SHA-256 of version, system message and template."""


def messages(query: str, document: str) -> list[dict[str, str]]:
    """The chat messages for one pair (the texts are put in as they are; nothing is truncated)."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEMPLATE.format(query=query, document=document)},
    ]


_NOT_A_WHOLE_GRADE = r"(?![0-9]|\s*[.,/:]\s*[0-9]|\s*[-\u2010-\u2015~]\s*[0-9]|\s+(?:to|or|and)\s+[0-9])"
"""What may not follow a grade's digits: more digits of a decimal (``2.5``, ``2,5``), a range (``1-2``,
``1 to 2``), a fraction (``2/3``) or a second grade (``1 or 2``): each is no single grade 0-3."""
FINAL_SCORE_LINE = re.compile(
    rf"^[\W_]*final[ _-]*score[\W_]*?[:=][ \t*#]*([0-9]+){_NOT_A_WHOLE_GRADE}", re.IGNORECASE | re.MULTILINE
)
"""A ``Final score: N`` line as a reply states it (any case, markdown marks around it, ``=`` for ``:``);
:mod:`rankscope.judging.injection` looks for the same line in documents."""
_BARE = re.compile(r"^\s*([0-9]+)\s*\.?\s*$")


def parse_label(reply: str) -> int | None:
    """The grade a reply states, or None when it states none, several, or one outside 0-3.

    Accepted: a ``Final score: N`` line (any case, markdown marks around it, ``=`` for ``:``),
    or a reply that is nothing but the number. Two final-score lines that disagree are no answer,
    and so is a number that is not one whole grade (``2.5``, ``0.9``, ``2,5``, ``1-2``, ``2/3``: the
    scale has no halves, and reading their first digit would round every one of them down).
    """
    found = {int(n) for n in FINAL_SCORE_LINE.findall(reply)}
    if not found:
        bare = _BARE.match(reply)
        found = {int(bare.group(1))} if bare else set()
    if len(found) != 1:
        return None
    (label,) = found
    return label if 0 <= label <= 3 else None
