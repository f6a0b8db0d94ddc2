"""End to end in a real browser: headless Debian Chromium driven by Selenium.

Opens the list, draws a sample, opens a quilt, checks the highlighted patches, labels it by
keyboard, reloads and sees the label kept, and checks that a page's <script> and onerror
payload is shown as text and never runs; and for a near-duplicate run, a dropped page beside its
kept page, labelled a duplicate by keyboard. Screenshots go to the test's tmp directory (and to
$REVIEW_SCREENSHOTS when set, which is how docs/review-screenshot.png was made).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from review_run import HOSTILE, make_neardup_run, make_run

from quiltdetect.review.data import Run
from quiltdetect.review.labels import LabelStore
from quiltdetect.review.server import ReviewApp, serve_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="Chromium and chromedriver are not installed (run .ci/browser-deps.sh: apt-get install chromium chromium-driver)",
)


@pytest.fixture()
def browser(tmp_path):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver, tmp_path: Path, name: str) -> None:
    driver.save_screenshot(str(tmp_path / f"{name}.png"))
    target = os.environ.get("REVIEW_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(target) / f"{name}.png"))


def test_judging_session_in_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    run = Run.open(make_run(tmp_path / "run"))
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite"))
    server, base = serve_in_thread(app)
    try:
        browser.get(base + "/")
        rows = browser.find_elements(By.CSS_SELECTOR, "#quilts tbody tr")
        assert len(rows) == len(run.quilts) == 3
        shot(browser, tmp_path, "list")

        # a seeded sample, drawn through the form
        browser.find_element(By.NAME, "sample").send_keys("2")
        seed = browser.find_element(By.NAME, "seed")
        seed.clear()
        seed.send_keys("11")
        browser.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
        WebDriverWait(browser, 30).until(lambda d: "sample=2" in d.current_url)
        sampled = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#quilts a.open-quilt")]
        assert len(sampled) == 2 and "sample of 2" in browser.page_source

        # open the hostile quilt from the full list
        browser.get(base + "/?sort=doc_id&order=asc")
        browser.find_element(By.LINK_TEXT, "quilt-0").click()
        assert browser.find_element(By.ID, "current-label").text == "unlabelled"
        text = browser.find_element(By.ID, "quilt-text")
        assert HOSTILE.split(" <img")[0] in text.text and 'onerror="window.__pwned = 2"' in text.text
        assert browser.execute_script("return window.__pwned === undefined")
        assert not browser.find_elements(By.CSS_SELECTOR, "#quilt-text script, #quilt-text img")

        # every source's patch is highlighted in its colour, the payload is not
        marks = text.find_elements(By.TAG_NAME, "mark")
        colours = {m.get_attribute("class") for m in marks}
        assert len(colours) == len(run.by_id["quilt-0"]["sources"])
        background = {m.value_of_css_property("background-color") for m in marks}
        assert len(background) == len(colours)
        assert all("pwned" not in m.text for m in marks)
        source_marks = browser.find_elements(By.CSS_SELECTOR, "#source-1 mark")
        assert source_marks and source_marks[0].get_attribute("class") == "c0"
        shot(browser, tmp_path, "quilt")

        # label by keyboard: `s` saves "spam" and moves to the next quilt of the list
        quilt_url = browser.current_url
        browser.find_element(By.TAG_NAME, "body").send_keys("s")
        WebDriverWait(browser, 30).until(lambda d: "id=quilt-1" in d.current_url)
        browser.get(quilt_url)
        browser.refresh()
        assert browser.find_element(By.ID, "current-label").text == "spam"
        browser.find_element(By.TAG_NAME, "body").send_keys("e")
        browser.switch_to.active_element.send_keys("keyword stuffing; <b>not bold</b>")
        browser.find_element(By.CSS_SELECTOR, "button[value=not_spam]").click()
        WebDriverWait(browser, 30).until(lambda d: "id=quilt-1" in d.current_url)
        browser.get(quilt_url)
        assert browser.find_element(By.ID, "current-label").text == "not spam"
        assert browser.find_element(By.NAME, "note").get_attribute("value") == "keyword stuffing; <b>not bold</b>"
        shot(browser, tmp_path, "labelled")

        browser.get(base + "/summary")
        cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#summary tbody tr td")]
        assert cells[1:5] == ["1", "0", "1", "0"] and cells[5] == "0.0%"
        assert app.store.of_run(run.key)["quilt-0"][0] == "not_spam"
    finally:
        server.shutdown()
        server.server_close()


def test_judging_dropped_pages_in_chromium(browser, tmp_path):
    """A near-duplicate run: the list of dropped pages, one beside its kept page (shared shingles
    marked in both, the payload inert), labelled a duplicate with `d`, and the precision."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    run = Run.open(make_neardup_run(tmp_path / "nd"))
    app = ReviewApp(run, LabelStore(tmp_path / "labels.sqlite"))
    server, base = serve_in_thread(app)
    try:
        browser.get(base + "/?sort=doc_id&order=asc")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#dropped tbody tr")) == len(run.quilts) == 8
        assert "8 dropped pages" in browser.find_element(By.TAG_NAME, "body").text
        browser.find_element(By.LINK_TEXT, "b-0").click()
        assert browser.execute_script("return window.__pwned === undefined")
        assert HOSTILE.split(" <img")[0] in browser.find_element(By.ID, "dropped-text").text
        for side in ("dropped-text", "kept-text"):
            marks = browser.find_elements(By.CSS_SELECTOR, f"#{side} mark")
            assert marks and {m.value_of_css_property("background-color") for m in marks} == {"rgba(255, 216, 168, 1)"}
        shot(browser, tmp_path, "dropped-page")
        page_url = browser.current_url
        browser.find_element(By.TAG_NAME, "body").send_keys("d")
        WebDriverWait(browser, 30).until(lambda d: "id=b-1" in d.current_url)
        browser.get(page_url)
        assert browser.find_element(By.ID, "current-label").text == "duplicate"
        browser.get(base + "/summary")
        cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#precision tbody tr td")]
        assert cells[2:7] == ["1", "1", "0", "0", "100.0%"]
        assert app.store.of_run(run.key)["b-0"][0] == "duplicate"
    finally:
        server.shutdown()
        server.server_close()
