"""Tables and reports render the numbers they are given, and the HTML stands alone."""

from __future__ import annotations

import io
import json
import random
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.reporting import plots, rendering
from rankscope.reporting.report import Report, image_block, table_block, to_html, to_markdown, write_report
from rankscope.reporting.tables import markdown_table, records, text_table, to_json

FRAME = pd.DataFrame({"name": ["a|b", "c"], "ndcg@10": [0.123456, np.nan]}, index=pd.Index(["x", "y"], name="id"))


def test_text_table_aligns_and_rounds() -> None:
    lines = text_table(FRAME).splitlines()
    assert lines[0].split() == ["id", "name", "ndcg@10"]
    assert lines[2].endswith("0.1235") and lines[2].startswith("x   a|b")
    assert len(lines) == 4 and lines[3].rstrip() == "y   c"


def test_markdown_table_escapes_pipes() -> None:
    md = markdown_table(FRAME)
    assert md.splitlines()[0] == "| id | name | ndcg@10 |"
    assert "| x | a\\|b | 0.1235 |" in md
    assert "| y | c |  |" in md


def png_shape(data: bytes) -> tuple[int, ...]:
    from matplotlib.image import imread

    return imread(io.BytesIO(data), format="png").shape


def svg_texts(svg: bytes | str) -> list[str]:
    """Every text of an SVG (matplotlib writes text as <text> with svg.fonttype none)."""
    root = ET.fromstring(svg)
    return ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]


CURVES = {"bm25": pd.DataFrame({"hit": [0.2, 0.5], "recall": [0.1, 0.4]}, index=[1, 10])}


@pytest.mark.slow
def test_plot_renders_png_svg_pdf_with_the_dataset_in_the_title() -> None:
    plot = plots.cutoff_curves(CURVES, dataset="cranfield")
    png, svg, pdf = (plot.render(f) for f in ("png", "svg", "pdf"))
    assert png.startswith(b"\x89PNG") and png_shape(png)[0] > 100
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    texts = svg_texts(svg)
    assert "Hit@K and Recall@K - cranfield" in texts and "Recall@K" in texts
    # reproducible bytes: no dates, fixed ids; the same figure drawn again gives the same files
    again = plots.cutoff_curves(CURVES, dataset="cranfield")
    assert [again.render(f) for f in ("png", "svg", "pdf")] == [png, svg, pdf]
    assert b"CreationDate" not in pdf and b"<dc:date>" not in svg
    # the layout is solved once whichever format comes first: the files do not depend on the order
    reversed_order = plots.cutoff_curves(CURVES, dataset="cranfield")
    assert [reversed_order.render(f) for f in ("pdf", "svg", "png")] == [pdf, svg, png]


@pytest.mark.slow
def test_report_html_inlines_svg_and_markdown_links_files(tmp_path) -> None:
    plot = plots.cutoff_curves(CURVES, dataset="cranfield")
    other = plots.rank_histogram({"a": pd.Series({"1": 3, "none": 2})}, dataset="cisi")
    report = (
        Report("R <1>")
        .heading("Tables")
        .table(FRAME, caption="cap")
        .bullets(["f & g"])
        .image("c", plot, "curves")
        .row(table_block(FRAME), image_block("h", other, "ranks"))
    )
    html = to_html(report)
    assert html.count("<svg") == 2 and "<img" not in html and "<?xml" not in html
    assert plot.svg_inline(prefix="c-") in html and '<div class="row">' in html
    assert "<title>R &lt;1&gt;</title>" in html and "<li>f &amp; g</li>" in html
    assert 'src="http' not in html and "<link" not in html and "<script" not in html
    assert '<td class="num">0.1235</td>' in html
    # two inline SVGs never share an id (each figure's prefixed by its name), and every reference resolves
    ids = re.findall(r'id="([^"]+)"', html)
    referenced = set(re.findall(r"url\(#([^)]+)\)", html)) | set(re.findall(r'href="#([^"]+)"', html))
    assert len(ids) == len(set(ids)) and referenced <= set(ids)
    md = to_markdown(report)  # the default figures: SVG alone
    assert "![curves](c.svg)" in md and "## Tables" in md and "![ranks](h.svg)" in md
    assert "![curves](c.png)" in to_markdown(report, ("svg", "png"))  # a PNG, when written, is what it shows
    assert "![curves](c.svg)" in to_markdown(report, ("svg", "pdf"))
    assert "[curves](c.pdf)" in to_markdown(report, ("pdf",)) and "![curves]" not in to_markdown(report, ("pdf",))
    written = write_report(report, tmp_path / "out", ("svg", "pdf"))
    assert sorted(p.name for p in written) == ["c.pdf", "c.svg", "h.pdf", "h.svg", "report.html", "report.md"]
    assert (tmp_path / "out" / "c.svg").read_bytes() == plot.render("svg")
    assert repr(report) == "Report('R <1>': 5 blocks, 2 plots)"


def test_figure_formats_are_checked() -> None:
    assert rendering.check_formats(["svg", "png"]) == ("svg", "png")
    for bad in ([], ["jpg"], ["png", "png"]):
        with pytest.raises(RankscopeError, match="figure formats"):
            rendering.check_formats(bad)


@pytest.mark.slow
def test_other_plots_render() -> None:
    diff = {"tfidf": pd.Series([0.1, -0.2, 0.0]), "w2v": pd.Series([0.3, 0.0, -0.1])}
    plot = plots.per_query_difference(diff, "ndcg@10", "bm25", dataset="cranfield")
    assert png_shape(plot.render("png"))[1] > 500
    values = np.arange(6.0).reshape(2, 3)
    heat = plots.heatmap(values, [0.5, 1.0], [0.0, 0.5, 1.0], (1.0, 1.0), (0.5, 0.0), "ndcg@10", dataset="cisi")
    assert "ndcg@10 over the grid - cisi" in svg_texts(heat.render("svg"))
    dist = {"a": pd.Series({"1": 3, "2-3": 1, "none": 2}), "b": pd.Series({"1": 1, "2-3": 4, "none": 0})}
    assert png_shape(plots.rank_histogram(dist, dataset="x").render("png"))[0] > 100
    breakdown = pd.DataFrame(
        {"hit_share": [0.5, 0.8], "ranking_miss_share": [0.4, 0.1], "recall_miss_share": [0.1, 0.1]}, index=[1, 10]
    )
    assert png_shape(plots.miss_bars({"a": breakdown, "b": breakdown}, dataset="x").render("png"))[0] > 100


def test_json_is_strict() -> None:
    frame = pd.DataFrame({"v": [np.float64(0.5), np.nan], "n": pd.array([3, None], dtype="Int64")}, index=["a", "b"])
    text = to_json({"rows": records(frame), "k": np.int64(7)})
    assert "NaN" not in text
    assert json.loads(text) == {
        "rows": [{"index": "a", "v": 0.5, "n": 3}, {"index": "b", "v": None, "n": None}],
        "k": 7,
    }


def test_md_escape_returns_plain_text_as_it_is_and_escapes_the_rest_as_its_full_rule() -> None:
    from rankscope.reporting.tables import md_escape

    inline = re.compile(r"[\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")

    def full_rule(text: str) -> str:  # the rule applied to every text, with no shortcut
        text = " ".join(text.split("\n")).replace("\r", " ")
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return inline.sub(lambda m: "\\" + m[0], text)

    rng = random.Random(3)
    alphabet = "ab9 _-.é#\\`*[]|~&<>\n\r()!"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    assert [md_escape(t) for t in texts] == [full_rule(t) for t in texts]
    assert md_escape("recall_loss 0.25") == "recall_loss 0.25" and md_escape(7) == "7"
    assert md_escape("_x_ <b>") == "\\_x\\_ &lt;b&gt;"


def test_plots_are_drawn_when_first_needed() -> None:
    curves = {"a": pd.DataFrame({"hit": [0.2, 0.6], "recall": [0.1, 0.4]}, index=[1, 10])}
    plot = plots.cutoff_curves(curves, dataset="d")
    assert repr(plot) == "Plot(not drawn yet)"  # a report's text is written without drawing it
    assert plot.title == "Hit@K and Recall@K - d"  # asked for: drawn
    assert repr(plot) == "Plot('Hit@K and Recall@K - d', 2 axes)" and len(plot.figure.axes) == 2


def test_each_format_draws_the_figure_once(monkeypatch) -> None:
    """The layout is solved before the first format and no engine is left on the figure: savefig draws it
    once into the file, not first with rendering off as it does for a figure with a layout engine."""
    from matplotlib.figure import Figure

    drawn: list[str] = []
    draw = Figure.draw
    monkeypatch.setattr(
        Figure, "draw", lambda fig, renderer: (drawn.append(type(renderer).__name__), draw(fig, renderer))
    )
    plot = plots.precision_recall({"a": pd.Series([0.9, 0.5, 0.2], index=[0.0, 0.5, 1.0])}, dataset="d")
    for fmt in ("svg", "png", "svg"):
        plot.render(fmt)
    assert drawn == ["MixedModeRenderer", "RendererAgg"]  # SVG, then PNG; the second SVG is kept bytes


def test_raw_sections_are_made_when_the_page_is_written_and_figures_fill_their_marks() -> None:
    from rankscope.reporting.report import page_without_figures

    made: list[str] = []

    def section(kind: str) -> str:
        made.append(kind)
        return f"<p>{kind} <!--figure not a mark--></p>" if kind == "html" else f"{kind} section"

    curves = {"a": pd.DataFrame({"hit": [0.2, 0.6], "recall": [0.1, 0.4]}, index=[1, 10])}
    report = Report("t").image("curves", plots.cutoff_curves(curves, dataset="d"), "the curves")
    report.raw(lambda: section("html"), lambda: section("markdown"))
    assert made == []
    assert to_markdown(report).endswith("markdown section\n") and made == ["markdown"]
    page = page_without_figures(report)
    assert "<svg" not in page.text and made == ["markdown", "html"]
    inline = report.images["curves"].svg_inline(prefix="curves-")
    filled = page.filled({"curves": inline})
    assert filled == to_html(report) and filled.count(inline) == 1
    assert "<!--figure not a mark-->" in filled  # a mark is a random token no text holds


def test_diagnose_report_makes_its_drill_down_only_when_written(monkeypatch) -> None:
    import importlib

    from tests.workflows.tiny_collection import DATA

    workflow = importlib.import_module("rankscope.workflows.diagnose.workflow")
    result = importlib.import_module("rankscope.workflows.diagnose.result")
    calls: list[str] = []
    real = result.drilldown_html
    monkeypatch.setattr(result, "drilldown_html", lambda *args: calls.append("html") or real(*args))
    report = result.build_report(workflow.diagnose(DATA, "bm25", vs="tfidf", depth=5))
    assert calls == []  # building the report (as the child drawing its figures does) makes no drill-down
    assert 'id="drilldown"' in to_html(report) and calls == ["html"]
