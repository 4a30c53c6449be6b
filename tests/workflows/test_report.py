"""Tables and reports render the numbers they are given, and the HTML stands alone."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pandas as pd

from rankscope.workflows import plots
from rankscope.workflows.report import Report, to_html, to_markdown, write_report
from rankscope.workflows.tables import markdown_table, records, text_table, to_json

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


def test_report_html_embeds_plots_and_markdown_links_files(tmp_path) -> None:
    curves = {"bm25": pd.DataFrame({"hit": [0.2, 0.5], "recall": [0.1, 0.4]}, index=[1, 10])}
    png = plots.cutoff_curves(curves)
    assert png.startswith(b"\x89PNG") and png_shape(png)[0] > 100
    report = (
        Report("R <1>").heading("Tables").table(FRAME, caption="cap").bullets(["f & g"]).image("c.png", png, "curves")
    )
    html = to_html(report)
    assert base64.b64encode(png).decode() in html
    assert "<title>R &lt;1&gt;</title>" in html and "<li>f &amp; g</li>" in html
    assert 'src="http' not in html and "<link" not in html and "<script" not in html
    assert '<td class="num">0.1235</td>' in html
    md = to_markdown(report)
    assert "![curves](c.png)" in md and "## Tables" in md
    written = write_report(report, tmp_path / "out")
    assert sorted(p.name for p in written) == ["c.png", "report.html", "report.md"]
    assert (tmp_path / "out" / "c.png").read_bytes() == png


def test_other_plots_render() -> None:
    diff = {"tfidf": pd.Series([0.1, -0.2, 0.0]), "w2v": pd.Series([0.3, 0.0, -0.1])}
    assert png_shape(plots.per_query_difference(diff, "ndcg@10", "bm25"))[1] > 500
    values = np.arange(6.0).reshape(2, 3)
    assert png_shape(plots.heatmap(values, [0.5, 1.0], [0.0, 0.5, 1.0], (1.0, 1.0), (0.5, 0.0), "ndcg@10"))[0] > 100
    dist = {"a": pd.Series({"1": 3, "2-3": 1, "none": 2}), "b": pd.Series({"1": 1, "2-3": 4, "none": 0})}
    assert png_shape(plots.rank_histogram(dist))[0] > 100
    breakdown = pd.DataFrame(
        {"hit_share": [0.5, 0.8], "ranking_miss_share": [0.4, 0.1], "recall_miss_share": [0.1, 0.1]}, index=[1, 10]
    )
    assert png_shape(plots.miss_bars({"a": breakdown, "b": breakdown}))[0] > 100


def test_json_is_strict() -> None:
    frame = pd.DataFrame({"v": [np.float64(0.5), np.nan], "n": pd.array([3, None], dtype="Int64")}, index=["a", "b"])
    text = to_json({"rows": records(frame), "k": np.int64(7)})
    assert "NaN" not in text
    assert json.loads(text) == {
        "rows": [{"index": "a", "v": 0.5, "n": 3}, {"index": "b", "v": None, "n": None}],
        "k": 7,
    }
