"""What of a judge's reply is kept: the API key scrubbed out in every spelling, and a bounded length.

Every text a judge keeps or lets out (an ``ok`` or ``invalid`` reply, a body that was no chat
completion, a failed call's reason) passes through one :class:`KeptText` before it becomes a
:class:`~rankscope.judging.base.Judgment`'s ``raw``: that is what the cache stores, ``export`` writes
into the labels JSONL, and the failure warnings, ``summary.json`` and the report quote. A server that
echoes the request (a gateway, a model asked to repeat its input) can quote the ``Authorization``
header, plain or base64-encoded (Basic authentication, a header dump); all of these become ``***``.

Base64 of a text holding the key encodes the key's bytes differently depending on where the key
falls in a 3-byte group, so each of the three alignments is scrubbed: the run of base64 characters
that encodes only the key's bytes (``key[i:]`` for i = 0, 1, 2, cut to whole groups), standard and
URL-safe. A run shorter than :data:`SHORTEST_CODED` is left alone (it would match unrelated text);
a key of fewer than 8 bytes has none that long, and is scrubbed only as itself.

Replies are kept to :data:`MAX_KEPT_CHARS` characters with a note of how many more there were: the
label is read from the whole reply first, so nothing but the archive is cut (8 replies of 10 MB
made an 80 MB cache).
"""

from __future__ import annotations

import base64
import urllib.parse

MAX_KEPT_CHARS = 4000
"""Characters of a reply kept (in the cache, the JSONL, the warnings); a judge's reply is a few lines."""
SHORTEST_CODED = 8
"""The shortest base64 run of the key that is scrubbed (8 characters encode 6 of its bytes)."""
MASK = "***"


class KeptText:
    """``kept(text)``: ``text`` with ``secret`` scrubbed out in every spelling, cut to :data:`MAX_KEPT_CHARS`."""

    def __init__(self, secret: str = "") -> None:
        self._spellings = _spellings(secret) if secret else []

    def scrub(self, text: str) -> str:
        """``text`` with each spelling of the secret replaced by ``***`` (longest first)."""
        for spelling in self._spellings:
            text = text.replace(spelling, MASK)
        return text

    def __call__(self, text: str) -> str:
        text = self.scrub(text)
        if len(text) <= MAX_KEPT_CHARS:
            return text
        return f"{text[:MAX_KEPT_CHARS]} [... {len(text) - MAX_KEPT_CHARS:,} more characters not kept]"


def _spellings(secret: str) -> list[str]:
    """The secret, its URL-quoted form, and the base64 runs that encode only its bytes (see the module)."""
    raw = secret.encode("utf-8")
    found = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}
    for start in range(3):
        part = raw[start:]
        whole = part[: len(part) - len(part) % 3]
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            coded = encode(whole).decode("ascii")
            if len(coded) >= SHORTEST_CODED:
                found.add(coded)
    return sorted(found, key=len, reverse=True)
