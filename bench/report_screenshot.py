"""A screenshot of the top of the sizing report at 1280x800, as a reader first sees it.

    python -m bench.report_screenshot warehouse/reports/sizing-report.html docs/report-after.png

Drives the system Chromium through Playwright (its own browser download is not needed);
every request leaving the file is aborted, so the picture is the offline report.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 800


def screenshot(report: Path, png: Path) -> None:
    """Write `png`: the first screen of `report` in Chromium at 1280x800."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.route("**/*", lambda route: route.abort()
                       if not route.request.url.startswith("file:") else route.continue_())
            page.goto(report.resolve().as_uri())
            page.wait_for_load_state("load")
            png.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(png), full_page=False)
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("png", type=Path)
    args = parser.parse_args()
    screenshot(args.report, args.png)
    print(args.png)


if __name__ == "__main__":
    main()
