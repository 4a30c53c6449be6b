"""Reports as Markdown (with PNG files beside it) and as one self-contained HTML file.

A report is a list of blocks (headings, paragraphs, bullet lists, tables,
images) built by a workflow; :func:`write_report` renders it both ways. The
HTML embeds every plot as base64 so the single file can be mailed or attached
to a ticket and still show its pictures.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rankscope.core.fileio import PathLike, atomic_write
from rankscope.workflows.tables import cell, markdown_table

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
div.scroll { overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption, p.caption { color: #555; font-size: .9em; }
"""


@dataclass(frozen=True)
class Block:
    """One element of a report; ``kind`` is heading, paragraph, bullets, table, image or raw
    (``html`` for the page, ``text`` for report.md)."""

    kind: str
    text: str = ""
    items: tuple[str, ...] = ()
    frame: pd.DataFrame | None = None
    index: bool = True
    name: str = ""
    png: bytes = b""
    html: str = ""


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
        self.blocks.append(Block("table", text=caption, frame=frame.copy(), index=index))
        return self

    def image(self, name: str, png: bytes, caption: str) -> Report:
        """A PNG plot; ``name`` is its file name beside report.md (e.g. ``hit_at_k.png``)."""
        self.blocks.append(Block("image", text=caption, name=name, png=png))
        return self

    def raw(self, html: str, markdown: str) -> Report:
        """Content a workflow renders itself, escaping included (diagnose's drill-down with its links)."""
        self.blocks.append(Block("raw", text=markdown, html=html))
        return self

    @property
    def images(self) -> dict[str, bytes]:
        return {b.name: b.png for b in self.blocks if b.kind == "image"}

    def _repr_html_(self) -> str:
        """Jupyter shows a report inline: the HTML body with its plots."""
        return f"<h1>{html.escape(self.title)}</h1>\n{html_body(self)}"


def to_markdown(report: Report) -> str:
    """Markdown; images are linked by file name, so write them beside it (:func:`write_report`)."""
    out = [f"# {report.title}", ""]
    for block in report.blocks:
        if block.kind == "heading":
            out += [f"## {block.text}", ""]
        elif block.kind == "paragraph":
            out += [block.text, ""]
        elif block.kind == "bullets":
            out += [f"- {item}" for item in block.items] + [""]
        elif block.kind == "table":
            out += [markdown_table(block.frame, index=block.index), ""]
            if block.text:
                out += [block.text, ""]
        elif block.kind == "image":
            out += [f"![{block.text}]({block.name})", "", f"*{block.text}*", ""]
        elif block.kind == "raw":
            out += [block.text, ""]
    return "\n".join(out)


def to_html(report: Report) -> str:
    """One self-contained HTML page: inline CSS, tables, plots as base64 data URIs."""
    title = html.escape(report.title)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{title}</title><style>{_STYLE}</style></head><body>",
            f"<h1>{title}</h1>",
            html_body(report),
            "</body></html>",
        ]
    )


def html_body(report: Report) -> str:
    """The blocks as HTML elements (no page wrapper, no title)."""
    esc = html.escape
    out = []
    for block in report.blocks:
        if block.kind == "heading":
            out.append(f"<h2>{esc(block.text)}</h2>")
        elif block.kind == "paragraph":
            out.append(f"<p>{esc(block.text)}</p>")
        elif block.kind == "bullets":
            out.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in block.items) + "</ul>")
        elif block.kind == "table":
            out.append(_html_table(block.frame, block.index))
            if block.text:
                out.append(f'<p class="caption">{esc(block.text)}</p>')
        elif block.kind == "image":
            data = base64.b64encode(block.png).decode("ascii")
            out.append(
                f'<figure><img alt="{esc(block.text)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{esc(block.text)}</figcaption></figure>"
            )
        elif block.kind == "raw":
            out.append(block.html)
    return "\n".join(out)


def _html_table(frame: pd.DataFrame, index: bool) -> str:
    esc = html.escape
    columns = ([str(frame.index.name or "")] if index else []) + [str(c) for c in frame.columns]
    numeric = [False] * index + [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    rows = []
    for label, values in zip(frame.index, frame.itertuples(index=False, name=None)):
        cells = ([label] if index else []) + list(values)
        tds = "".join(
            f'<td class="num">{esc(cell(v))}</td>' if num else f"<td>{esc(cell(v))}</td>"
            for v, num in zip(cells, numeric)
        )
        rows.append(f"<tr>{tds}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'  # wide tables scroll instead of overflowing the page


def write_report(report: Report, out_dir: PathLike) -> list[Path]:
    """Write report.md, report.html and every plot as PNG into ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    written = []
    for name, png in report.images.items():
        written.append(write_bytes(out_dir / name, png))
    written.append(write_text(out_dir / "report.md", to_markdown(report)))
    written.append(write_text(out_dir / "report.html", to_html(report)))
    return written


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
    from rankscope.workflows.runs import file_stem

    paths = []
    for name, run in runs.items():
        path = out / f"run.{file_stem(name)}.trec"
        write_trec_run(run, path, tag=file_stem(name))
        paths.append(path)
    return paths


def write_csv(frame: pd.DataFrame, path: Path, index: bool = True) -> Path:
    """A CSV written atomically; floats use the shortest text that reads back to the same number."""
    with atomic_write(path) as handle:
        frame.to_csv(handle, index=index, lineterminator="\n")
    return path
