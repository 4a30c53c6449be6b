"""Fuzz: hostile text in the files users open (issue 28 item 6).

Document titles, texts, document and query ids and system names carrying HTML, Markdown links and
spreadsheet formulas go through every workflow that writes a report (compare, diagnose with its
drill-down, tune, rag, evaluate --out). Each report.html, and each report.md rendered by
markdown-it-py with raw HTML allowed (as many Markdown viewers do), is opened in headless Chromium:
nothing runs (no script, no event handler, no javascript: link, no frame), and the payloads are
shown as text. Every CSV cell a spreadsheet would run as a formula starts with ``'``. An ``--out``
that is a symbolic link is refused (the swap would replace the link and leave the folder it named).
Chromium tests skip cleanly without Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from harness import check, run_cli  # tests/fuzz/harness.py

from rankscope.corpora.dataset import Dataset
from rankscope.corpora.export import export_dataset
from rankscope.corpora.trec import write_trec_run
from rankscope.reporting.report import FORMULA_START

MARK = "window.__pwned=1"
TITLES = [
    f"<script>{MARK}</script> wing flow",
    f'<img src=x onerror="{MARK}"> boundary layer',
    f"[click me](javascript:{MARK}) heat transfer",
    f'<svg onload="{MARK}"></svg> shock waves',
    '"><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe> plate',
    '=HYPERLINK("http://example.invalid","x") loads',
]
TEXTS = [
    f"wing flow over a flat plate <b onmouseover='{MARK}'>bold</b> *emph* `code`",
    f"boundary layer of the wing ![img](javascript:{MARK}) <a href='javascript:{MARK}'>a</a>",
    "heat transfer in a supersonic flow | pipe | # not a heading",
    f"shock waves and heat <script>{MARK}</script>",
    "flat plate boundary layer flow @SUM(1+1)",
    "structural loads on a wing -2+3+cmd|' /C calc'!A0",
]
DOC_IDS = [  # ids hold no whitespace (the id rule), so the payloads are written without it
    f"<img/src=x/onerror={MARK}>",
    f"[d](javascript:{MARK})",
    '=HYPERLINK("http://example.invalid")',
    "@SUM(1+1)",
    f"<svg/onload={MARK}>",
    "+cmd|'/C_calc'!A0",
]
QUERIES = {
    f"<script>{MARK}</script>": "wing flow",
    "=1+1": f"heat transfer <img src=x onerror={MARK}>",
    f"[q](javascript:{MARK})": "boundary layer plate",
}
QRELS = {
    f"<script>{MARK}</script>": {DOC_IDS[0]: 1, DOC_IDS[5]: 1},
    "=1+1": {DOC_IDS[2]: 2, DOC_IDS[3]: 1},
    f"[q](javascript:{MARK})": {DOC_IDS[4]: 1, DOC_IDS[1]: 1},
}
RUN_NAME = "x<b>y</b>"  # a --run NAME is shown in every table and figure


def hostile_dataset() -> Dataset:
    corpus = {d: {"title": t, "text": x} for d, t, x in zip(DOC_IDS, TITLES, TEXTS)}
    return Dataset.from_dicts("<i>hostile</i>", corpus, QUERIES, QRELS)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every report folder the workflows write, on the hostile collection."""
    from rankscope.retrieval.registry import make_retriever

    root = tmp_path_factory.mktemp("hostile")
    data = hostile_dataset()
    export_dataset(data, root / "data")
    run = make_retriever("tfidf").index(data.corpus).search(data.queries, k=10)
    write_trec_run(run, root / "run.trec")
    dataset = ["--dataset", str(root / "data")]
    commands = {
        "compare": ["compare", *dataset, "--retrievers", "bm25", "--run", f"{RUN_NAME}={root / 'run.trec'}"],
        "diagnose": ["diagnose", *dataset, "--retriever", "bm25", "--vs", "tfidf", "--depth", "6"],
        "tune": ["tune", *dataset, "--k1", "0.9:1.5:0.6", "--b", "0.4:0.8:0.4", "--folds", "2"],
        "rag": ["rag", *dataset, "--chunking", "words:4:0", "--retrievers", "bm25", "--budget", "8", "16"],
        "evaluate": ["evaluate", str(root / "data" / "qrels.txt"), str(root / "run.trec")],
    }
    folders = {}
    for name, args in commands.items():
        folders[name] = root / f"out-{name}"
        outcome = run_cli(["--quiet", *args, "--out", str(folders[name])])
        assert outcome.code == 0, (name, outcome.err)
    return folders


def reports(written: dict[str, Path]) -> Iterator[tuple[str, Path]]:
    for name, folder in written.items():
        for path in (folder / "report.html", folder / "report.md"):
            if path.is_file():
                yield f"{name}/{path.name}", path


@pytest.mark.slow
def test_every_csv_cell_that_could_run_as_a_formula_is_neutralised(written: dict[str, Path]) -> None:
    seen_hostile = 0
    for folder in written.values():
        for path in sorted(folder.glob("*.csv")):
            with open(path, newline="") as handle:
                for row in csv.reader(handle):
                    for value in row:
                        seen_hostile += value.startswith("'") and value[1:2] in "=+-@"
                        if value.startswith(FORMULA_START):
                            float(value)  # only a plain number (-0.5, a query id -5) may start so
    assert seen_hostile >= 3  # the ids =HYPERLINK(...), @SUM(...), +cmd... were written, neutralised


@pytest.mark.slow
def test_report_md_escapes_html_and_markdown(written: dict[str, Path]) -> None:
    for name, path in reports(written):
        if not name.endswith(".md"):
            continue
        tags = Tags()
        tags.feed(markdown_renderer().render(path.read_text()))
        assert tags.dangers == [], name
        assert {"table", "td", "p"} <= tags.names, name  # rendered as Markdown, tables and all
    diagnose = (written["diagnose"] / "report.md").read_text()
    assert "&lt;script&gt;window.\\_\\_pwned=1&lt;/script&gt;" in diagnose  # shown, as text


def markdown_renderer():  # type: ignore[no-untyped-def]
    """markdown-it-py with GitHub's tables and raw HTML passed through (the dangerous setting)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table")


class Tags(HTMLParser):
    """The element names of a page, and every element or attribute that could run code."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.dangers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        if tag in ("script", "iframe", "object", "embed", "svg"):
            self.dangers.append(tag)
        for key, value in attrs:
            if key.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.dangers.append(f"{tag} {key}={value}")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.binary_location = chromium
    session = webdriver.Chrome(options=options, service=Service(driver))
    yield session
    session.quit()


NOTHING_RUNS = """
return {
  pwned: window.__pwned === 1,
  scripts: document.querySelectorAll('script').length,
  handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
  jsLinks: [...document.querySelectorAll('[href],[src],[xlink\\\\:href]')].filter(e =>
      ['href', 'src', 'xlink:href'].some(n => (e.getAttribute(n) || '').trim().toLowerCase().startsWith('javascript:'))).length,
  frames: document.querySelectorAll('iframe,object,embed').length,
  text: document.body.innerText,
};
"""

FIGURES_SHOWN = """
return [...document.querySelectorAll('svg, img')].filter(e => !e.parentElement.closest('svg')).map(e =>
    [e.tagName.toLowerCase(), e.getBoundingClientRect().width, e.tagName === 'IMG' ? e.naturalWidth : null]);
"""
"""Each figure on the page (an inline SVG of report.html, an image of report.md): its rendered width and,
for an image, the width of the file the browser loaded (0 when it could not load it)."""


@pytest.mark.slow
def test_reports_open_in_chromium_with_nothing_executed(
    written: dict[str, Path], browser: object, tmp_path: Path
) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    renderer = markdown_renderer()
    opened = 0
    for name, path in reports(written):
        page = path
        if name.endswith(".md"):  # rendered beside the report, so its figures load as they would
            page = path.with_name("rendered-md.html")
            page.write_text(f"<!DOCTYPE html><html><body>{renderer.render(path.read_text())}</body></html>")
        browser.get(page.resolve().as_uri())  # type: ignore[attr-defined]
        found = browser.execute_script(NOTHING_RUNS)  # type: ignore[attr-defined]
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert  # type: ignore[attr-defined]  # noqa: B018
        assert not found["pwned"], name
        assert (found["scripts"], found["handlers"], found["jsLinks"], found["frames"]) == (0, 0, 0, 0), name
        opened += 1
        if name.startswith("diagnose"):
            assert f"<script>{MARK}</script>" in found["text"], name  # the payload is shown as text
        figures = browser.execute_script(FIGURES_SHOWN)  # type: ignore[attr-defined]
        assert figures, name  # every report here has plots (the default format: SVG)
        for kind, width, loaded in figures:
            assert width > 100 and loaded != 0, (name, kind, width, loaded)
    assert opened >= 9


@pytest.mark.parametrize("target", ["an earlier report", "a new folder"])
def test_out_through_a_symbolic_link_is_refused(tmp_path: Path, target: str) -> None:
    export_dataset(hostile_dataset(), tmp_path / "data")
    elsewhere = tmp_path / "elsewhere" / "report"
    if target == "an earlier report":
        argv = ["--quiet", "tune", "--dataset", str(tmp_path / "data"), "--k1", "1.2", "--b", "0.75", "--folds", "2"]
        assert run_cli([*argv, "--out", str(elsewhere)]).code == 0
    link = tmp_path / "link"
    link.symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.iterdir()) if elsewhere.exists() else None
    argv = ["--quiet", "tune", "--dataset", str(tmp_path / "data"), "--k1", "1.2", "--b", "0.75", "--folds", "2"]
    check(run_cli([*argv, "--out", str(link)]), "error", "symbolic link")
    assert link.is_symlink()  # the user's link is left as it was
    assert (sorted(p.name for p in elsewhere.iterdir()) if elsewhere.exists() else None) == before
