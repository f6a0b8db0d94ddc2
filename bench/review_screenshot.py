"""Screenshot a judging session on a real quilt run (how docs/review-screenshot.png is made).

    python bench/review_screenshot.py --run /tmp/rev_q10k --out docs/review-screenshot.png [--label 3]

Starts the review tool on a free 127.0.0.1 port with a throwaway labels database, draws the
seeded sample of 100 (seed 1), labels the first N quilts by keyboard and shoots the next one.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from quiltdetect.review.data import Run
from quiltdetect.review.labels import LabelStore
from quiltdetect.review.server import ReviewApp, serve_in_thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--label", type=int, default=3, help="quilts to label (s, n, u in turn) before the shot")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = ReviewApp(Run.open(args.run), LabelStore(Path(tmp) / "labels.sqlite"))
        server, base = serve_in_thread(app)
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run", f"--user-data-dir={tmp}/profile", "--window-size=1500,1000"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        try:
            driver.get(base + "/?sample=100&seed=1")
            driver.find_element(By.CSS_SELECTOR, "a.open-quilt").click()
            for i in range(args.label):
                url = driver.current_url
                driver.find_element(By.TAG_NAME, "body").send_keys("snu"[i % 3])
                WebDriverWait(driver, 30).until(lambda d, u=url: d.current_url != u)
            driver.save_screenshot(args.out)
            driver.get(base + "/summary")
            print(driver.find_element(By.ID, "summary").text)
        finally:
            driver.quit()
            server.shutdown()


if __name__ == "__main__":
    main()
