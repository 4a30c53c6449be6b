"""Documents out of a team's files: plain text, Markdown, HTML and PDF, each through a well-kept parser.

A file gives one or more :class:`Extracted` texts (a PDF one per page, with the page number) or
raises :class:`Unreadable` with the reason, which ingest lists beside the collection instead of
dropping the file. The parsers are the ``collection`` extra's (pypdf, beautifulsoup4 with the
standard library's HTML parser, markdown-it-py); a missing one names the ``pip install`` to run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import require_extra
from rankscope.workflows.collection.layout import CollectionError

TEXT = (".txt", ".text", ".rst", "")  # a file without a suffix (README, copyright) is read as text
MARKDOWN = (".md", ".markdown")
HTML = (".html", ".htm", ".xhtml")
PDF = (".pdf",)
KINDS = {**dict.fromkeys(TEXT, "text"), **dict.fromkeys(MARKDOWN, "markdown"), **dict.fromkeys(HTML, "html")}
KINDS.update(dict.fromkeys(PDF, "pdf"))
MAX_TEXT_BYTES = 75_000_000
"""The most bytes of text one file may give (after inflating a ``.gz``), pypdf's bound on one inflated
PDF stream: a 1 MB gzip bomb inflating to 1 GB would otherwise become a 1 GB document."""
_DROPPED_TAGS = ("script", "style", "noscript", "template", "nav", "head")
_BLOCK_TAGS = (
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "tr", "pre", "table", "ul", "ol", "dl",
    "section", "article", "blockquote", "header", "footer", "main", "aside", "figure", "br", "hr",
)  # fmt: skip


class Unreadable(RankscopeError):
    """A file that gives no document; the message is the reason listed beside the collection."""


@dataclass(frozen=True)
class Extracted:
    """One document's title and text as read from a file; ``page`` is the PDF page (1-based) or 0."""

    title: str
    text: str
    page: int = 0


@dataclass(frozen=True)
class TextRules:
    """How a file is taken as text: ``suffixes`` read as plain text (``.log``; a known one, ``.md``,
    then keeps its markup), and ``encoding``, the legacy encoding of texts that are not UTF-8
    (``latin-1``; None: such a text is unreadable). A file of any other unknown suffix is read as text
    when it is text: it decodes and holds no NUL (Debian's ``README.Debian``, ``NEWS.Debian.gz``)."""

    suffixes: tuple[str, ...] = ()
    encoding: str | None = None

    def __post_init__(self) -> None:
        for suffix in self.suffixes:
            if not suffix.startswith(".") or len(suffix) < 2 or "/" in suffix or suffix.strip() != suffix:
                raise CollectionError(f"--text-suffixes: {suffix!r} is not a file suffix such as .log")
        object.__setattr__(self, "suffixes", tuple(sorted({suffix.lower() for suffix in self.suffixes})))
        if self.encoding is not None:
            import codecs

            try:
                name = codecs.lookup(self.encoding).name
            except LookupError:
                raise CollectionError(
                    f"--encoding {self.encoding!r}: no such encoding (e.g. latin-1, cp1252)"
                ) from None
            if b"\x00" in "a".encode(name) or "a".encode(name) != b"a":
                raise CollectionError(f"--encoding {self.encoding!r}: not a legacy 8-bit text encoding (e.g. latin-1)")
            object.__setattr__(self, "encoding", name)


def kind_of(path: Path, rules: TextRules = TextRules()) -> str | None:
    """The reader a file's suffix selects (``text``, ``markdown``, ``html``, ``pdf``), or None."""
    suffix = path.suffix.lower()
    return "text" if suffix in rules.suffixes else KINDS.get(suffix)


def most_bytes(path: Path, rules: TextRules = TextRules()) -> int | None:
    """The most bytes of ``path`` worth reading: a text's bound (a ``.gz``'s too), or None for a PDF,
    which pypdf bounds stream by stream."""
    inner = path.with_suffix("") if path.suffix.lower() == ".gz" else path
    return None if kind_of(inner, rules) == "pdf" else MAX_TEXT_BYTES


def extract(path: Path, data: bytes, rules: TextRules = TextRules()) -> list[Extracted]:
    """The documents of one file whose bytes are ``data``; :class:`Unreadable` says why there are none."""
    if path.suffix.lower() == ".gz":  # Debian's /usr/share/doc keeps most of its texts gzipped
        path, data = path.with_suffix(""), _gunzipped(data)
    kind = kind_of(path, rules)
    if kind == "pdf":
        return _pdf(path, data)
    try:
        text = _decoded(data, rules.encoding)
    except Unreadable as exc:
        if kind is None:  # read by its content, which is not text
            raise Unreadable(f"unsupported file type {path.suffix!r} and not text: {exc}") from None
        raise
    if kind == "markdown":
        title, body = _markdown(text)
    elif kind == "html":
        title, body = _html(text)
    else:
        title, body = "", text
    body = _tidy(body)
    if not body:
        raise Unreadable("no text")
    return [Extracted(title or path.name, body)]


def _gunzipped(data: bytes) -> bytes:
    """The inflated bytes, read no further than the bound: a 1 MB bomb inflating to 1 GB stops at it."""
    import gzip
    import io
    import zlib

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as inflating:
            inflated = inflating.read(MAX_TEXT_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise Unreadable(f"damaged gzip file ({exc})") from None
    if len(inflated) > MAX_TEXT_BYTES:
        raise Unreadable(f"inflates to more than {MAX_TEXT_BYTES:,} bytes (the bound on one file's text)")
    return inflated


def _decoded(data: bytes, encoding: str | None) -> str:
    """The text of ``data``: UTF-8 (a BOM dropped), else ``encoding``; no NUL anywhere (no character of
    a text, it would stay in the corpus), at most :data:`MAX_TEXT_BYTES`."""
    if len(data) > MAX_TEXT_BYTES:
        raise Unreadable(f"more than {MAX_TEXT_BYTES:,} bytes of text (the bound on one file's text)")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise Unreadable(f"binary content (NUL byte at offset {nul}), not text")
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        if encoding is None:
            raise Unreadable(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as again:
            at = again.start
            raise Unreadable(f"not UTF-8 or {encoding} text (byte 0x{data[at]:02x} at offset {at})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _tidy(text: str) -> str:
    """Lines stripped of trailing space, runs of blank lines made one (paragraphs stay apart)."""
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _needs(module: str, package: str) -> Any:
    return require_extra(module, "collection", "reading these files")


def _html(text: str) -> tuple[str, str]:
    """The page's <title> (else its first <h1>) and its visible text, scripts and styles dropped."""
    bs4 = _needs("bs4", "beautifulsoup4")
    soup = bs4.BeautifulSoup(text, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if not title and soup.h1:
        title = soup.h1.get_text(" ", strip=True)
    body = soup.body if soup.body is not None else soup
    return title, "\n".join(" ".join(line.split()) for line in _visible_text(bs4, body).split("\n"))


def _visible_text(bs4: Any, root: Any) -> str:
    """The text under ``root`` in one pass over its tree (no recursion: 60,000 nested divs are fine),
    blocks on lines of their own, inline markup joining its words. Editing the tree instead (a newline
    inserted beside each block) looked each block up among its siblings: quadratic in a page's paragraphs."""
    strings = (bs4.NavigableString, bs4.CData)  # not comments, doctypes or processing instructions
    parts: list[str] = []
    open_tags: list[tuple[bool, Iterator[Any]]] = [(False, iter(root.contents))]
    while open_tags:
        block, children = open_tags[-1]
        child = next(children, None)
        if child is None:
            open_tags.pop()
            if block:
                parts.append("\n")
        elif type(child) in strings:
            parts.append(child)
        elif isinstance(child, bs4.Tag) and child.name not in _DROPPED_TAGS:
            block = child.name in _BLOCK_TAGS
            if block:
                parts.append("\n")
            open_tags.append((block, iter(child.contents)))
    return "".join(parts)


def _markdown(text: str) -> tuple[str, str]:
    """The first heading and the text of every block (markup gone, code kept) in order."""
    markdown_it = _needs("markdown_it", "markdown-it-py")
    tokens = markdown_it.MarkdownIt("commonmark").parse(text)
    title, parts, in_heading = "", [], False
    for token in tokens:
        if token.type == "heading_open":
            in_heading = True
        elif token.type == "heading_close":
            in_heading = False
        elif token.type == "inline":
            words = "".join(child.content if child.type != "softbreak" else "\n" for child in token.children or [])
            if in_heading and not title:
                title = words.strip()
            parts.append(words)
        elif token.type in ("fence", "code_block", "html_block"):
            parts.append(token.content)
    return title, "\n\n".join(parts)


@contextmanager
def _pypdf_log_kept_off_stderr() -> Iterator[None]:
    """pypdf logs its repairs ("EOF marker not found") as warnings, which Python prints on stderr when
    the program set up no logging: a second line beside the command's own. A damaged file is listed as
    unreadable with its reason, so the log adds nothing; it goes to a handler that drops it."""
    import logging

    logger = logging.getLogger("pypdf")
    handler = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _pdf(path: Path, data: bytes) -> list[Extracted]:
    """One document per page with text; a file whose pages hold none (a scan) is unreadable."""
    import io

    pypdf = _needs("pypdf", "pypdf")
    try:
        with _pypdf_log_kept_off_stderr():
            reader = pypdf.PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                raise Unreadable("encrypted PDF")
            meta = reader.metadata
            name = str(meta.title).strip() if meta is not None and meta.title else path.name
            pages = [_tidy(page.extract_text() or "") for page in reader.pages]
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many classes for damaged files; each is a reason to list
        raise Unreadable(f"damaged PDF ({type(exc).__name__}: {exc})") from None
    found = [Extracted(f"{name} (page {n})", text, n) for n, text in enumerate(pages, 1) if text]
    if not found:
        raise Unreadable(f"no text layer on any of its {len(pages)} page(s) (a scan needs OCR first)")
    return found
