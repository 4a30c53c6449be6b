"""Reports as Markdown (with the plots as files beside it) and as one self-contained HTML file.

A report is a list of blocks (headings, paragraphs, bullet lists, tables,
plots, rows of blocks side by side) built by a workflow; :func:`write_report`
renders it both ways and writes every plot in the figure formats asked for
(PNG, SVG, PDF). The HTML holds every plot as inline SVG (vector, searchable
text), so the single file can be mailed or attached to a ticket and still show
its pictures.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.fileio import PathLike, atomic_write
from rankscope.reporting.rendering import DEFAULT_FIGURES, Plot
from rankscope.reporting.tables import cell, markdown_table, md_block, md_escape

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1360px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
div.scroll { overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: .25em .5em; vertical-align: top; }
th { background: #f0f0f0; }
td { max-width: 36em; overflow-wrap: break-word; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption, p.caption { color: #555; font-size: .9em; }
div.row { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
div.row > div { flex: 0 1 auto; max-width: 62%; min-width: 0; }
div.row > figure { flex: 1 1 360px; margin: .8em 0; min-width: 0; }
div.row p.caption { width: 0; min-width: 100%; }  /* a long caption wraps to its table, never widens it */
section { border-top: 1px solid #999; margin-top: 1.5em; }
mark { background: #ffe27a; padding: 0 .1em; }
.query { font-style: italic; }
"""
"""The one style of every report page, the drill-down's sections and highlights included."""

Made = str | Callable[[], str]
"""A raw block's content, or what makes it when a page is written: a costly section (diagnose's drill-down)
is made only by the process writing report.md and report.html, never by the forked child drawing the
figures (:mod:`rankscope.reporting.finish`)."""


def made(content: Made) -> str:
    """The content itself (made now if it is made on demand)."""
    return content() if callable(content) else content


@dataclass(frozen=True)
class Block:
    """One element of a report; ``kind`` is heading, paragraph, bullets, table, image, raw
    (``html`` for the page, ``markdown`` for report.md, each :data:`Made`) or row (``children`` side by
    side on the page)."""

    kind: str
    text: str = ""
    items: tuple[str, ...] = ()
    frame: pd.DataFrame | None = None
    index: bool = True
    name: str = ""
    plot: Plot | None = None
    html: Made = ""
    markdown: Made = ""
    children: tuple[Block, ...] = ()


def table_block(frame: pd.DataFrame, caption: str = "", index: bool = True) -> Block:
    """A table (a copy of ``frame``) with its caption below."""
    return Block("table", text=caption, frame=frame.copy(), index=index)


def image_block(name: str, plot: Plot, caption: str) -> Block:
    """A plot; ``name`` is its file stem beside report.md (``hit_at_k`` -> hit_at_k.png/.svg/.pdf)."""
    return Block("image", text=caption, name=name, plot=plot)


@dataclass
class Report:
    """An ordered list of blocks with a title; the builder methods append and return self."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def heading(self, text: str) -> Report:
        self.blocks.append(Block("heading", text=text))
        return self

    def paragraph(self, text: str) -> Report:
        self.blocks.append(Block("paragraph", text=text))
        return self

    def bullets(self, items: list[str]) -> Report:
        self.blocks.append(Block("bullets", items=tuple(items)))
        return self

    def table(self, frame: pd.DataFrame, caption: str = "", index: bool = True) -> Report:
        self.blocks.append(table_block(frame, caption, index))
        return self

    def image(self, name: str, plot: Plot, caption: str) -> Report:
        """A plot (see :func:`image_block`)."""
        self.blocks.append(image_block(name, plot, caption))
        return self

    def row(self, *blocks: Block) -> Report:
        """Blocks side by side on the page (wrapping when narrow), e.g. a table and the plot that explains it;
        one after the other in report.md."""
        self.blocks.append(Block("row", children=blocks))
        return self

    def raw(self, html: Made, markdown: Made) -> Report:
        """Content a workflow renders itself, escaping included (diagnose's drill-down with its links); each
        text or the function making it when the page is written (:data:`Made`)."""
        self.blocks.append(Block("raw", html=html, markdown=markdown))
        return self

    @property
    def images(self) -> dict[str, Plot]:
        """Every plot by file stem, rows included."""
        return {b.name: b.plot for b in _flat(self.blocks) if b.kind == "image" and b.plot is not None}

    def __repr__(self) -> str:
        """Short, so that Jupyter's text/plain beside the HTML is one line, not every table and plot."""
        return f"Report({self.title!r}: {len(self.blocks)} blocks, {len(self.images)} plots)"

    def _repr_html_(self) -> str:
        """Jupyter shows a report inline: the HTML body with its plots."""
        return f"<h1>{html.escape(self.title)}</h1>\n{html_body(self)}"


def _flat(blocks: Sequence[Block]) -> Iterator[Block]:
    for block in blocks:
        yield block
        yield from _flat(block.children)


def image_file(name: str, formats: Sequence[str]) -> str:
    """The file report.md shows for a plot: PNG if written, else SVG, else the PDF (linked)."""
    return f"{name}.{next(f for f in ('png', 'svg', 'pdf') if f in formats)}"


def to_markdown(report: Report, formats: Sequence[str] = DEFAULT_FIGURES) -> str:
    """Markdown; plots are linked by file name (:func:`image_file`), so write them beside it (:func:`write_report`)."""
    return "\n".join([f"# {md_escape(report.title)}", "", *_markdown_blocks(report.blocks, formats)])


def _markdown_blocks(blocks: Sequence[Block], formats: Sequence[str]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if block.kind == "heading":
            out += [f"## {md_escape(block.text)}", ""]
        elif block.kind == "paragraph":
            out += [md_block(block.text), ""]
        elif block.kind == "bullets":
            out += [f"- {md_escape(item)}" for item in block.items] + [""]
        elif block.kind == "table":
            out += [markdown_table(block.frame, index=block.index), ""]
            if block.text:
                out += [md_block(block.text), ""]
        elif block.kind == "image":
            file, text = image_file(block.name, formats), md_escape(block.text)
            link = f"[{text}]({file})" if file.endswith(".pdf") else f"![{text}]({file})"
            out += [link, "", f"*{text}*", ""]
        elif block.kind == "raw":
            out += [made(block.markdown), ""]
        elif block.kind == "row":
            out += _markdown_blocks(block.children, formats)
    return out


def to_html(report: Report) -> str:
    """One self-contained HTML page: inline CSS, tables, plots as inline SVG."""
    return page_without_figures(report).filled(
        {name: plot.svg_inline(prefix=f"{name}-") for name, plot in report.images.items()}
    )


@dataclass(frozen=True)
class Page:
    """An HTML page written before its figures are drawn: a mark where each goes (a comment holding a random
    token, which no text of the page can hold), filled with each figure's inline SVG when they are."""

    text: str
    marks: dict[str, str]

    def filled(self, inline: Mapping[str, str]) -> str:
        """The page with each figure's inline SVG (by name, :meth:`Plot.svg_inline`) at its mark."""
        text = self.text
        for name, mark in self.marks.items():
            text = text.replace(mark, inline[name])
        return text


def page_without_figures(report: Report) -> Page:
    """The page of :func:`to_html` with a mark where each figure goes (see :class:`Page`)."""
    token = secrets.token_hex(16)
    marks = {name: f"<!--figure {token} {name}-->" for name in report.images}
    title = html.escape(report.title)
    text = "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{title}</title><style>{_STYLE}</style></head><body>",
            f"<h1>{title}</h1>",
            _html_blocks(report.blocks, marks.__getitem__),
            "</body></html>",
        ]
    )
    return Page(text, marks)


def html_body(report: Report) -> str:
    """The blocks as HTML elements (no page wrapper, no title)."""
    return _html_blocks(report.blocks, lambda name: report.images[name].svg_inline(prefix=f"{name}-"))


def _html_blocks(blocks: Sequence[Block], figure: Callable[[str], str]) -> str:
    """The blocks as HTML, each plot's SVG element given by ``figure(name)``."""
    esc = html.escape
    out = []
    for block in blocks:
        if block.kind == "heading":
            out.append(f"<h2>{esc(block.text)}</h2>")
        elif block.kind == "paragraph":
            out.append(f"<p>{esc(block.text)}</p>")
        elif block.kind == "bullets":
            out.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in block.items) + "</ul>")
        elif block.kind == "table":
            caption = f'<p class="caption">{esc(block.text)}</p>' if block.text else ""
            out.append(f"<div>{_html_table(block.frame, block.index)}{caption}</div>")
        elif block.kind == "image":
            out.append(
                f'<figure role="img" aria-label="{esc(block.text)}">'
                f"{figure(block.name)}"
                f"<figcaption>{esc(block.text)}</figcaption></figure>"
            )
        elif block.kind == "raw":
            out.append(made(block.html))
        elif block.kind == "row":
            out.append(f'<div class="row">{_html_blocks(block.children, figure)}</div>')
    return "\n".join(out)


def _html_table(frame: pd.DataFrame, index: bool) -> str:
    columns = ([str(frame.index.name or "")] if index else []) + [str(c) for c in frame.columns]
    numeric = [False] * index + [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    rows = (
        ([label] if index else []) + list(values)
        for label, values in zip(frame.index, frame.itertuples(index=False, name=None))
    )
    return html_table(columns, rows, numeric)


def html_table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    numeric: Sequence[bool] | None = None,
    raw: frozenset[str] = frozenset(),
) -> str:
    """The one HTML table of every report: ``numeric`` columns right-aligned (None: each number
    cell is), ``raw`` columns hold HTML already and every other cell is escaped."""
    esc = html.escape
    # break opportunities after _ in headers and , in cells: long names and specs wrap at a word
    # boundary instead of widening the table past the page
    head = "".join(f"<th>{esc(str(c)).replace('_', '_<wbr>')}</th>" for c in header)
    body = []
    for values in rows:
        tds = []
        for i, (name, value) in enumerate(zip(header, values)):
            number = _is_number(value) if numeric is None else numeric[i]
            if name in raw:
                tds.append(f"<td>{value}</td>")
            elif number:
                tds.append(f'<td class="num">{esc(cell(value))}</td>')
            else:
                tds.append(f"<td>{esc(cell(value)).replace(',', ',<wbr>')}</td>")
        body.append(f"<tr>{''.join(tds)}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'  # wide tables scroll instead of overflowing the page


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def write_report(report: Report, out_dir: PathLike, formats: Sequence[str] = DEFAULT_FIGURES) -> list[Path]:
    """Write report.md, report.html and every plot in each of ``formats`` into ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    written, inline = write_figures(report.images, out_dir, formats)
    written.append(write_text(out_dir / "report.md", to_markdown(report, formats)))
    written.append(write_text(out_dir / "report.html", page_without_figures(report).filled(inline)))
    return written


def write_figures(
    images: Mapping[str, Plot], out_dir: Path, formats: Sequence[str]
) -> tuple[list[Path], dict[str, str]]:
    """Every plot of a report (its ``images``) drawn and written into ``out_dir`` in each of ``formats``: the
    files, and each plot's SVG element for report.html by name (:meth:`Page.filled`)."""
    written, inline = [], {}
    for name, plot in images.items():
        written += [write_bytes(out_dir / f"{name}.{fmt}", plot.render(fmt)) for fmt in formats]
        inline[name] = plot.svg_inline(prefix=f"{name}-")
    return written, inline


def write_text(path: Path, text: str) -> Path:
    with atomic_write(path) as handle:
        handle.write(text)
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    with atomic_write(path, "wb") as handle:
        handle.write(data)
    return path


def write_runs(runs: Mapping[str, pd.DataFrame], out: Path) -> list[Path]:
    """Each system's run as ``run.<name>.trec`` (the name made file-safe, also the run tag)."""
    from rankscope.corpora.trec import write_trec_run

    paths = []
    for name, run in runs.items():
        path = out / f"run.{file_stem(name)}.trec"
        write_trec_run(run, path, tag=file_stem(name))
        paths.append(path)
    return paths


def file_stem(spec: str) -> str:
    """A file-name-safe form of a retriever spec: ``bm25:k1=0.9,b=0.4`` -> ``bm25_k1=0.9_b=0.4``."""
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", spec).strip("_") or "retriever"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula in a CSV cell (OWASP's CSV injection list)."""
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(value: object) -> object:
    """A text cell a spreadsheet would run as a formula (``=HYPERLINK(...)``, ``@SUM(...)``,
    ``-2+3+cmd|...``) with a ``'`` in front, which spreadsheets show as text; numbers, text that is a
    plain number (an id ``-5``) and every other value unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(frame: pd.DataFrame, path: Path, index: bool = True) -> Path:
    """A CSV written atomically; floats use the shortest text that reads back to the same number. Text
    cells that would start a spreadsheet formula get a leading ``'`` (:func:`spreadsheet_safe`): every
    CSV a workflow writes is meant to be opened in a spreadsheet (docs/workflows.md)."""
    safe = frame.copy()
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(spreadsheet_safe)
    if index and not isinstance(safe.index, pd.MultiIndex) and not pd.api.types.is_numeric_dtype(safe.index):
        safe.index = safe.index.map(spreadsheet_safe)
    if not isinstance(safe.columns, pd.MultiIndex):
        safe.columns = safe.columns.map(spreadsheet_safe)
    with atomic_write(path) as handle:
        safe.to_csv(handle, index=index, lineterminator="\n")
    return path
