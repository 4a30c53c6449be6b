"""The labelling page in a real Chromium (Debian's chromium and chromium-driver, driven by Selenium):
ten pairs labelled with the keyboard, one undone, the page reloaded, the server killed and restarted,
and every label still there; a document holding <script> and an onerror attribute runs nothing."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankscope.workflows.collection.labels import all_labels
from tests.workflows.collection.labelled import sampled_collection, start_label_page

webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver (.ci/run installs them)"
    ),
]

TEXTS = {
    f"note{i:02d}": f"Ferry timetable note {i}: the {word} ferry leaves at {i} o'clock from pier {i % 3}."
    for i, word in enumerate("red blue green amber violet white black grey pink gold teal cyan".split())
}
QUESTIONS = {"q1": "when does the red ferry leave", "q2": "which ferry leaves from pier 2", "q3": "ferry timetable"}
PAYLOAD = 'Tide <script>window.pwned = "script"</script> <img src="x" onerror="window.pwned = \'onerror\'"> tables'


@pytest.fixture()
def browser() -> Iterator[object]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()


def counts(driver: object, text: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "counts").text.startswith(text))


def shown_pair(driver: object) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "query-id").text, driver.find_element(By.ID, "doc-id").text


def press(driver: object, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def test_keyboard_labels_survive_undo_reload_and_a_killed_server(tmp_path: Path, browser: object) -> None:
    folder = sampled_collection(tmp_path, TEXTS, QUESTIONS, depth=6, budget=14)
    process, url = start_label_page(folder)
    try:
        browser.get(url)
        counts(browser, "0 of 14 labelled")
        given = {}
        for n in range(10):
            pair = shown_pair(browser)
            grade = "3210"[n % 4]
            press(browser, grade)
            counts(browser, f"{n + 1} of 14 labelled")
            given[pair] = int(grade)
        browser.save_screenshot(os.environ.get("RANKSCOPE_SCREENSHOT", str(tmp_path / "page-1400.png")))
        press(browser, "u")
        counts(browser, "9 of 14 labelled")
        undone = shown_pair(browser)  # the undone pair is shown again
        assert undone == list(given)[-1]
        del given[undone]
        browser.refresh()
        counts(browser, "9 of 14 labelled")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    saved = all_labels(folder)
    assert {(q, d): g for q, d, g in zip(saved["query_id"], saved["doc_id"], saved["relevance"])} == given
    assert set(saved["source"]) == {"human:alice"}
    process, url = start_label_page(folder)
    try:
        browser.get(url)
        counts(browser, "9 of 14 labelled")
        assert shown_pair(browser) == undone
    finally:
        process.terminate()
        process.wait()


def test_a_document_with_script_and_onerror_runs_nothing(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By

    texts = {"tides": PAYLOAD, "other": "Tide tables for the harbour <b>bold</b>"}
    folder = sampled_collection(tmp_path, texts, {"q1": "tide tables <script>window.pwned='query'</script>"}, depth=2)
    process, url = start_label_page(folder)
    try:
        browser.get(url)
        counts(browser, "0 of 2 labelled")
        seen = set()
        for n in range(2):
            body = browser.find_element(By.ID, "doc-text")
            seen.add(body.text)
            assert browser.execute_script("return window.pwned === undefined")
            assert body.find_elements(By.CSS_SELECTOR, "script, img, b") == []
            assert [m.text for m in body.find_elements(By.TAG_NAME, "mark")][:1] == ["Tide"]
            assert "<script>" in browser.find_element(By.ID, "query").text
            press(browser, "1")
            counts(browser, f"{n + 1} of 2 labelled")
        assert PAYLOAD in seen  # shown as the text it is
        assert browser.execute_script("return window.pwned === undefined")
        assert browser.find_element(By.ID, "finished").is_displayed()
    finally:
        process.terminate()
        process.wait()
