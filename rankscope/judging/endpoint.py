"""The one rule for a judge server's base URL, applied when a judge spec is read and when a client is made.

A URL that cannot be right is refused in one line before any request: a scheme other than http or
https, no host, a port outside 1-65535 (``port=99999`` reached urllib3 as an ``OverflowError``-prone
value) and any whitespace or control character (a space, or a CR-LF that would split the request
line and smuggle a header). Kept apart from :mod:`rankscope.judging.chat_http` so reading a spec
does not load urllib3.
"""

from __future__ import annotations

import urllib.parse


def checked_base_url(url: str) -> str:
    """``url`` without its trailing ``/``; a ``ValueError`` saying what is wrong with it otherwise."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise ValueError(f"base_url must not hold spaces or control characters, got {url!r}")
    parts = urllib.parse.urlsplit(url.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http:// or https:// URL, got {url!r}")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"base_url has a port outside 1-65535 or not a number, got {url!r}")
    return parts.geturl()


def host_and_port(url: str) -> str:
    """``host:port`` of a checked base URL (the scheme's port when none is given), as failures name it."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
